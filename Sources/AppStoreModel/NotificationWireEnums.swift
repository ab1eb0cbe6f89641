// The wire enums of App Store Server Notifications V2 (type and subtype), as open sets.

/// The event an App Store Server Notification V2 reports (`notificationType`). An open set: any value decodes and
/// is kept, so unknown and deliberately invalid values round-trip.
public struct NotificationTypeV2: OpenWireEnum, ExpressibleByStringLiteral {
    /// The value exactly as it appears in the JSON.
    public var rawValue: String

    /// Creates a value from its JSON form; any value is accepted.
    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// The customer subscribed (see the `INITIAL_BUY` and `RESUBSCRIBE` subtypes).
    public static let subscribed = NotificationTypeV2(rawValue: "SUBSCRIBED")
    /// The customer changed the renewal product (upgrade, downgrade, or revert).
    public static let didChangeRenewalPref = NotificationTypeV2(rawValue: "DID_CHANGE_RENEWAL_PREF")
    /// Auto-renew was turned on or off.
    public static let didChangeRenewalStatus = NotificationTypeV2(rawValue: "DID_CHANGE_RENEWAL_STATUS")
    /// An active subscriber redeemed an offer.
    public static let offerRedeemed = NotificationTypeV2(rawValue: "OFFER_REDEEMED")
    /// The subscription renewed.
    public static let didRenew = NotificationTypeV2(rawValue: "DID_RENEW")
    /// The subscription expired.
    public static let expired = NotificationTypeV2(rawValue: "EXPIRED")
    /// A renewal failed for billing reasons.
    public static let didFailToRenew = NotificationTypeV2(rawValue: "DID_FAIL_TO_RENEW")
    /// The billing grace period ended without renewal.
    public static let gracePeriodExpired = NotificationTypeV2(rawValue: "GRACE_PERIOD_EXPIRED")
    /// A price increase was announced or accepted.
    public static let priceIncrease = NotificationTypeV2(rawValue: "PRICE_INCREASE")
    /// Apple refunded a transaction.
    public static let refund = NotificationTypeV2(rawValue: "REFUND")
    /// Apple declined a refund request.
    public static let refundDeclined = NotificationTypeV2(rawValue: "REFUND_DECLINED")
    /// Apple asks for consumption data about a refund request.
    public static let consumptionRequest = NotificationTypeV2(rawValue: "CONSUMPTION_REQUEST")
    /// One subscription's renewal date was extended.
    public static let renewalExtended = NotificationTypeV2(rawValue: "RENEWAL_EXTENDED")
    /// Family Sharing access was revoked.
    public static let revoke = NotificationTypeV2(rawValue: "REVOKE")
    /// A test notification requested through the API.
    public static let test = NotificationTypeV2(rawValue: "TEST")
    /// A mass renewal-date extension finished or failed for one subscription.
    public static let renewalExtension = NotificationTypeV2(rawValue: "RENEWAL_EXTENSION")
    /// Apple reversed a refund.
    public static let refundReversed = NotificationTypeV2(rawValue: "REFUND_REVERSED")
    /// An External Purchase API token was not reported.
    public static let externalPurchaseToken = NotificationTypeV2(rawValue: "EXTERNAL_PURCHASE_TOKEN")
    /// A one-time purchase: consumable, non-consumable or non-renewing subscription.
    public static let oneTimeCharge = NotificationTypeV2(rawValue: "ONE_TIME_CHARGE")
    /// A parent withdrew consent (age assurance).
    public static let rescindConsent = NotificationTypeV2(rawValue: "RESCIND_CONSENT")
    /// Advanced Commerce API: metadata changed.
    public static let metadataUpdate = NotificationTypeV2(rawValue: "METADATA_UPDATE")
    /// Advanced Commerce API: a subscription migrated.
    public static let migration = NotificationTypeV2(rawValue: "MIGRATION")
    /// Advanced Commerce API: a price changed.
    public static let priceChange = NotificationTypeV2(rawValue: "PRICE_CHANGE")

    /// Every value Apple documents, in the documentation's order.
    public static let allKnown: [NotificationTypeV2] = [
        .subscribed,
        .didChangeRenewalPref,
        .didChangeRenewalStatus,
        .offerRedeemed,
        .didRenew,
        .expired,
        .didFailToRenew,
        .gracePeriodExpired,
        .priceIncrease,
        .refund,
        .refundDeclined,
        .consumptionRequest,
        .renewalExtended,
        .revoke,
        .test,
        .renewalExtension,
        .refundReversed,
        .externalPurchaseToken,
        .oneTimeCharge,
        .rescindConsent,
        .metadataUpdate,
        .migration,
        .priceChange,
    ]
}

/// Details about some notification types (`subtype`). An open set: any value decodes and is kept, so unknown and
/// deliberately invalid values round-trip.
public struct Subtype: OpenWireEnum, ExpressibleByStringLiteral {
    /// The value exactly as it appears in the JSON.
    public var rawValue: String

    /// Creates a value from its JSON form; any value is accepted.
    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// A first subscription in a group.
    public static let initialBuy = Subtype(rawValue: "INITIAL_BUY")
    /// A resubscription after expiry.
    public static let resubscribe = Subtype(rawValue: "RESUBSCRIBE")
    /// A downgrade, effective at the next renewal.
    public static let downgrade = Subtype(rawValue: "DOWNGRADE")
    /// An upgrade, effective immediately.
    public static let upgrade = Subtype(rawValue: "UPGRADE")
    /// Auto-renew turned on.
    public static let autoRenewEnabled = Subtype(rawValue: "AUTO_RENEW_ENABLED")
    /// Auto-renew turned off.
    public static let autoRenewDisabled = Subtype(rawValue: "AUTO_RENEW_DISABLED")
    /// Expired after the customer turned auto-renew off.
    public static let voluntary = Subtype(rawValue: "VOLUNTARY")
    /// Expired when the billing retry period ended.
    public static let billingRetry = Subtype(rawValue: "BILLING_RETRY")
    /// Expired because the customer did not consent to a price increase.
    public static let priceIncrease = Subtype(rawValue: "PRICE_INCREASE")
    /// Failed to renew, with a billing grace period.
    public static let gracePeriod = Subtype(rawValue: "GRACE_PERIOD")
    /// A consent-required price increase awaits the customer.
    public static let pending = Subtype(rawValue: "PENDING")
    /// The customer accepted a price increase, or it needed no consent.
    public static let accepted = Subtype(rawValue: "ACCEPTED")
    /// Billing retry recovered the subscription.
    public static let billingRecovery = Subtype(rawValue: "BILLING_RECOVERY")
    /// Expired because the product was not for sale.
    public static let productNotForSale = Subtype(rawValue: "PRODUCT_NOT_FOR_SALE")
    /// A mass renewal extension finished.
    public static let summary = Subtype(rawValue: "SUMMARY")
    /// A mass renewal extension failed for one subscription.
    public static let failure = Subtype(rawValue: "FAILURE")
    /// An external purchase token was not reported.
    public static let unreported = Subtype(rawValue: "UNREPORTED")
    /// A reminder about an active external purchase token (not in every library).
    public static let activeTokenReminder = Subtype(rawValue: "ACTIVE_TOKEN_REMINDER")
    /// An external purchase token was created (not in every library).
    public static let created = Subtype(rawValue: "CREATED")

    /// Every value Apple documents, in the documentation's order.
    public static let allKnown: [Subtype] = [
        .initialBuy,
        .resubscribe,
        .downgrade,
        .upgrade,
        .autoRenewEnabled,
        .autoRenewDisabled,
        .voluntary,
        .billingRetry,
        .priceIncrease,
        .gracePeriod,
        .pending,
        .accepted,
        .billingRecovery,
        .productNotForSale,
        .summary,
        .failure,
        .unreported,
        .activeTokenReminder,
        .created,
    ]
}

/// How one attempt to send a notification to the backend's webhook ended (`sendAttemptResult` in the App Store
/// Server API's notification history and test notification status). An open set.
public struct SendAttemptResult: OpenWireEnum, ExpressibleByStringLiteral {
    /// The value exactly as it appears in the JSON.
    public var rawValue: String

    /// Creates a value from its JSON form; any value is accepted.
    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// The webhook answered 200 to 206.
    public static let success = SendAttemptResult(rawValue: "SUCCESS")
    /// The webhook did not answer in time.
    public static let timedOut = SendAttemptResult(rawValue: "TIMED_OUT")
    /// The TLS connection failed.
    public static let tlsIssue = SendAttemptResult(rawValue: "TLS_ISSUE")
    /// The webhook redirected in a circle.
    public static let circularRedirect = SendAttemptResult(rawValue: "CIRCULAR_REDIRECT")
    /// The webhook sent no response.
    public static let noResponse = SendAttemptResult(rawValue: "NO_RESPONSE")
    /// The connection could not be made or broke (refused, unresolved).
    public static let socketIssue = SendAttemptResult(rawValue: "SOCKET_ISSUE")
    /// The response used a character set Apple does not support.
    public static let unsupportedCharset = SendAttemptResult(rawValue: "UNSUPPORTED_CHARSET")
    /// The response was not valid HTTP.
    public static let invalidResponse = SendAttemptResult(rawValue: "INVALID_RESPONSE")
    /// The connection closed before the response was complete.
    public static let prematureClose = SendAttemptResult(rawValue: "PREMATURE_CLOSE")
    /// The webhook answered a status outside 200 to 206.
    public static let unsuccessfulHTTPResponseCode = SendAttemptResult(rawValue: "UNSUCCESSFUL_HTTP_RESPONSE_CODE")
    /// Any other failure.
    public static let other = SendAttemptResult(rawValue: "OTHER")

    /// Every value Apple documents, in the documentation's order.
    public static let allKnown: [SendAttemptResult] = [
        .success, .timedOut, .tlsIssue, .circularRedirect, .noResponse, .socketIssue, .unsupportedCharset,
        .invalidResponse, .prematureClose, .unsuccessfulHTTPResponseCode, .other,
    ]
}
