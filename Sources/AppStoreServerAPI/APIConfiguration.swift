public import AppStoreModel
import Primitives
import Profile
import Simulation
import Synchronization

/// How the App Store Server API behaves: whom it answers (bundle id, bearer keys), which app it signs for,
/// and the API's own failures. Every field maps onto one profile key or command-line flag of the run path.
public struct APIConfiguration: Sendable {
    /// The app's bundle id: bearer tokens must carry it as `bid`, and signed answers name it.
    public var bundleId: String
    /// The app's Apple ID written into history and status answers (`appAppleId`).
    public var appAppleId: Int64?
    /// `Sandbox` or `Production`, written into answers as `environment`.
    public var environment: Environment
    /// Public keys (PEM, P-256) by key id: a bearer token whose `kid` is listed must carry a valid ES256
    /// signature by that key, and one whose `kid` is not listed is refused. Empty: claims are checked, the
    /// signature is not.
    public var publicKeys: [String: String]
    /// The issuer id every bearer token must carry as `iss`; nil accepts any non-empty issuer.
    public var issuerId: String?
    /// The API's own failures.
    public var faults: APIFaults
    /// The app's shared secret: when set, `verifyReceipt` answers 21004 to a receipt with an auto-renewable
    /// subscription whose request's `password` is missing or another, as Apple does.
    public var sharedSecret: String?

    /// Creates a configuration.
    public init(
        bundleId: String = "com.example.paystorm",
        appAppleId: Int64? = 1_234_567_890,
        environment: Environment = .sandbox,
        publicKeys: [String: String] = [:],
        issuerId: String? = nil,
        faults: APIFaults = APIFaults(),
        sharedSecret: String? = nil
    ) {
        self.issuerId = issuerId
        self.bundleId = bundleId
        self.appAppleId = appAppleId
        self.environment = environment
        self.publicKeys = publicKeys
        self.faults = faults
        self.sharedSecret = sharedSecret
    }
}

/// The App Store Server API's own failures, drawn per request from a seeded generator (Simulation's
/// `SplitMix64`) and recorded in the fault log. Probabilities are per request, 0 to 1, drawn in this order:
/// rate limit, retryable error, internal error, then (for an answer that is not an error) a slow answer.
public struct APIFaults: Sendable, Hashable {
    /// The seed of the generator (a run uses its own seed, so a replay draws the same faults).
    public var seed: UInt64
    /// Chance of `429` with `RateLimitExceededError` and a `Retry-After` header.
    public var rateLimitProbability: Double
    /// The `Retry-After` value in seconds.
    public var retryAfterSeconds: Int
    /// Chance of `500` with `GeneralInternalRetryableError`.
    public var retryableErrorProbability: Double
    /// Chance of `500` with `GeneralInternalError`.
    public var internalErrorProbability: Double
    /// Chance that an answer is held back for ``slowSeconds`` (longer than the client's timeout: a timeout).
    public var slowProbability: Double
    /// How long a slow answer waits, in seconds.
    public var slowSeconds: Double
    /// Eventual consistency: for this many seconds after its purchase a transaction is unknown to every
    /// endpoint (`TransactionIdNotFoundError` when asked by id, left out of lists).
    public var notFoundSeconds: Double

    /// Creates faults; the default has none.
    public init(
        seed: UInt64 = 0,
        rateLimitProbability: Double = 0,
        retryAfterSeconds: Int = 1,
        retryableErrorProbability: Double = 0,
        internalErrorProbability: Double = 0,
        slowProbability: Double = 0,
        slowSeconds: Double = 2,
        notFoundSeconds: Double = 0
    ) {
        self.seed = seed
        self.rateLimitProbability = rateLimitProbability
        self.retryAfterSeconds = retryAfterSeconds
        self.retryableErrorProbability = retryableErrorProbability
        self.internalErrorProbability = internalErrorProbability
        self.slowProbability = slowProbability
        self.slowSeconds = slowSeconds
        self.notFoundSeconds = notFoundSeconds
    }
}

/// One fault the API injected: when, on which endpoint, for which id, and what.
public struct APIFaultEvent: Sendable, Hashable {
    /// The kinds of fault.
    public enum Kind: String, Sendable, Hashable {
        /// 429 `RateLimitExceededError`.
        case rateLimit
        /// 500 `GeneralInternalRetryableError`.
        case retryableError
        /// 500 `GeneralInternalError`.
        case internalError
        /// The answer was held back.
        case slow
        /// A transaction too new to be known yet (eventual consistency).
        case notFoundYet
    }
    /// The world time, in UNIX milliseconds.
    public var at: Int64
    /// The endpoint's name, such as `getTransactionInfo`.
    public var endpoint: String
    /// The id in the path (transaction, original transaction, order or token), or empty.
    public var id: String
    /// The fault.
    public var kind: Kind

    /// Creates an event.
    public init(at: Int64, endpoint: String, id: String, kind: Kind) {
        self.at = at
        self.endpoint = endpoint
        self.id = id
        self.kind = kind
    }
}

/// The seeded draws and the log; one lock, so the sequence of draws follows the order of requests.
final class FaultInjector: Sendable {
    private let faults: APIFaults
    private let state: Mutex<(rng: SplitMix64, log: [APIFaultEvent])>

    init(_ faults: APIFaults) {
        self.faults = faults
        self.state = Mutex((SplitMix64(seed: faults.seed), []))
    }

    /// Draws the error fault of one request, if any (every request draws the same number of values).
    func drawError(at: Int64, endpoint: String, id: String) -> APIFaultEvent.Kind? {
        state.withLock { state in
            let draws = (state.rng.unit(), state.rng.unit(), state.rng.unit())
            let kind: APIFaultEvent.Kind? =
                draws.0 < faults.rateLimitProbability
                ? .rateLimit
                : draws.1 < faults.retryableErrorProbability
                    ? .retryableError : draws.2 < faults.internalErrorProbability ? .internalError : nil
            if let kind { state.log.append(APIFaultEvent(at: at, endpoint: endpoint, id: id, kind: kind)) }
            return kind
        }
    }

    /// Draws whether an answer is slow, and logs it.
    func drawSlow(at: Int64, endpoint: String, id: String) -> Double {
        guard faults.slowProbability > 0 else { return 0 }
        return state.withLock { state in
            guard state.rng.unit() < faults.slowProbability else { return 0 }
            state.log.append(APIFaultEvent(at: at, endpoint: endpoint, id: id, kind: .slow))
            return faults.slowSeconds
        }
    }

    func log(_ event: APIFaultEvent) {
        state.withLock { $0.log.append(event) }
    }

    var events: [APIFaultEvent] { state.withLock { $0.log } }

    func events(since index: Int) -> [APIFaultEvent] {
        state.withLock { Array($0.log.dropFirst(index)) }
    }
}
