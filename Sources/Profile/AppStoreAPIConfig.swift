import Foundation

/// The App Store Server API a run serves while it runs (profile `target.appStoreAPI`), for backends that verify by
/// pulling from Apple: HTTPS on loopback with a certificate from the run's test PKI, answers from the run's world.
///
/// ```json5
/// appStoreAPI: {
///   listen: "127.0.0.1:${API_PORT}",
///   hostNames: ["api.example.test"],
///   keyId: "ABC123DEFG", issuerId: "57246542-96fe-1a63-e053-0824d011072a", publicKey: "AuthKey.pub.pem",
///   faults: { rateLimit: 0.1, serverErrors: 0.05, notFoundSeconds: 1 },
/// }
/// ```
public struct AppStoreAPIConfig: Sendable, Hashable, Decodable {
    /// The numeric loopback address and port to serve on (`127.0.0.1:0` takes a free port).
    public var host: String
    /// The port; 0 for any free one.
    public var port: UInt16
    /// Host names the TLS certificate names besides Apple's API hosts and loopback.
    public var hostNames: [String]
    /// The key id bearer tokens carry (header `kid`); with ``publicKey`` their signature is checked.
    public var keyId: String?
    /// The issuer id bearer tokens must carry as `iss`; any non-empty issuer when absent.
    public var issuerId: String?
    /// A PEM file with the public half of the backend's API key (P-256), as written in the profile.
    public var publicKey: String?
    /// The API's own failures.
    public var faults: AppStoreAPIFaults
    /// The app's shared secret `verifyReceipt` checks as `password` (21004 when missing or another); unchecked
    /// when absent.
    public var sharedSecret: String?

    static let keys = ["listen", "hostNames", "keyId", "issuerId", "publicKey", "faults", "sharedSecret"]

    /// Strict decoding.
    public init(from decoder: any Decoder) throws {
        let f = try Fields(decoder, allowed: Self.keys)
        let listen = try f.text("listen", default: "127.0.0.1:0")
        guard let colon = listen.lastIndex(of: ":"), let port = UInt16(listen[listen.index(after: colon)...]),
            ["127.0.0.1", "::1", "[::1]"].contains(String(listen[..<colon]))
        else {
            throw ProfileIssue(
                path: f.at("listen"),
                expected:
                    "a loopback address and port such as \"127.0.0.1:8443\" or \"127.0.0.1:0\", found \"\(listen)\""
            )
        }
        host = String(listen[..<colon]).trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
        self.port = port
        hostNames = try f.value("hostNames", default: [])
        for (index, name) in hostNames.enumerated()
        where name.isEmpty || !name.utf8.allSatisfy({ Placeholder.isNameByte($0) || $0 == UInt8(ascii: ":") }) {
            throw ProfileIssue(path: f.at("hostNames") + "[\(index)]", expected: "a host name, found \"\(name)\"")
        }
        keyId = try f.optional("keyId")
        issuerId = try f.optional("issuerId")
        publicKey = try f.optional("publicKey")
        if publicKey != nil && keyId == nil {
            throw ProfileIssue(path: f.at("keyId"), expected: "the key id of publicKey (a publicKey needs its keyId)")
        }
        faults = try f.optional("faults") ?? AppStoreAPIFaults()
        sharedSecret = try f.optional("sharedSecret")
        if sharedSecret?.isEmpty == true {
            throw ProfileIssue(path: f.at("sharedSecret"), expected: "a shared secret, found an empty string")
        }
    }
}

/// The App Store Server API's own failures in a run (`target.appStoreAPI.faults`): probabilities per request,
/// drawn from the run's seed, and eventual consistency after a purchase.
public struct AppStoreAPIFaults: Sendable, Hashable, Decodable {
    /// Chance of 429 `RateLimitExceededError` with `Retry-After`.
    public var rateLimit: Double = 0
    /// The `Retry-After` value in seconds.
    public var retryAfterSeconds: Int = 1
    /// Chance of 500 `GeneralInternalRetryableError` (Apple's retryable server error).
    public var serverErrors: Double = 0
    /// Chance of 500 `GeneralInternalError`.
    public var internalErrors: Double = 0
    /// Chance that an answer is held back for ``slowSeconds``.
    public var slow: Double = 0
    /// How long a slow answer waits (beyond the backend's client timeout it is a timeout).
    public var slowSeconds: Double = 2
    /// Seconds after its purchase during which a transaction is `TransactionIdNotFoundError`.
    public var notFoundSeconds: Double = 0

    /// No faults.
    public init() {}

    /// Strict decoding.
    public init(from decoder: any Decoder) throws {
        let f = try Fields(
            decoder,
            allowed: [
                "rateLimit", "retryAfterSeconds", "serverErrors", "internalErrors", "slow", "slowSeconds",
                "notFoundSeconds",
            ]
        )
        rateLimit = try f.number("rateLimit", in: 0...1, default: 0)
        retryAfterSeconds = Int(try f.integer("retryAfterSeconds", in: 0...3600, default: 1))
        serverErrors = try f.number("serverErrors", in: 0...1, default: 0)
        internalErrors = try f.number("internalErrors", in: 0...1, default: 0)
        slow = try f.number("slow", in: 0...1, default: 0)
        slowSeconds = try f.number("slowSeconds", in: 0...600, default: 2)
        notFoundSeconds = try f.number("notFoundSeconds", in: 0...3600, default: 0)
    }
}
