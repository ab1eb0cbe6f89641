public import Primitives

// Property names are Apple's JSON keys exactly; every property is optional because Apple omits
// the fields that do not apply, and the synthesized encoder omits nil rather than writing null.

/// The payload of a signed renewal info (`signedRenewalInfo`); auto-renewable subscriptions only. It carries no
/// `bundleId`.
public struct JWSRenewalInfoDecodedPayload: Codable, Hashable, Sendable {
    /// Why the subscription expired.
    public var expirationIntent: ExpirationIntent?

    /// The original purchase's transaction identifier.
    public var originalTransactionId: String?

    /// The product that renews at the next billing period.
    public var autoRenewProductId: String?

    /// The current product.
    public var productId: String?

    /// Whether auto-renew is on.
    public var autoRenewStatus: AutoRenewStatus?

    /// Whether the App Store is retrying billing.
    public var isInBillingRetryPeriod: Bool?

    /// Whether the customer consented to a price increase.
    public var priceIncreaseStatus: PriceIncreaseStatus?

    /// When the billing grace period ends, in UNIX milliseconds.
    public var gracePeriodExpiresDate: Int64?

    /// The kind of offer that applies at renewal.
    public var offerType: OfferType?

    /// The offer's identifier.
    public var offerIdentifier: String?

    /// When the App Store signed the JWS, in UNIX milliseconds.
    public var signedDate: Int64?

    /// The server environment (checked).
    public var environment: Environment?

    /// The start of the recent run of subscription periods (lapses under 60 days ignored), in UNIX milliseconds.
    public var recentSubscriptionStartDate: Int64?

    /// When the subscription renews, in UNIX milliseconds.
    public var renewalDate: Int64?

    /// The ISO 4217 currency code of `renewalPrice`.
    public var currency: String?

    /// The renewal price in milliunits.
    public var renewalPrice: Int64?

    /// The payment mode of the offer.
    public var offerDiscountType: OfferDiscountType?

    /// Win-back offers the customer is eligible for, best first.
    public var eligibleWinBackOfferIds: [String]?

    /// The UUID the app associated with the customer (a `String`, see `AppStoreJSON.isValidUUID`).
    public var appAccountToken: String?

    /// The app transaction identifier.
    public var appTransactionId: String?

    /// The offer's duration, ISO 8601.
    public var offerPeriod: String?

    /// Advanced Commerce API data, kept as arbitrary JSON.
    public var advancedCommerceInfo: JSONValue?

    /// Details of a commitment subscription's renewal.
    public var commitmentInfo: RenewalCommitmentInfo?

    /// The billing plan at renewal.
    public var renewalBillingPlanType: BillingPlanType?

    /// Creates a value; every field defaults to absent, and absent fields are omitted when encoding.
    public init(
        expirationIntent: ExpirationIntent? = nil,
        originalTransactionId: String? = nil,
        autoRenewProductId: String? = nil,
        productId: String? = nil,
        autoRenewStatus: AutoRenewStatus? = nil,
        isInBillingRetryPeriod: Bool? = nil,
        priceIncreaseStatus: PriceIncreaseStatus? = nil,
        gracePeriodExpiresDate: Int64? = nil,
        offerType: OfferType? = nil,
        offerIdentifier: String? = nil,
        signedDate: Int64? = nil,
        environment: Environment? = nil,
        recentSubscriptionStartDate: Int64? = nil,
        renewalDate: Int64? = nil,
        currency: String? = nil,
        renewalPrice: Int64? = nil,
        offerDiscountType: OfferDiscountType? = nil,
        eligibleWinBackOfferIds: [String]? = nil,
        appAccountToken: String? = nil,
        appTransactionId: String? = nil,
        offerPeriod: String? = nil,
        advancedCommerceInfo: JSONValue? = nil,
        commitmentInfo: RenewalCommitmentInfo? = nil,
        renewalBillingPlanType: BillingPlanType? = nil
    ) {
        self.expirationIntent = expirationIntent
        self.originalTransactionId = originalTransactionId
        self.autoRenewProductId = autoRenewProductId
        self.productId = productId
        self.autoRenewStatus = autoRenewStatus
        self.isInBillingRetryPeriod = isInBillingRetryPeriod
        self.priceIncreaseStatus = priceIncreaseStatus
        self.gracePeriodExpiresDate = gracePeriodExpiresDate
        self.offerType = offerType
        self.offerIdentifier = offerIdentifier
        self.signedDate = signedDate
        self.environment = environment
        self.recentSubscriptionStartDate = recentSubscriptionStartDate
        self.renewalDate = renewalDate
        self.currency = currency
        self.renewalPrice = renewalPrice
        self.offerDiscountType = offerDiscountType
        self.eligibleWinBackOfferIds = eligibleWinBackOfferIds
        self.appAccountToken = appAccountToken
        self.appTransactionId = appTransactionId
        self.offerPeriod = offerPeriod
        self.advancedCommerceInfo = advancedCommerceInfo
        self.commitmentInfo = commitmentInfo
        self.renewalBillingPlanType = renewalBillingPlanType
    }
}

/// The `commitmentInfo` of a renewal info on a commitment plan.
public struct RenewalCommitmentInfo: Codable, Hashable, Sendable {
    /// The product the commitment renews to.
    public var commitmentAutoRenewProductId: String?

    /// Whether the commitment renews.
    public var commitmentAutoRenewStatus: AutoRenewStatus?

    /// The billing plan at the commitment's renewal.
    public var commitmentRenewalBillingPlanType: BillingPlanType?

    /// When the commitment renews, in UNIX milliseconds.
    public var commitmentRenewalDate: Int64?

    /// The commitment's renewal price in milliunits.
    public var commitmentRenewalPrice: Int64?

    /// Creates a value; every field defaults to absent, and absent fields are omitted when encoding.
    public init(
        commitmentAutoRenewProductId: String? = nil,
        commitmentAutoRenewStatus: AutoRenewStatus? = nil,
        commitmentRenewalBillingPlanType: BillingPlanType? = nil,
        commitmentRenewalDate: Int64? = nil,
        commitmentRenewalPrice: Int64? = nil
    ) {
        self.commitmentAutoRenewProductId = commitmentAutoRenewProductId
        self.commitmentAutoRenewStatus = commitmentAutoRenewStatus
        self.commitmentRenewalBillingPlanType = commitmentRenewalBillingPlanType
        self.commitmentRenewalDate = commitmentRenewalDate
        self.commitmentRenewalPrice = commitmentRenewalPrice
    }
}
