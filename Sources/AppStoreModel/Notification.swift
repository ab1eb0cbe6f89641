// Property names are Apple's JSON keys exactly; every property is optional because Apple omits
// the fields that do not apply, and the synthesized encoder omits nil rather than writing null.

/// The body of an App Store Server Notification V2 webhook: `{"signedPayload": "<JWS>"}`.
public struct ResponseBodyV2: Codable, Hashable, Sendable {
    /// The notification as a JWS in compact form whose payload is a `ResponseBodyV2DecodedPayload`.
    public var signedPayload: String?

    /// Creates a value; every field defaults to absent, and absent fields are omitted when encoding.
    public init(
        signedPayload: String? = nil
    ) {
        self.signedPayload = signedPayload
    }
}

/// The payload of a notification's `signedPayload`. Exactly one of `data`, `summary`, `externalPurchaseToken` and
/// `appData` is present.
public struct ResponseBodyV2DecodedPayload: Codable, Hashable, Sendable {
    /// The event.
    public var notificationType: NotificationTypeV2?

    /// Details of the event; absent when it has none.
    public var subtype: Subtype?

    /// A UUID unique to the notification and kept on retries.
    public var notificationUUID: String?

    /// The app and its signed transaction and renewal info.
    public var data: NotificationData?

    /// The result of a mass renewal extension (`RENEWAL_EXTENSION`/`SUMMARY`).
    public var summary: Summary?

    /// The token of `EXTERNAL_PURCHASE_TOKEN`.
    public var externalPurchaseToken: ExternalPurchaseToken?

    /// The app data of `RESCIND_CONSENT`.
    public var appData: AppData?

    /// The notification version, `"2.0"`.
    public var version: String?

    /// When the App Store signed the notification, in UNIX milliseconds; unchanged on retries.
    public var signedDate: Int64?

    /// Creates a value; every field defaults to absent, and absent fields are omitted when encoding.
    public init(
        notificationType: NotificationTypeV2? = nil,
        subtype: Subtype? = nil,
        notificationUUID: String? = nil,
        data: NotificationData? = nil,
        summary: Summary? = nil,
        externalPurchaseToken: ExternalPurchaseToken? = nil,
        appData: AppData? = nil,
        version: String? = nil,
        signedDate: Int64? = nil
    ) {
        self.notificationType = notificationType
        self.subtype = subtype
        self.notificationUUID = notificationUUID
        self.data = data
        self.summary = summary
        self.externalPurchaseToken = externalPurchaseToken
        self.appData = appData
        self.version = version
        self.signedDate = signedDate
    }
}

/// The `data` object of a notification: the app and its signed transaction and renewal info.
public struct NotificationData: Codable, Hashable, Sendable {
    /// The app's Apple ID (checked in Production).
    public var appAppleId: Int64?

    /// The app's bundle identifier (checked).
    public var bundleId: String?

    /// The app's build version.
    public var bundleVersion: String?

    /// The server environment (checked).
    public var environment: Environment?

    /// The transaction as a JWS whose payload is a `JWSTransactionDecodedPayload`.
    public var signedTransactionInfo: String?

    /// The renewal info as a JWS whose payload is a `JWSRenewalInfoDecodedPayload`; auto-renewable subscriptions
    /// only.
    public var signedRenewalInfo: String?

    /// The subscription status as of `signedDate`; auto-renewable subscriptions only.
    public var status: Status?

    /// Why the customer asked for a refund; `CONSUMPTION_REQUEST` only.
    public var consumptionRequestReason: ConsumptionRequestReason?

    /// Creates a value; every field defaults to absent, and absent fields are omitted when encoding.
    public init(
        appAppleId: Int64? = nil,
        bundleId: String? = nil,
        bundleVersion: String? = nil,
        environment: Environment? = nil,
        signedTransactionInfo: String? = nil,
        signedRenewalInfo: String? = nil,
        status: Status? = nil,
        consumptionRequestReason: ConsumptionRequestReason? = nil
    ) {
        self.appAppleId = appAppleId
        self.bundleId = bundleId
        self.bundleVersion = bundleVersion
        self.environment = environment
        self.signedTransactionInfo = signedTransactionInfo
        self.signedRenewalInfo = signedRenewalInfo
        self.status = status
        self.consumptionRequestReason = consumptionRequestReason
    }
}

/// The `summary` object of a `RENEWAL_EXTENSION`/`SUMMARY` notification.
public struct Summary: Codable, Hashable, Sendable {
    /// The server environment (checked).
    public var environment: Environment?

    /// The app's Apple ID.
    public var appAppleId: Int64?

    /// The app's bundle identifier (checked).
    public var bundleId: String?

    /// The product whose renewals were extended.
    public var productId: String?

    /// The identifier of the mass extension request.
    public var requestIdentifier: String?

    /// The storefronts the request covered (ISO 3166-1 alpha-3).
    public var storefrontCountryCodes: [String]?

    /// How many subscriptions were extended.
    public var succeededCount: Int64?

    /// How many subscriptions failed to extend.
    public var failedCount: Int64?

    /// Creates a value; every field defaults to absent, and absent fields are omitted when encoding.
    public init(
        environment: Environment? = nil,
        appAppleId: Int64? = nil,
        bundleId: String? = nil,
        productId: String? = nil,
        requestIdentifier: String? = nil,
        storefrontCountryCodes: [String]? = nil,
        succeededCount: Int64? = nil,
        failedCount: Int64? = nil
    ) {
        self.environment = environment
        self.appAppleId = appAppleId
        self.bundleId = bundleId
        self.productId = productId
        self.requestIdentifier = requestIdentifier
        self.storefrontCountryCodes = storefrontCountryCodes
        self.succeededCount = succeededCount
        self.failedCount = failedCount
    }
}

/// The `externalPurchaseToken` object of an `EXTERNAL_PURCHASE_TOKEN` notification. It has no environment: an
/// `externalPurchaseId` starting with `SANDBOX` means the sandbox.
public struct ExternalPurchaseToken: Codable, Hashable, Sendable {
    /// The token's identifier; the prefix `SANDBOX` marks the sandbox.
    public var externalPurchaseId: String?

    /// When the token was created, in UNIX milliseconds.
    public var tokenCreationDate: Int64?

    /// The app's Apple ID.
    public var appAppleId: Int64?

    /// The app's bundle identifier (checked).
    public var bundleId: String?

    /// Creates a value; every field defaults to absent, and absent fields are omitted when encoding.
    public init(
        externalPurchaseId: String? = nil,
        tokenCreationDate: Int64? = nil,
        appAppleId: Int64? = nil,
        bundleId: String? = nil
    ) {
        self.externalPurchaseId = externalPurchaseId
        self.tokenCreationDate = tokenCreationDate
        self.appAppleId = appAppleId
        self.bundleId = bundleId
    }
}

/// The `appData` object of a `RESCIND_CONSENT` notification.
public struct AppData: Codable, Hashable, Sendable {
    /// The app's Apple ID.
    public var appAppleId: Int64?

    /// The app's bundle identifier (checked).
    public var bundleId: String?

    /// The server environment (checked).
    public var environment: Environment?

    /// The app transaction as a JWS whose payload is an `AppTransaction`.
    public var signedAppTransactionInfo: String?

    /// Creates a value; every field defaults to absent, and absent fields are omitted when encoding.
    public init(
        appAppleId: Int64? = nil,
        bundleId: String? = nil,
        environment: Environment? = nil,
        signedAppTransactionInfo: String? = nil
    ) {
        self.appAppleId = appAppleId
        self.bundleId = bundleId
        self.environment = environment
        self.signedAppTransactionInfo = signedAppTransactionInfo
    }
}
