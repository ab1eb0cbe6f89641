extension Command {
    /// `paystorm bench` (being built).
    static let bench = Command(name: "bench", summary: "(being built)", help: "paystorm bench: being built\n") { _ in
        throw CLIError(.internalError, "not built yet")
    }
}
