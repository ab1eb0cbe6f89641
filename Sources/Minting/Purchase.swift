public import AppStoreModel

/// The app whose signed data is minted: the identity every verifier checks.
public struct AppIdentity: Sendable, Hashable {
    /// The bundle identifier (`bundleId`, checked by every verifier).
    public var bundleId: String
    /// The app's Apple ID (`appAppleId`, checked in Production).
    public var appAppleId: Int64?
    /// The app's build version (`bundleVersion`).
    public var bundleVersion: String
    /// The environment written into every payload (checked by every verifier).
    public var environment: Environment

    /// Creates an identity. The defaults mint Sandbox data for `com.example.paystorm`.
    public init(
        bundleId: String = "com.example.paystorm",
        appAppleId: Int64? = 1_234_567_890,
        bundleVersion: String = "1.0",
        environment: Environment = .sandbox
    ) {
        self.bundleId = bundleId
        self.appAppleId = appAppleId
        self.bundleVersion = bundleVersion
        self.environment = environment
    }
}

/// The facts of one purchase that a minted transaction, renewal info and notification describe.
///
/// `Purchase(kind:productId:productType:appAccountToken:signedDate:)` fills in values that agree with a
/// notification kind (an expired subscription expired before `signedDate`, a renewal has its own
/// transaction ID and the original one of its first purchase, and so on); a simulation sets every field
/// itself with the memberwise initializer.
public struct Purchase: Sendable, Hashable {
    /// The product (`productId`).
    public var productId: String
    /// The product type (`type`).
    public var productType: ProductType
    /// The UUID the app associated with the customer, or `nil` to omit it. Not validated here, so that
    /// invalid values can be minted on purpose.
    public var appAccountToken: String?
    /// This transaction's identifier.
    public var transactionId: String
    /// The identifier of the first transaction of the subscription or purchase.
    public var originalTransactionId: String
    /// The subscription purchase event identifier; auto-renewable subscriptions only.
    public var webOrderLineItemId: String?
    /// The subscription group; auto-renewable subscriptions only.
    public var subscriptionGroupIdentifier: String?
    /// When the customer was charged, UNIX ms.
    public var purchaseDate: Int64
    /// When the original transaction was bought, UNIX ms.
    public var originalPurchaseDate: Int64
    /// When the current period ends, UNIX ms; auto-renewable subscriptions only.
    public var expiresDate: Int64?
    /// How many items were bought.
    public var quantity: Int32
    /// The price in milliunits of `currency` (9.99 is 9990), for the whole quantity.
    public var price: Int64
    /// The ISO 4217 currency.
    public var currency: String
    /// The ISO 3166-1 alpha-3 storefront.
    public var storefront: String
    /// The App Store storefront identifier.
    public var storefrontId: String
    /// The product the subscription renews to; `nil` means `productId`.
    public var autoRenewProductId: String?
    /// Purchased, or shared through Family Sharing.
    public var inAppOwnershipType: InAppOwnershipType
    /// The app transaction identifier of the customer's download.
    public var appTransactionId: String?

    /// Creates a purchase from every fact.
    public init(
        productId: String,
        productType: ProductType,
        appAccountToken: String? = nil,
        transactionId: String,
        originalTransactionId: String,
        webOrderLineItemId: String? = nil,
        subscriptionGroupIdentifier: String? = nil,
        purchaseDate: Int64,
        originalPurchaseDate: Int64,
        expiresDate: Int64? = nil,
        quantity: Int32 = 1,
        price: Int64,
        currency: String = "USD",
        storefront: String = "USA",
        storefrontId: String = "143441",
        autoRenewProductId: String? = nil,
        inAppOwnershipType: InAppOwnershipType = .purchased,
        appTransactionId: String? = nil
    ) {
        self.productId = productId
        self.productType = productType
        self.appAccountToken = appAccountToken
        self.transactionId = transactionId
        self.originalTransactionId = originalTransactionId
        self.webOrderLineItemId = webOrderLineItemId
        self.subscriptionGroupIdentifier = subscriptionGroupIdentifier
        self.purchaseDate = purchaseDate
        self.originalPurchaseDate = originalPurchaseDate
        self.expiresDate = expiresDate
        self.quantity = quantity
        self.price = price
        self.currency = currency
        self.storefront = storefront
        self.storefrontId = storefrontId
        self.autoRenewProductId = autoRenewProductId
        self.inAppOwnershipType = inAppOwnershipType
        self.appTransactionId = appTransactionId
    }

    /// Creates a purchase whose dates and identifiers agree with a notification kind, with fresh random
    /// transaction identifiers.
    /// - Parameters:
    ///   - kind: the notification the purchase will be minted into, or `nil` for a bare transaction.
    ///   - productId: the product.
    ///   - productType: the product type; `nil` picks what the kind implies (`Minter.defaultProductType(for:)`).
    ///   - appAccountToken: the customer's UUID, or `nil` to omit it.
    ///   - signedDate: when the App Store signs the data, UNIX ms; every other date is placed relative to it.
    public init(
        kind: NotificationKind?,
        productId: String = "com.example.paystorm.monthly",
        productType: ProductType? = nil,
        appAccountToken: String? = nil,
        signedDate: Int64
    ) {
        let type = productType ?? Minter.defaultProductType(for: kind)
        let isSubscription = type == .autoRenewableSubscription
        let event = kind?.notificationType
        // A subscription that failed to renew or expired ended its last period before the notification.
        let lapsed = event == .didFailToRenew || event == .gracePeriodExpired || event == .expired
        let period = Minter.defaultPeriodMilliseconds
        let purchaseDate =
            lapsed && isSubscription ? signedDate - period - Minter.hourMilliseconds : signedDate - 60_000
        let transactionId = Minter.randomTransactionId()
        let firstBuy = !isSubscription || kind == nil || kind?.subtype == .initialBuy
        self.init(
            productId: productId,
            productType: type,
            appAccountToken: appAccountToken,
            transactionId: transactionId,
            originalTransactionId: firstBuy ? transactionId : Minter.randomTransactionId(),
            webOrderLineItemId: isSubscription ? Minter.randomTransactionId() : nil,
            subscriptionGroupIdentifier: isSubscription ? "21000001" : nil,
            purchaseDate: purchaseDate,
            originalPurchaseDate: firstBuy ? purchaseDate : purchaseDate - 3 * period,
            expiresDate: isSubscription ? purchaseDate + period : nil,
            quantity: 1,
            price: Minter.defaultPrice(for: type),
            inAppOwnershipType: event == .revoke ? .familyShared : .purchased,
            appTransactionId: Minter.randomTransactionId()
        )
    }
}
