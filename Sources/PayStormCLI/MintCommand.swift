extension Command {
    /// `paystorm mint` (being built).
    static let mint = Command(name: "mint", summary: "(being built)", help: "paystorm mint: being built\n") { _ in
        throw CLIError(.internalError, "not built yet")
    }
}
