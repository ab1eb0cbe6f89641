/// Why a run could not start or finish; each maps to one exit code of the README's table.
public enum RunError: Error, CustomStringConvertible, Sendable {
    /// The profile is malformed: the message names the file, the JSON path and what was expected.
    case badProfile(String)
    /// A needed input (a PKI directory) is missing or unreadable.
    case noInput(String)
    /// An input other than the profile is malformed (a PKI whose files do not parse, match or verify).
    case badInput(String)
    /// The target could not be reached or started.
    case unreachable(String)
    /// A report file or directory cannot be written: the message names the path and why
    /// (`cannot write PATH: REASON`, as the report and output errors already say).
    case cannotWrite(String)
    /// A bug in PayStorm.
    case internalError(String)

    public var description: String {
        switch self {
        // Each message is complete as thrown; wrapping it again here gave "cannot write cannot write …".
        case .badProfile(let message), .noInput(let message), .badInput(let message), .unreachable(let message),
            .cannotWrite(let message), .internalError(let message):
            message
        }
    }
}
