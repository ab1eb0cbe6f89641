public import AppStoreModel

/// The app whose signed data is minted: the identity every verifier checks.
public struct AppIdentity: Sendable, Hashable {
    /// The bundle identifier (`bundleId`, checked by every verifier).
    public var bundleId: String
    /// The app's Apple ID (`appAppleId`, checked in Production).
    public var appAppleId: Int64?
    /// The app's build version (`bundleVersion`).
    public var bundleVersion: String
    /// The environment written into every payload (checked by every verifier).
    public var environment: Environment

    /// Creates an identity. The defaults mint Sandbox data for `com.example.paystorm`.
    public init(
        bundleId: String = "com.example.paystorm",
        appAppleId: Int64? = 1_234_567_890,
        bundleVersion: String = "1.0",
        environment: Environment = .sandbox
    ) {
        self.bundleId = bundleId
        self.appAppleId = appAppleId
        self.bundleVersion = bundleVersion
        self.environment = environment
    }
}
