/// Why a probe could not read an account. The checker records the account's checks as unknown.
public enum ProbeError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The answer was not the expected JSON.
    case badJSON(String)
    /// The transport failed (connection, status, command exit code).
    case transport(String)
    /// A bulk probe printed no line for the account.
    case missingAccount(String)

    /// One line.
    public var description: String {
        switch self {
        case .badJSON(let detail): "probe answer is not valid: \(detail)"
        case .transport(let detail): "probe failed: \(detail)"
        case .missingAccount(let token): "bulk probe printed no line for account \(token)"
        }
    }
}
