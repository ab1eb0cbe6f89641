import Foundation

/// Profile `target.requestHook`: a long-lived command that sees each rendered request and answers the request to
/// send, for what a template cannot compute (a client signature over the body, an HMAC, a nonce).
///
/// ```json5
/// requestHook: { command: ["python3", "sign.py"], roles: ["deviceDelivery"], timeoutSeconds: 5 }
/// requestHook: ["python3", "sign.py"]  // the same with every role and the defaults
/// ```
///
/// The line protocol on its standard input and output is in `docs/request-hook.md`.
public struct RequestHookConfig: Sendable, Hashable, Decodable {
    /// The argument vector started once per run (no shell).
    public var command: [String]
    /// The roles whose requests go through the hook; every delivery role by default (probes never do).
    public var roles: [RequestRole]
    /// Seconds the hook may take to answer one request before the run stops.
    public var timeoutSeconds: Double
    /// Requests handed to the hook and not yet answered, at most; a delivery due while at the cap is missed.
    public var maxInFlight: Int

    /// The keys of `target.requestHook`.
    public static let keys = ["command", "roles", "timeoutSeconds", "maxInFlight"]

    /// Strict decoding of the object form, or of a bare argument array.
    public init(from decoder: any Decoder) throws {
        if let command = try? decoder.singleValueContainer().decode([String].self) {
            try self.init(command: command, path: jsonPath(decoder.codingPath))
            return
        }
        let f = try Fields(decoder, allowed: Self.keys)
        try self.init(command: try f.required("command"), path: f.at("command"))
        let names: [String] = try f.value("roles", default: RequestRole.allCases.map(\.rawValue))
        roles = try names.map { name in
            guard let role = RequestRole(rawValue: name) else {
                throw ProfileIssue(
                    path: f.at("roles"),
                    expected: "roles among \(RequestRole.allCases.map(\.rawValue).joined(separator: ", ")), "
                        + "found \"\(name)\""
                )
            }
            return role
        }
        guard !roles.isEmpty else { throw ProfileIssue(path: f.at("roles"), expected: "at least one role") }
        timeoutSeconds = try f.number("timeoutSeconds", in: 0.001...600, default: 5)
        maxInFlight = Int(try f.integer("maxInFlight", in: 1...65_536, default: 256))
    }

    /// A hook of `command` for every role, with the default timeout and cap.
    /// - Throws: `ProfileIssue` at `path` when the command is empty.
    init(command: [String], path: String) throws {
        guard let program = command.first, !program.isEmpty else {
            throw ProfileIssue(path: path, expected: "a non-empty argument array")
        }
        self.command = command
        roles = RequestRole.allCases
        timeoutSeconds = 5
        maxInFlight = 256
    }

    /// The command as one short line, for messages: `python3 sign.py`.
    public var label: String { command.joined(separator: " ") }
}
