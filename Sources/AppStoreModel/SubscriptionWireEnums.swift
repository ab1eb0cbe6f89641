// The wire enums of a subscription (its renewal info, its status, its offers' payment modes), as open sets.

/// Why a subscription expired. An open set: any value decodes and is kept, so unknown and deliberately invalid
/// values round-trip.
public struct ExpirationIntent: OpenWireEnum, ExpressibleByIntegerLiteral {
    /// The value exactly as it appears in the JSON.
    public var rawValue: Int

    /// Creates a value from its JSON form; any value is accepted.
    public init(rawValue: Int) {
        self.rawValue = rawValue
    }

    /// The customer cancelled.
    public static let customerCancelled = ExpirationIntent(rawValue: 1)
    /// A billing error.
    public static let billingError = ExpirationIntent(rawValue: 2)
    /// The customer did not consent to a price increase.
    public static let customerDidNotConsentToPriceIncrease = ExpirationIntent(rawValue: 3)
    /// The product was not available at renewal.
    public static let productNotAvailable = ExpirationIntent(rawValue: 4)
    /// Another reason.
    public static let other = ExpirationIntent(rawValue: 5)

    /// Every value Apple documents, in the documentation's order.
    public static let allKnown: [ExpirationIntent] = [
        .customerCancelled,
        .billingError,
        .customerDidNotConsentToPriceIncrease,
        .productNotAvailable,
        .other,
    ]
}

/// The payment mode of a subscription offer. An open set: any value decodes and is kept, so unknown and
/// deliberately invalid values round-trip.
public struct OfferDiscountType: OpenWireEnum, ExpressibleByStringLiteral {
    /// The value exactly as it appears in the JSON.
    public var rawValue: String

    /// Creates a value from its JSON form; any value is accepted.
    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// A free trial.
    public static let freeTrial = OfferDiscountType(rawValue: "FREE_TRIAL")
    /// A discounted price each period.
    public static let payAsYouGo = OfferDiscountType(rawValue: "PAY_AS_YOU_GO")
    /// One discounted payment up front.
    public static let payUpFront = OfferDiscountType(rawValue: "PAY_UP_FRONT")
    /// A one-time charge.
    public static let oneTime = OfferDiscountType(rawValue: "ONE_TIME")

    /// Every value Apple documents, in the documentation's order.
    public static let allKnown: [OfferDiscountType] = [
        .freeTrial,
        .payAsYouGo,
        .payUpFront,
        .oneTime,
    ]
}

/// Whether the customer consented to a price increase. An open set: any value decodes and is kept, so unknown and
/// deliberately invalid values round-trip.
public struct PriceIncreaseStatus: OpenWireEnum, ExpressibleByIntegerLiteral {
    /// The value exactly as it appears in the JSON.
    public var rawValue: Int

    /// Creates a value from its JSON form; any value is accepted.
    public init(rawValue: Int) {
        self.rawValue = rawValue
    }

    /// The customer has not responded to a consent-required increase.
    public static let customerHasNotResponded = PriceIncreaseStatus(rawValue: 0)
    /// The customer consented, or the increase needed no consent.
    public static let customerConsentedOrWasNotifiedWithoutNeedingConsent = PriceIncreaseStatus(rawValue: 1)

    /// Every value Apple documents, in the documentation's order.
    public static let allKnown: [PriceIncreaseStatus] = [
        .customerHasNotResponded,
        .customerConsentedOrWasNotifiedWithoutNeedingConsent,
    ]
}

/// Whether the subscription renews automatically. An open set: any value decodes and is kept, so unknown and
/// deliberately invalid values round-trip.
public struct AutoRenewStatus: OpenWireEnum, ExpressibleByIntegerLiteral {
    /// The value exactly as it appears in the JSON.
    public var rawValue: Int

    /// Creates a value from its JSON form; any value is accepted.
    public init(rawValue: Int) {
        self.rawValue = rawValue
    }

    /// Auto-renew is off.
    public static let off = AutoRenewStatus(rawValue: 0)
    /// Auto-renew is on.
    public static let on = AutoRenewStatus(rawValue: 1)

    /// Every value Apple documents, in the documentation's order.
    public static let allKnown: [AutoRenewStatus] = [
        .off,
        .on,
    ]
}

/// The status of an auto-renewable subscription as of `signedDate` (`data.status`). An open set: any value
/// decodes and is kept, so unknown and deliberately invalid values round-trip.
public struct Status: OpenWireEnum, ExpressibleByIntegerLiteral {
    /// The value exactly as it appears in the JSON.
    public var rawValue: Int

    /// Creates a value from its JSON form; any value is accepted.
    public init(rawValue: Int) {
        self.rawValue = rawValue
    }

    /// Active.
    public static let active = Status(rawValue: 1)
    /// Expired.
    public static let expired = Status(rawValue: 2)
    /// In the billing retry period.
    public static let billingRetry = Status(rawValue: 3)
    /// In the billing grace period.
    public static let billingGracePeriod = Status(rawValue: 4)
    /// Revoked.
    public static let revoked = Status(rawValue: 5)

    /// Every value Apple documents, in the documentation's order.
    public static let allKnown: [Status] = [
        .active,
        .expired,
        .billingRetry,
        .billingGracePeriod,
        .revoked,
    ]
}

/// The billing plan of a commitment subscription (`billingPlanType`, `renewalBillingPlanType`). An open set: any
/// value decodes and is kept, so unknown and deliberately invalid values round-trip.
public struct BillingPlanType: OpenWireEnum, ExpressibleByStringLiteral {
    /// The value exactly as it appears in the JSON.
    public var rawValue: String

    /// Creates a value from its JSON form; any value is accepted.
    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// Billed up front for the whole commitment.
    public static let billedUpfront = BillingPlanType(rawValue: "BILLED_UPFRONT")
    /// Billed monthly.
    public static let monthly = BillingPlanType(rawValue: "MONTHLY")

    /// Every value Apple documents, in the documentation's order.
    public static let allKnown: [BillingPlanType] = [
        .billedUpfront,
        .monthly,
    ]
}
