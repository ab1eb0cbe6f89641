public import AppStoreModel
public import Profile

/// One App Store lifecycle delivery of the clean (fault-free) world, at its intended time, with its truth.
///
/// A lifecycle event (a purchase, a renewal, a refund...) usually gives several actions that share
/// ``event``: the webhook notification and one device delivery per device. Actions come out of ``World`` in
/// time order.
public struct Action: Sendable, Hashable {
    /// Position in the stream, from 0.
    public var sequence: UInt64
    /// The lifecycle event this action belongs to.
    public var event: UInt64
    /// Intended send time, in seconds since the start of the run.
    public var at: Double
    /// The account index, `0..<population.accounts`.
    public var account: Int
    /// The account's `appAccountToken` (the probe key).
    public var appAccountToken: String
    /// What happened in the App Store, in a word.
    public var lifecycle: Lifecycle
    /// What to send to the target.
    public var delivery: Delivery
    /// What the action means for what the account is owed.
    public var truth: Truth
    /// The fault of the profile that caused this lifecycle event (`askToBuy`, `refundMidStream`), if any.
    public var causedBy: String?

    /// The transaction the action carries (device delivery or notification), if any.
    public var transaction: TransactionFacts? {
        switch delivery {
        case .notification(let n): n.transaction
        case .device(let d): d.transaction
        case .report, .marker: nil
        }
    }
}

/// The lifecycle events of the world.
public enum Lifecycle: String, Sendable, Hashable, CaseIterable, Codable {
    case purchase, familyShare, subscribe, resubscribe, renewal, billingRecovery, renewalFailure, gracePeriodExpired,
        expiry, upgrade, downgrade, autoRenewDisabled, autoRenewEnabled, offerRedeemed, priceIncreasePending,
        priceIncreaseAccepted, refund, familyRevoke, refundReversal, askToBuyPending, askToBuyApproved,
        askToBuyDeclined, deviceReport, billingFailureArmed, consumptionRequest, refundDeclined, renewalExtended,
        renewalExtensionFailed, renewalExtensionSummary, familySubscribe
}

/// What an action sends.
public enum Delivery: Sendable, Hashable {
    /// An App Store Server Notification V2 to the webhook.
    case notification(NotificationFacts)
    /// A device posting a transaction (StoreKit's `jwsRepresentation`) to the device endpoint.
    case device(DeviceDelivery)
    /// A device reporting a purchase outcome that carries no transaction (must never grant).
    case report(DeviceReport)
    /// Nothing to send: a lifecycle fact kept for the history and the oracle (an Ask to Buy decline).
    case marker

    /// Whether the action sends a request.
    public var sends: Bool { if case .marker = self { false } else { true } }
}

/// Where a device got the transaction it posts.
public enum DeviceSource: String, Sendable, Hashable, Codable {
    /// The result of `product.purchase()` on this device.
    case purchaseResult
    /// The `Transaction.updates` listener (renewals, refunds, approvals, other devices).
    case updates
    /// The `Transaction.unfinished` sweep at launch (redelivery of unfinished transactions).
    case unfinished
}

/// A device posting one transaction. The device finishes it only after a 2xx.
public struct DeviceDelivery: Sendable, Hashable {
    /// The device index within the account.
    public var device: Int
    /// Where the device got it.
    public var source: DeviceSource
    /// The transaction to sign and post.
    public var transaction: TransactionFacts
}

/// A device's purchase-outcome report: `{"purchaseResult", "productId", "appAccountToken"}`.
public struct DeviceReport: Sendable, Hashable, Codable {
    /// The device index within the account.
    public var device: Int
    /// `pending` or `userCancelled` (a forged claim says `success`).
    public var purchaseResult: String
    /// The product the customer tried to buy.
    public var productId: String
    /// The account.
    public var appAccountToken: String
    /// The transaction a report claims; only the `bare-product-id` forgery names one.
    public var transactionId: String?

    /// Creates a report.
    public init(
        device: Int,
        purchaseResult: String,
        productId: String,
        appAccountToken: String,
        transactionId: String? = nil
    ) {
        self.device = device
        self.purchaseResult = purchaseResult
        self.productId = productId
        self.appAccountToken = appAccountToken
        self.transactionId = transactionId
    }
}

/// The fields of a `JWSTransactionDecodedPayload` the world fills, named exactly like Apple's JSON keys.
public struct TransactionFacts: Sendable, Hashable, Codable {
    public var transactionId: String
    public var originalTransactionId: String
    public var webOrderLineItemId: String?
    public var bundleId: String
    public var productId: String
    public var subscriptionGroupIdentifier: String?
    public var purchaseDate: Int64
    public var originalPurchaseDate: Int64
    public var expiresDate: Int64?
    public var quantity: Int32
    /// The product type, such as `Consumable`.
    public var type: ProductType
    public var appAccountToken: String?
    /// `PURCHASED` or `FAMILY_SHARED`.
    public var inAppOwnershipType: InAppOwnershipType
    public var signedDate: Int64
    public var environment: Environment
    public var revocationReason: RevocationReason?
    public var revocationDate: Int64?
    public var revocationType: RevocationType?
    public var revocationPercentage: Int32?
    public var isUpgraded: Bool?
    public var offerType: OfferType?
    public var offerIdentifier: String?
    public var offerDiscountType: OfferDiscountType?
    public var offerPeriod: String?
    public var storefront: String
    public var storefrontId: String
    /// `PURCHASE` or `RENEWAL`.
    public var transactionReason: TransactionReason
    public var currency: String
    /// Milliunits, net of offers, for the whole quantity.
    public var price: Int64
    public var appTransactionId: String
}

/// The fields of a `JWSRenewalInfoDecodedPayload` the world fills, named like Apple's JSON keys.
public struct RenewalFacts: Sendable, Hashable, Codable {
    public var originalTransactionId: String
    public var autoRenewProductId: String
    public var productId: String
    public var autoRenewStatus: AutoRenewStatus
    public var expirationIntent: ExpirationIntent?
    public var gracePeriodExpiresDate: Int64?
    public var isInBillingRetryPeriod: Bool?
    public var priceIncreaseStatus: PriceIncreaseStatus?
    public var offerType: OfferType?
    public var offerIdentifier: String?
    public var offerDiscountType: OfferDiscountType?
    public var signedDate: Int64
    public var environment: Environment
    public var recentSubscriptionStartDate: Int64
    public var renewalDate: Int64?
    public var currency: String
    public var renewalPrice: Int64
    public var appAccountToken: String?
    public var appTransactionId: String
    /// The win-back offers a lapsed subscriber may redeem, best first; nil while none applies.
    public var eligibleWinBackOfferIds: [String]? = nil
}

/// The fields of a `ResponseBodyV2DecodedPayload` (with its `data`) the world fills.
public struct NotificationFacts: Sendable, Hashable, Codable {
    public var notificationType: NotificationTypeV2
    public var subtype: Subtype?
    public var notificationUUID: String
    public var signedDate: Int64
    public var version: String
    public var bundleId: String
    public var appAppleId: Int64?
    public var environment: Environment
    /// `data.status`, auto-renewable subscriptions only.
    public var status: Status?
    /// `data.consumptionRequestReason`, for `CONSUMPTION_REQUEST`.
    public var consumptionRequestReason: ConsumptionRequestReason?
    /// Becomes `data.signedTransactionInfo`.
    public var transaction: TransactionFacts?
    /// Becomes `data.signedRenewalInfo`.
    public var renewal: RenewalFacts?
    /// A mass renewal extension's result (`RENEWAL_EXTENSION`/`SUMMARY`): sent as `summary`, in place of `data`.
    public var summary: Summary? = nil
}

/// A subscription's state in the world's lifecycle, the closed set of `data.status` values the world reaches
/// (``SubscriptionStatus/wire`` gives the wire value).
public enum SubscriptionStatus: Int32, Sendable, Hashable, Codable {
    case active = 1
    case expired = 2
    case billingRetry = 3
    case gracePeriod = 4
    case revoked = 5

    /// The value of `data.status` for this state.
    public var wire: Status { Status(rawValue: Int(rawValue)) }
}

/// What an action means for what the account is owed. Facts are idempotent: applying the same truth twice
/// changes nothing, so the oracle can apply the truth of every action of an event.
public struct Truth: Sendable, Hashable, Codable {
    /// The kinds of truth.
    public enum Kind: String, Sendable, Hashable, Codable {
        /// Nothing changes (a renewal preference, a report of a cancelled purchase).
        case none
        /// A purchase is pending (Ask to Buy) or was declined: nothing may unlock for it.
        case pending
        /// A verified transaction the account owns: a purchase, a renewal, an upgrade, an approval.
        case grant
        /// The transaction is refunded or revoked from this instant.
        case revoke
        /// A refund is reversed: the transaction grants again.
        case reinstate
        /// A subscription's status changes without a new transaction (billing retry, grace, expiry).
        case subscriptionStatus
    }
    /// The kind.
    public var kind: Kind
    /// The product concerned, if any.
    public var productId: String?
    /// The product type, if any.
    public var productType: ProductKind?
    /// The transaction concerned, if any.
    public var transactionId: String?
    /// The original transaction (the subscription series), if any.
    public var originalTransactionId: String?
    /// The subscription group, if any.
    public var groupId: String?
    /// Units granted (consumables), otherwise 1.
    public var quantity: Int
    /// When the entitlement ends (subscriptions), in ms.
    public var expiresDate: Int64?
    /// End of the billing grace period, in ms.
    public var gracePeriodExpiresDate: Int64?
    /// The subscription status from this instant (subscriptions).
    public var status: SubscriptionStatus?
    /// When this truth takes effect, in ms (the signed date).
    public var effectiveDate: Int64
    /// The transaction this one replaces (an upgrade replaces the current one immediately).
    public var supersedes: String?

    /// A truth with only a kind and a date.
    public init(kind: Kind, effectiveDate: Int64) {
        self.kind = kind
        self.quantity = 1
        self.effectiveDate = effectiveDate
    }
}
