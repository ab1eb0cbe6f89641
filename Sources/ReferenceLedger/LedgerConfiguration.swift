public import AppStoreModel

/// How to run a reference ledger.
public struct LedgerConfiguration: Sendable {
    /// A numeric address to listen on (loopback by default).
    public var host: String
    /// The port, or 0 for any free port.
    public var port: UInt16
    /// The SQLite file (created if missing).
    public var databasePath: String
    /// DER root certificates the verifier trusts (PayStorm's test root).
    public var trustedRoots: [[UInt8]]
    /// The app's bundle ID; payloads for another app are refused.
    public var bundleId: String
    /// `Sandbox`, `Production`, `Xcode` or `LocalTesting`; payloads from another environment are refused.
    public var environment: Environment
    /// The app's Apple ID (required in Production).
    public var appAppleId: Int64?
    /// Flaws to switch on (none: the correct ledger).
    public var flaws: Set<LedgerFlaw>
    /// HTTP worker threads.
    public var threads: Int
    /// Larger request bodies get 413.
    public var maxBodyBytes: Int
    /// With `ack-before-commit`: how long acknowledged deliveries wait before their commit.
    public var lateCommitDelay: Duration

    /// Creates a configuration; only what has no sensible default is required.
    public init(
        host: String = "127.0.0.1",
        port: UInt16 = 0,
        databasePath: String,
        trustedRoots: [[UInt8]],
        bundleId: String,
        environment: Environment = .sandbox,
        appAppleId: Int64? = nil,
        flaws: Set<LedgerFlaw> = [],
        threads: Int = 4,
        maxBodyBytes: Int = 1 << 20,
        lateCommitDelay: Duration = .seconds(2)
    ) {
        self.host = host
        self.port = port
        self.databasePath = databasePath
        self.trustedRoots = trustedRoots
        self.bundleId = bundleId
        self.environment = environment
        self.appAppleId = appAppleId
        self.flaws = flaws
        self.threads = threads
        self.maxBodyBytes = maxBodyBytes
        self.lateCommitDelay = lateCommitDelay
    }
}
