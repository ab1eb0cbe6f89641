public import AppStoreModel

extension NotificationFacts {
    /// Creates a notification's facts for a notification the world does not make itself (the App Store Server
    /// API's `TEST` and `RENEWAL_EXTENDED`); `status`, `transaction` and `renewal` start out nil.
    /// - Parameters:
    ///   - notificationType: Apple's `notificationType`.
    ///   - subtype: Apple's `subtype`, if any.
    ///   - notificationUUID: a fresh lowercase UUID.
    ///   - signedDate: when it is signed, in UNIX milliseconds.
    ///   - version: `2.0`.
    ///   - bundleId: the app's bundle id.
    ///   - appAppleId: the app's Apple ID.
    ///   - environment: `Sandbox` or `Production`.
    public init(
        notificationType: NotificationTypeV2,
        subtype: Subtype?,
        notificationUUID: String,
        signedDate: Int64,
        version: String,
        bundleId: String,
        appAppleId: Int64?,
        environment: Environment
    ) {
        self.notificationType = notificationType
        self.subtype = subtype
        self.notificationUUID = notificationUUID
        self.signedDate = signedDate
        self.version = version
        self.bundleId = bundleId
        self.appAppleId = appAppleId
        self.environment = environment
    }
}
