/// What the body of a notification carries, which decides how it must be minted.
public enum NotificationContent: String, Sendable, Hashable, CaseIterable {
    /// `data` with `signedTransactionInfo`, `signedRenewalInfo` and `status`: an auto-renewable subscription event.
    case subscription
    /// `data` with `signedTransactionInfo`, plus `signedRenewalInfo` and `status` when the product is an
    /// auto-renewable subscription (refunds, revocations, consumption requests).
    case transaction
    /// `data` with `signedTransactionInfo` only: never a subscription (`ONE_TIME_CHARGE`).
    case oneTimeTransaction
    /// `data` with only `appAppleId`, `bundleId` and `environment` (`TEST`).
    case appIdentity
    /// `summary` instead of `data` (`RENEWAL_EXTENSION`/`SUMMARY`).
    case summary
    /// `externalPurchaseToken` instead of `data`.
    case externalPurchaseToken
    /// `appData` with `signedAppTransactionInfo` instead of `data` (`RESCIND_CONSENT`).
    case appData
}

/// One row of the notificationType × subtype matrix: a combination Apple sends, and what it carries.
public struct NotificationKind: Sendable, Hashable, CustomStringConvertible {
    /// The notification type.
    public var notificationType: NotificationTypeV2
    /// The subtype, or `nil` when the key is absent.
    public var subtype: Subtype?
    /// What the body carries.
    public var content: NotificationContent

    /// Creates a row.
    public init(_ notificationType: NotificationTypeV2, _ subtype: Subtype? = nil, _ content: NotificationContent) {
        self.notificationType = notificationType
        self.subtype = subtype
        self.content = content
    }

    /// `TYPE` or `TYPE/SUBTYPE`, the spelling `paystorm mint --type/--subtype` and reports use.
    public var description: String {
        subtype.map { "\(notificationType.rawValue)/\($0.rawValue)" } ?? notificationType.rawValue
    }
}

/// The notificationType × subtype combinations Apple documents, each with what it carries.
///
/// ```swift
/// for kind in NotificationMatrix.all where kind.content == .subscription { ... }
/// let row = NotificationMatrix.kind(.expired, .voluntary)   // nil for a combination Apple never sends
/// ```
public enum NotificationMatrix {
    /// Every documented combination, in the order of Apple's notificationType page.
    public static let all: [NotificationKind] = [
        NotificationKind(.subscribed, .initialBuy, .subscription),
        NotificationKind(.subscribed, .resubscribe, .subscription),
        NotificationKind(.didRenew, nil, .subscription),
        NotificationKind(.didRenew, .billingRecovery, .subscription),
        NotificationKind(.didFailToRenew, nil, .subscription),
        NotificationKind(.didFailToRenew, .gracePeriod, .subscription),
        NotificationKind(.gracePeriodExpired, nil, .subscription),
        NotificationKind(.expired, .voluntary, .subscription),
        NotificationKind(.expired, .billingRetry, .subscription),
        NotificationKind(.expired, .priceIncrease, .subscription),
        NotificationKind(.expired, .productNotForSale, .subscription),
        NotificationKind(.expired, nil, .subscription),
        NotificationKind(.didChangeRenewalPref, .upgrade, .subscription),
        NotificationKind(.didChangeRenewalPref, .downgrade, .subscription),
        NotificationKind(.didChangeRenewalPref, nil, .subscription),
        NotificationKind(.didChangeRenewalStatus, .autoRenewEnabled, .subscription),
        NotificationKind(.didChangeRenewalStatus, .autoRenewDisabled, .subscription),
        NotificationKind(.didChangeRenewalStatus, nil, .subscription),
        NotificationKind(.offerRedeemed, nil, .subscription),
        NotificationKind(.offerRedeemed, .upgrade, .subscription),
        NotificationKind(.offerRedeemed, .downgrade, .subscription),
        NotificationKind(.priceIncrease, .pending, .subscription),
        NotificationKind(.priceIncrease, .accepted, .subscription),
        NotificationKind(.refund, nil, .transaction),
        NotificationKind(.refundDeclined, nil, .transaction),
        NotificationKind(.refundReversed, nil, .transaction),
        NotificationKind(.consumptionRequest, nil, .transaction),
        NotificationKind(.revoke, nil, .transaction),
        NotificationKind(.oneTimeCharge, nil, .oneTimeTransaction),
        NotificationKind(.renewalExtended, nil, .subscription),
        NotificationKind(.renewalExtension, .summary, .summary),
        NotificationKind(.renewalExtension, .failure, .subscription),
        NotificationKind(.test, nil, .appIdentity),
        NotificationKind(.externalPurchaseToken, .unreported, .externalPurchaseToken),
        NotificationKind(.externalPurchaseToken, .activeTokenReminder, .externalPurchaseToken),
        NotificationKind(.externalPurchaseToken, .created, .externalPurchaseToken),
        NotificationKind(.rescindConsent, nil, .appData),
        NotificationKind(.metadataUpdate, nil, .subscription),
        NotificationKind(.migration, nil, .subscription),
        NotificationKind(.priceChange, nil, .subscription),
    ]

    /// The documented row for a combination, or `nil` when Apple never sends it.
    /// - Parameters:
    ///   - notificationType: the type.
    ///   - subtype: the subtype, `nil` for none.
    /// - Returns: the row, or `nil`.
    public static func kind(_ notificationType: NotificationTypeV2, _ subtype: Subtype?) -> NotificationKind? {
        all.first { $0.notificationType == notificationType && $0.subtype == subtype }
    }
}
