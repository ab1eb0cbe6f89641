public import AppStoreModel

/// What minting assumes where the caller gives no transaction: a product type, a price and a status that
/// agree with a notification kind, and a transaction whose dates and identifiers agree with it.
extension Minter {
    /// The product type a kind implies when none is given: an auto-renewable subscription for
    /// subscription events, a consumable for refunds, consumption requests and one-time charges, a
    /// non-consumable for Family Sharing revocations.
    public static func defaultProductType(for kind: NotificationKind?) -> ProductType {
        guard let kind else { return .autoRenewableSubscription }
        switch kind.content {
        case .oneTimeTransaction: return .consumable
        case .transaction: return kind.notificationType == .revoke ? .nonConsumable : .consumable
        default: return .autoRenewableSubscription
        }
    }

    /// A plausible price in milliunits for a product type.
    public static func defaultPrice(for type: ProductType) -> Int64 {
        switch type {
        case .autoRenewableSubscription: return 9990
        case .consumable: return 990
        case .nonRenewingSubscription: return 19990
        default: return 4990
        }
    }

    /// The subscription status (`data.status`) a kind reports as of its `signedDate`.
    public static func status(for kind: NotificationKind) -> Status {
        switch kind.notificationType {
        case .didFailToRenew: return kind.subtype == .gracePeriod ? .billingGracePeriod : .billingRetry
        case .gracePeriodExpired: return .billingRetry
        case .expired: return .expired
        case .refund, .revoke: return .revoked
        default: return .active
        }
    }

    /// A transaction whose dates and identifiers agree with a notification kind, with fresh random
    /// identifiers: an expired subscription expired before `signedDate`, a renewal has its own transaction
    /// ID and the original one of its first purchase, a Family Sharing revocation is family shared.
    ///
    /// The minting methods use it when given no transaction. The app's identity, `signedDate` and
    /// `transactionReason` are left out: ``transactionPayload(_:kind:signedDate:)`` fills them in.
    /// - Parameters:
    ///   - kind: the notification the transaction will be minted into, or `nil` for a bare transaction.
    ///   - productId: the product.
    ///   - productType: the product type; `nil` picks what the kind implies (``defaultProductType(for:)``).
    ///   - appAccountToken: the customer's UUID, or `nil` to omit it. Not validated here, so that invalid
    ///     values can be minted on purpose.
    ///   - signedDate: when the App Store signs the data, UNIX ms; every other date is placed relative to it.
    /// - Returns: the transaction, priced in USD in the United States storefront.
    public static func impliedTransaction(
        by kind: NotificationKind?,
        productId: String = "com.example.paystorm.monthly",
        productType: ProductType? = nil,
        appAccountToken: String? = nil,
        signedDate: Int64
    ) -> JWSTransactionDecodedPayload {
        let type = productType ?? defaultProductType(for: kind)
        let isSubscription = type == .autoRenewableSubscription
        let event = kind?.notificationType
        // A subscription that failed to renew or expired ended its last period before the notification.
        let lapsed = event == .didFailToRenew || event == .gracePeriodExpired || event == .expired
        let period = defaultPeriodMilliseconds
        let purchaseDate = lapsed && isSubscription ? signedDate - period - hourMilliseconds : signedDate - 60_000
        let transactionId = randomTransactionId()
        let firstBuy = !isSubscription || kind == nil || kind?.subtype == .initialBuy
        return JWSTransactionDecodedPayload(
            originalTransactionId: firstBuy ? transactionId : randomTransactionId(),
            transactionId: transactionId,
            webOrderLineItemId: isSubscription ? randomTransactionId() : nil,
            productId: productId,
            subscriptionGroupIdentifier: isSubscription ? "21000001" : nil,
            purchaseDate: purchaseDate,
            originalPurchaseDate: firstBuy ? purchaseDate : purchaseDate - 3 * period,
            expiresDate: isSubscription ? purchaseDate + period : nil,
            quantity: 1,
            type: type,
            appAccountToken: appAccountToken,
            inAppOwnershipType: event == .revoke ? .familyShared : .purchased,
            storefront: "USA",
            storefrontId: "143441",
            currency: "USD",
            price: defaultPrice(for: type),
            appTransactionId: randomTransactionId()
        )
    }
}
