extension Command {
    /// `paystorm pki` (being built).
    static let pki = Command(name: "pki", summary: "(being built)", help: "paystorm pki: being built\n") { _ in
        throw CLIError(.internalError, "not built yet")
    }
}
