/// Why a run could not start or finish; each maps to one exit code of the README's table.
public enum RunError: Error, CustomStringConvertible, Sendable {
    /// The profile is malformed: the message names the file, the JSON path and what was expected.
    case badProfile(String)
    /// A needed input (a PKI directory) is missing or unreadable.
    case noInput(String)
    /// The target could not be reached or started.
    case unreachable(String)
    /// A report file or directory cannot be written.
    case cannotWrite(String)
    /// A bug in PayStorm.
    case internalError(String)

    public var description: String {
        switch self {
        case .badProfile(let message), .noInput(let message), .unreachable(let message),
            .internalError(let message):
            message
        case .cannotWrite(let path): "cannot write \(path)"
        }
    }
}
