// The wire enums of App Store signed data, as open sets (a subscription's own are in SubscriptionWireEnums.swift).

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
