public import RunControl

/// One `paystorm` subcommand.
public struct Command: Sendable {
    /// The word after `paystorm`.
    public var name: String
    /// One line for the command list.
    public var summary: String
    /// The full help text, printed by `paystorm NAME --help`.
    public var help: String
    /// Runs the command on the arguments after its name.
    public var run: @Sendable (Arguments) throws -> ExitCode

    /// Creates a subcommand.
    public init(
        name: String,
        summary: String,
        help: String,
        run: @escaping @Sendable (Arguments) throws -> ExitCode
    ) {
        self.name = name
        self.summary = summary
        self.help = help
        self.run = run
    }
}
