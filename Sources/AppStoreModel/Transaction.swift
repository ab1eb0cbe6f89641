public import Primitives

// Property names are Apple's JSON keys exactly; every property is optional because Apple omits
// the fields that do not apply, and the synthesized encoder omits nil rather than writing null.

/// The payload of a signed transaction (`signedTransactionInfo`, or a device's `jwsRepresentation`).
public struct JWSTransactionDecodedPayload: Codable, Hashable, Sendable {
    /// The original purchase's transaction identifier.
    public var originalTransactionId: String?

    /// The transaction identifier.
    public var transactionId: String?

    /// The subscription purchase event identifier across devices.
    public var webOrderLineItemId: String?

    /// The app's bundle identifier (checked).
    public var bundleId: String?

    /// The product identifier.
    public var productId: String?

    /// The subscription group of the product.
    public var subscriptionGroupIdentifier: String?

    /// When the App Store charged the customer, in UNIX milliseconds.
    public var purchaseDate: Int64?

    /// The purchase date of the original transaction, in UNIX milliseconds.
    public var originalPurchaseDate: Int64?

    /// When the subscription expires or renews, in UNIX milliseconds; auto-renewable subscriptions only.
    public var expiresDate: Int64?

    /// How many consumables were bought.
    public var quantity: Int32?

    /// The in-app purchase type.
    public var type: ProductType?

    /// The UUID the app associated with the customer; a `String` so that invalid values can be emitted (see
    /// `AppStoreJSON.isValidUUID`).
    public var appAccountToken: String?

    /// Purchased or Family Shared.
    public var inAppOwnershipType: InAppOwnershipType?

    /// When the App Store signed the JWS, in UNIX milliseconds; also the chain validation date when online checks
    /// are off.
    public var signedDate: Int64?

    /// Why it was refunded or revoked.
    public var revocationReason: RevocationReason?

    /// When it was refunded or revoked, in UNIX milliseconds.
    public var revocationDate: Int64?

    /// Whether the customer upgraded to another subscription.
    public var isUpgraded: Bool?

    /// The kind of offer applied.
    public var offerType: OfferType?

    /// The offer's identifier.
    public var offerIdentifier: String?

    /// The server environment (checked).
    public var environment: Environment?

    /// The storefront country code (ISO 3166-1 alpha-3).
    public var storefront: String?

    /// The App Store storefront identifier.
    public var storefrontId: String?

    /// Purchase or renewal.
    public var transactionReason: TransactionReason?

    /// The ISO 4217 currency code of `price`.
    public var currency: String?

    /// The price in milliunits (9.99 is 9990), for the whole quantity and net of offers.
    public var price: Int64?

    /// The payment mode of the offer.
    public var offerDiscountType: OfferDiscountType?

    /// The app transaction identifier of the customer's app download.
    public var appTransactionId: String?

    /// The offer's duration, ISO 8601 (for example `P1M`).
    public var offerPeriod: String?

    /// The kind of refund or revocation.
    public var revocationType: RevocationType?

    /// The refunded share in milliunits of a percent (100% is 100000).
    public var revocationPercentage: Int32?

    /// Advanced Commerce API data, kept as arbitrary JSON.
    public var advancedCommerceInfo: JSONValue?

    /// The billing plan of a commitment subscription.
    public var billingPlanType: BillingPlanType?

    /// Details of a commitment subscription.
    public var commitmentInfo: TransactionCommitmentInfo?

    /// Creates a value; every field defaults to absent, and absent fields are omitted when encoding.
    public init(
        originalTransactionId: String? = nil,
        transactionId: String? = nil,
        webOrderLineItemId: String? = nil,
        bundleId: String? = nil,
        productId: String? = nil,
        subscriptionGroupIdentifier: String? = nil,
        purchaseDate: Int64? = nil,
        originalPurchaseDate: Int64? = nil,
        expiresDate: Int64? = nil,
        quantity: Int32? = nil,
        type: ProductType? = nil,
        appAccountToken: String? = nil,
        inAppOwnershipType: InAppOwnershipType? = nil,
        signedDate: Int64? = nil,
        revocationReason: RevocationReason? = nil,
        revocationDate: Int64? = nil,
        isUpgraded: Bool? = nil,
        offerType: OfferType? = nil,
        offerIdentifier: String? = nil,
        environment: Environment? = nil,
        storefront: String? = nil,
        storefrontId: String? = nil,
        transactionReason: TransactionReason? = nil,
        currency: String? = nil,
        price: Int64? = nil,
        offerDiscountType: OfferDiscountType? = nil,
        appTransactionId: String? = nil,
        offerPeriod: String? = nil,
        revocationType: RevocationType? = nil,
        revocationPercentage: Int32? = nil,
        advancedCommerceInfo: JSONValue? = nil,
        billingPlanType: BillingPlanType? = nil,
        commitmentInfo: TransactionCommitmentInfo? = nil
    ) {
        self.originalTransactionId = originalTransactionId
        self.transactionId = transactionId
        self.webOrderLineItemId = webOrderLineItemId
        self.bundleId = bundleId
        self.productId = productId
        self.subscriptionGroupIdentifier = subscriptionGroupIdentifier
        self.purchaseDate = purchaseDate
        self.originalPurchaseDate = originalPurchaseDate
        self.expiresDate = expiresDate
        self.quantity = quantity
        self.type = type
        self.appAccountToken = appAccountToken
        self.inAppOwnershipType = inAppOwnershipType
        self.signedDate = signedDate
        self.revocationReason = revocationReason
        self.revocationDate = revocationDate
        self.isUpgraded = isUpgraded
        self.offerType = offerType
        self.offerIdentifier = offerIdentifier
        self.environment = environment
        self.storefront = storefront
        self.storefrontId = storefrontId
        self.transactionReason = transactionReason
        self.currency = currency
        self.price = price
        self.offerDiscountType = offerDiscountType
        self.appTransactionId = appTransactionId
        self.offerPeriod = offerPeriod
        self.revocationType = revocationType
        self.revocationPercentage = revocationPercentage
        self.advancedCommerceInfo = advancedCommerceInfo
        self.billingPlanType = billingPlanType
        self.commitmentInfo = commitmentInfo
    }
}

/// The `commitmentInfo` of a transaction on a commitment (12-month) plan.
public struct TransactionCommitmentInfo: Codable, Hashable, Sendable {
    /// Which billing period of the commitment this is.
    public var billingPeriodNumber: Int32?

    /// When the commitment ends, in UNIX milliseconds.
    public var commitmentExpiresDate: Int64?

    /// The commitment's total price in milliunits.
    public var commitmentPrice: Int64?

    /// How many billing periods the commitment has.
    public var totalBillingPeriods: Int32?

    /// Creates a value; every field defaults to absent, and absent fields are omitted when encoding.
    public init(
        billingPeriodNumber: Int32? = nil,
        commitmentExpiresDate: Int64? = nil,
        commitmentPrice: Int64? = nil,
        totalBillingPeriods: Int32? = nil
    ) {
        self.billingPeriodNumber = billingPeriodNumber
        self.commitmentExpiresDate = commitmentExpiresDate
        self.commitmentPrice = commitmentPrice
        self.totalBillingPeriods = totalBillingPeriods
    }
}
