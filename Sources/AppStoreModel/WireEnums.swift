// The wire enums of App Store signed data, as open sets.

/// The server environment: `Sandbox`, `Production`, `Xcode` or `LocalTesting`. An open set: any value decodes and
/// is kept, so unknown and deliberately invalid values round-trip.
public struct Environment: OpenWireEnum, ExpressibleByStringLiteral {
    /// The value exactly as it appears in the JSON.
    public var rawValue: String

    /// Creates a value from its JSON form; any value is accepted.
    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// The sandbox environment.
    public static let sandbox = Environment(rawValue: "Sandbox")
    /// The production environment.
    public static let production = Environment(rawValue: "Production")
    /// StoreKit testing in Xcode; verifiers skip the signature check for it.
    public static let xcode = Environment(rawValue: "Xcode")
    /// Local unit testing; verifiers skip the signature check for it.
    public static let localTesting = Environment(rawValue: "LocalTesting")

    /// Every value Apple documents, in the documentation's order.
    public static let allKnown: [Environment] = [
        .sandbox,
        .production,
        .xcode,
        .localTesting,
    ]
}

/// The in-app purchase type of a transaction (`type`). An open set: any value decodes and is kept, so unknown and
/// deliberately invalid values round-trip.
public struct ProductType: OpenWireEnum, ExpressibleByStringLiteral {
    /// The value exactly as it appears in the JSON.
    public var rawValue: String

    /// Creates a value from its JSON form; any value is accepted.
    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// An auto-renewable subscription.
    public static let autoRenewableSubscription = ProductType(rawValue: "Auto-Renewable Subscription")
    /// A non-consumable purchase.
    public static let nonConsumable = ProductType(rawValue: "Non-Consumable")
    /// A consumable purchase.
    public static let consumable = ProductType(rawValue: "Consumable")
    /// A non-renewing subscription.
    public static let nonRenewingSubscription = ProductType(rawValue: "Non-Renewing Subscription")

    /// Every value Apple documents, in the documentation's order.
    public static let allKnown: [ProductType] = [
        .autoRenewableSubscription,
        .nonConsumable,
        .consumable,
        .nonRenewingSubscription,
    ]
}

/// Whether the customer bought the item or has it through Family Sharing. An open set: any value decodes and is
/// kept, so unknown and deliberately invalid values round-trip.
public struct InAppOwnershipType: OpenWireEnum, ExpressibleByStringLiteral {
    /// The value exactly as it appears in the JSON.
    public var rawValue: String

    /// Creates a value from its JSON form; any value is accepted.
    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// The customer bought it.
    public static let purchased = InAppOwnershipType(rawValue: "PURCHASED")
    /// The customer has access through Family Sharing.
    public static let familyShared = InAppOwnershipType(rawValue: "FAMILY_SHARED")

    /// Every value Apple documents, in the documentation's order.
    public static let allKnown: [InAppOwnershipType] = [
        .purchased,
        .familyShared,
    ]
}

/// Why the transaction happened. An open set: any value decodes and is kept, so unknown and deliberately invalid
/// values round-trip.
public struct TransactionReason: OpenWireEnum, ExpressibleByStringLiteral {
    /// The value exactly as it appears in the JSON.
    public var rawValue: String

    /// Creates a value from its JSON form; any value is accepted.
    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// The customer initiated the purchase.
    public static let purchase = TransactionReason(rawValue: "PURCHASE")
    /// The App Store renewed a subscription.
    public static let renewal = TransactionReason(rawValue: "RENEWAL")

    /// Every value Apple documents, in the documentation's order.
    public static let allKnown: [TransactionReason] = [
        .purchase,
        .renewal,
    ]
}

/// The kind of subscription offer applied. An open set: any value decodes and is kept, so unknown and
/// deliberately invalid values round-trip.
public struct OfferType: OpenWireEnum, ExpressibleByIntegerLiteral {
    /// The value exactly as it appears in the JSON.
    public var rawValue: Int

    /// Creates a value from its JSON form; any value is accepted.
    public init(rawValue: Int) {
        self.rawValue = rawValue
    }

    /// An introductory offer.
    public static let introductoryOffer = OfferType(rawValue: 1)
    /// A promotional offer.
    public static let promotionalOffer = OfferType(rawValue: 2)
    /// An offer code.
    public static let offerCode = OfferType(rawValue: 3)
    /// A win-back offer.
    public static let winBackOffer = OfferType(rawValue: 4)

    /// Every value Apple documents, in the documentation's order.
    public static let allKnown: [OfferType] = [
        .introductoryOffer,
        .promotionalOffer,
        .offerCode,
        .winBackOffer,
    ]
}

/// Why the App Store refunded or revoked a transaction. An open set: any value decodes and is kept, so unknown
/// and deliberately invalid values round-trip.
public struct RevocationReason: OpenWireEnum, ExpressibleByIntegerLiteral {
    /// The value exactly as it appears in the JSON.
    public var rawValue: Int

    /// Creates a value from its JSON form; any value is accepted.
    public init(rawValue: Int) {
        self.rawValue = rawValue
    }

    /// Refunded for another reason, such as an accidental purchase.
    public static let refundedForOtherReason = RevocationReason(rawValue: 0)
    /// Refunded due to an actual or perceived issue in the app.
    public static let refundedDueToIssue = RevocationReason(rawValue: 1)

    /// Every value Apple documents, in the documentation's order.
    public static let allKnown: [RevocationReason] = [
        .refundedForOtherReason,
        .refundedDueToIssue,
    ]
}

/// The kind of refund or revocation. An open set: any value decodes and is kept, so unknown and deliberately
/// invalid values round-trip.
public struct RevocationType: OpenWireEnum, ExpressibleByStringLiteral {
    /// The value exactly as it appears in the JSON.
    public var rawValue: String

    /// Creates a value from its JSON form; any value is accepted.
    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// A full refund.
    public static let refundFull = RevocationType(rawValue: "REFUND_FULL")
    /// A prorated refund; see `revocationPercentage`.
    public static let refundProrated = RevocationType(rawValue: "REFUND_PRORATED")
    /// Family Sharing access was revoked.
    public static let familyRevoke = RevocationType(rawValue: "FAMILY_REVOKE")

    /// Every value Apple documents, in the documentation's order.
    public static let allKnown: [RevocationType] = [
        .refundFull,
        .refundProrated,
        .familyRevoke,
    ]
}

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

/// Why the customer asked for a refund (`CONSUMPTION_REQUEST`). An open set: any value decodes and is kept, so
/// unknown and deliberately invalid values round-trip.
public struct ConsumptionRequestReason: OpenWireEnum, ExpressibleByStringLiteral {
    /// The value exactly as it appears in the JSON.
    public var rawValue: String

    /// Creates a value from its JSON form; any value is accepted.
    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// The customer did not intend to buy.
    public static let unintendedPurchase = ConsumptionRequestReason(rawValue: "UNINTENDED_PURCHASE")
    /// The customer did not receive the item.
    public static let fulfillmentIssue = ConsumptionRequestReason(rawValue: "FULFILLMENT_ISSUE")
    /// The customer is not satisfied.
    public static let unsatisfiedWithPurchase = ConsumptionRequestReason(rawValue: "UNSATISFIED_WITH_PURCHASE")
    /// A legal reason.
    public static let legal = ConsumptionRequestReason(rawValue: "LEGAL")
    /// Another reason.
    public static let other = ConsumptionRequestReason(rawValue: "OTHER")

    /// Every value Apple documents, in the documentation's order.
    public static let allKnown: [ConsumptionRequestReason] = [
        .unintendedPurchase,
        .fulfillmentIssue,
        .unsatisfiedWithPurchase,
        .legal,
        .other,
    ]
}

/// The platform of the original app purchase. An open set: any value decodes and is kept, so unknown and
/// deliberately invalid values round-trip.
public struct PurchasePlatform: OpenWireEnum, ExpressibleByStringLiteral {
    /// The value exactly as it appears in the JSON.
    public var rawValue: String

    /// Creates a value from its JSON form; any value is accepted.
    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// iOS.
    public static let iOS = PurchasePlatform(rawValue: "iOS")
    /// macOS.
    public static let macOS = PurchasePlatform(rawValue: "macOS")
    /// tvOS.
    public static let tvOS = PurchasePlatform(rawValue: "tvOS")
    /// visionOS.
    public static let visionOS = PurchasePlatform(rawValue: "visionOS")

    /// Every value Apple documents, in the documentation's order.
    public static let allKnown: [PurchasePlatform] = [
        .iOS,
        .macOS,
        .tvOS,
        .visionOS,
    ]
}
