// Property names are Apple's JSON keys exactly; every property is optional because Apple omits
// the fields that do not apply, and the synthesized encoder omits nil rather than writing null.

/// The payload of a signed app transaction (`signedAppTransactionInfo`).
public struct AppTransaction: Codable, Hashable, Sendable {
    /// The server environment (checked).
    public var receiptType: Environment?

    /// The app's Apple ID (checked in Production).
    public var appAppleId: Int64?

    /// The app's bundle identifier (checked).
    public var bundleId: String?

    /// The app version the transaction is for.
    public var applicationVersion: String?

    /// The App Store's identifier of that version.
    public var versionExternalIdentifier: Int64?

    /// When the App Store signed it, in UNIX milliseconds; the chain validation date.
    public var receiptCreationDate: Int64?

    /// When the customer first downloaded the app, in UNIX milliseconds.
    public var originalPurchaseDate: Int64?

    /// The app version the customer first downloaded.
    public var originalApplicationVersion: String?

    /// A base64 device verification value.
    public var deviceVerification: String?

    /// The UUID used for device verification.
    public var deviceVerificationNonce: String?

    /// When the customer pre-ordered the app, in UNIX milliseconds.
    public var preorderDate: Int64?

    /// The app transaction identifier.
    public var appTransactionId: String?

    /// The platform of the original download.
    public var originalPlatform: PurchasePlatform?

    /// Creates a value; every field defaults to absent, and absent fields are omitted when encoding.
    public init(
        receiptType: Environment? = nil,
        appAppleId: Int64? = nil,
        bundleId: String? = nil,
        applicationVersion: String? = nil,
        versionExternalIdentifier: Int64? = nil,
        receiptCreationDate: Int64? = nil,
        originalPurchaseDate: Int64? = nil,
        originalApplicationVersion: String? = nil,
        deviceVerification: String? = nil,
        deviceVerificationNonce: String? = nil,
        preorderDate: Int64? = nil,
        appTransactionId: String? = nil,
        originalPlatform: PurchasePlatform? = nil
    ) {
        self.receiptType = receiptType
        self.appAppleId = appAppleId
        self.bundleId = bundleId
        self.applicationVersion = applicationVersion
        self.versionExternalIdentifier = versionExternalIdentifier
        self.receiptCreationDate = receiptCreationDate
        self.originalPurchaseDate = originalPurchaseDate
        self.originalApplicationVersion = originalApplicationVersion
        self.deviceVerification = deviceVerification
        self.deviceVerificationNonce = deviceVerificationNonce
        self.preorderDate = preorderDate
        self.appTransactionId = appTransactionId
        self.originalPlatform = originalPlatform
    }
}
