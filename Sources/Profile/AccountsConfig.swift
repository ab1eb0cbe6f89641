import Foundation

/// Profile `target.accounts`: how the backend knows the run's accounts.
///
/// ```json5
/// accounts: { provision: ["python3", "provision.py", "--db", "${DB}"], timeoutSeconds: 60 }
/// ```
public struct AccountsConfig: Sendable, Hashable, Decodable {
    /// The argument vector run once before traffic (no shell): one `{"appAccountToken"}` JSON line per account
    /// on its standard input, one `{"appAccountToken", "id", ...}` line per account on its standard output (with
    /// `"dictatedToken"` when the backend dictates the token the app sets for that account).
    public var provision: [String]?
    /// Seconds the command may take.
    public var timeoutSeconds: Double
    /// Seconds between two runs of the command while the run lasts, so that credentials it prints (a bearer
    /// token that expires in an hour, say) stay fresh through a soak; nil runs it once. The command must be
    /// idempotent: the same accounts, fresh fields.
    public var refreshSeconds: Double?

    /// The keys of `target.accounts`.
    public static let keys = ["provision", "timeoutSeconds", "refreshSeconds"]

    /// Strict decoding.
    public init(from decoder: any Decoder) throws {
        let f = try Fields(decoder, allowed: Self.keys)
        provision = try f.optional("provision")
        if let provision, provision.first?.isEmpty ?? true {
            throw ProfileIssue(path: f.at("provision"), expected: "a non-empty argument array")
        }
        timeoutSeconds = try f.number("timeoutSeconds", in: 0.1...86_400, default: 60)
        if f.has("refreshSeconds") {
            guard provision != nil else {
                throw ProfileIssue(
                    path: f.at("refreshSeconds"),
                    expected: "no refreshSeconds without target.accounts.provision (the command a refresh runs)"
                )
            }
            refreshSeconds = try f.number("refreshSeconds", in: 1...86_400, default: nil)
        }
    }
}
