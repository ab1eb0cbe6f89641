extension Command {
    /// `paystorm ledger` (being built).
    static let ledger = Command(name: "ledger", summary: "(being built)", help: "paystorm ledger: being built\n") { _ in
        throw CLIError(.internalError, "not built yet")
    }
}
