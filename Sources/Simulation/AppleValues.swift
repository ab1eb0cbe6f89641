public import AppStoreModel
public import Profile

// The profile's words for products and offers, as AppStoreModel's wire values: the one place that maps them, so a
// new kind in the profile is a compile error here until it has its Apple value.

extension ProductKind {
    /// Apple's `type` in a transaction.
    public var productType: ProductType {
        switch self {
        case .consumable: .consumable
        case .nonConsumable: .nonConsumable
        case .autoRenewable: .autoRenewableSubscription
        case .nonRenewing: .nonRenewingSubscription
        }
    }

    /// The kind whose `productType` is `type`, if any.
    /// - Parameter type: Apple's product type.
    public init?(_ type: ProductType) {
        guard let kind = Self.allCases.first(where: { $0.productType == type }) else { return nil }
        self = kind
    }
}

extension Offer.Kind {
    /// Apple's `offerType`.
    public var offerType: OfferType {
        switch self {
        case .introductory: .introductoryOffer
        case .promotional: .promotionalOffer
        case .offerCode: .offerCode
        case .winBack: .winBackOffer
        }
    }
}

extension Offer.Discount {
    /// Apple's `offerDiscountType`.
    public var offerDiscountType: OfferDiscountType {
        switch self {
        case .freeTrial: .freeTrial
        case .payAsYouGo: .payAsYouGo
        case .payUpFront: .payUpFront
        }
    }
}
