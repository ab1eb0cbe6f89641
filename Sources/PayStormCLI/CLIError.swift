public import RunControl

/// An error that ends a command with one line of explanation and an exit code.
public struct CLIError: Error, CustomStringConvertible, Sendable {
    /// The exit code the process ends with.
    public var exitCode: ExitCode
    /// One line naming the problem.
    public var message: String

    /// Creates an error that ends the command.
    /// - Parameters:
    ///   - exitCode: the exit code the process ends with.
    ///   - message: one line naming the problem.
    public init(_ exitCode: ExitCode, _ message: String) {
        self.exitCode = exitCode
        self.message = message
    }

    public var description: String { message }
}
