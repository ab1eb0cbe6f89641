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
///
/// Indirect: a notification's facts are well over a kilobyte, and every stage copies its deliveries (the chaos
/// stream, the mint buffer, the scheduler's follow-ups and requests in flight), so a copy shares the boxed
/// facts instead of copying them and retaining each of their strings.
public indirect enum Delivery: Sendable, Hashable {
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

/// A transaction the world signs: Apple's payload itself (AppStoreModel's `JWSTransactionDecodedPayload`, so a
/// new field is added there and nowhere else), with non-optional views of the identity fields that every
/// transaction of the world carries.
public struct TransactionFacts: Sendable, Hashable {
    /// The payload signed as `signedTransactionInfo` or as a device's transaction JWS. Its identity fields
    /// (the ones this type has views of) stay present: ``init(_:)`` checks them, and the views only set them.
    public var payload: JWSTransactionDecodedPayload

    /// Wraps a payload.
    /// - Parameter payload: a payload with `transactionId`, `originalTransactionId`, `productId`, `type`,
    ///   `quantity`, `purchaseDate` and `signedDate` present (a programming error otherwise).
    public init(_ payload: JWSTransactionDecodedPayload) {
        precondition(
            payload.transactionId != nil && payload.originalTransactionId != nil && payload.productId != nil
                && payload.type != nil && payload.quantity != nil && payload.purchaseDate != nil
                && payload.signedDate != nil,
            "a world transaction carries its identity fields"
        )
        self.payload = payload
    }

    /// `transactionId`.
    public var transactionId: String {
        get { payload.transactionId! }
        set { payload.transactionId = newValue }
    }
    /// `originalTransactionId`.
    public var originalTransactionId: String {
        get { payload.originalTransactionId! }
        set { payload.originalTransactionId = newValue }
    }
    /// `productId`.
    public var productId: String {
        get { payload.productId! }
        set { payload.productId = newValue }
    }
    /// `type`, such as `Consumable`.
    public var type: ProductType {
        get { payload.type! }
        set { payload.type = newValue }
    }
    /// `quantity`.
    public var quantity: Int32 {
        get { payload.quantity! }
        set { payload.quantity = newValue }
    }
    /// `purchaseDate`, in UNIX milliseconds.
    public var purchaseDate: Int64 {
        get { payload.purchaseDate! }
        set { payload.purchaseDate = newValue }
    }
    /// `signedDate`, in UNIX milliseconds.
    public var signedDate: Int64 {
        get { payload.signedDate! }
        set { payload.signedDate = newValue }
    }
}

/// A notification the world sends: Apple's payload (`ResponseBodyV2DecodedPayload`) with the transaction and
/// renewal info still unsigned beside it, since the JWS of each is signed into `data` only when minting.
public struct NotificationFacts: Sendable, Hashable {
    /// The payload signed as `signedPayload`, except that `data.signedTransactionInfo` and
    /// `data.signedRenewalInfo` stay absent: they are ``transaction`` and ``renewal``, signed. Its
    /// `notificationType`, `notificationUUID` and `signedDate` stay present (``init(_:transaction:renewal:)``
    /// checks them).
    public var payload: ResponseBodyV2DecodedPayload
    /// Becomes `data.signedTransactionInfo`.
    public var transaction: TransactionFacts?
    /// Becomes `data.signedRenewalInfo`.
    public var renewal: JWSRenewalInfoDecodedPayload?

    /// Wraps a payload and the objects to sign into it.
    /// - Parameters:
    ///   - payload: a payload with `notificationType`, `notificationUUID` and `signedDate` present (a
    ///     programming error otherwise), and no signed objects in `data`.
    ///   - transaction: the transaction to sign as `data.signedTransactionInfo`, if any.
    ///   - renewal: the renewal info to sign as `data.signedRenewalInfo`, if any.
    public init(
        _ payload: ResponseBodyV2DecodedPayload,
        transaction: TransactionFacts? = nil,
        renewal: JWSRenewalInfoDecodedPayload? = nil
    ) {
        precondition(
            payload.notificationType != nil && payload.notificationUUID != nil && payload.signedDate != nil
                && payload.data?.signedTransactionInfo == nil && payload.data?.signedRenewalInfo == nil,
            "a world notification carries its identity fields and nothing signed yet"
        )
        self.payload = payload
        self.transaction = transaction
        self.renewal = renewal
    }

    /// `notificationType`.
    public var notificationType: NotificationTypeV2 {
        get { payload.notificationType! }
        set { payload.notificationType = newValue }
    }
    /// `notificationUUID`.
    public var notificationUUID: String {
        get { payload.notificationUUID! }
        set { payload.notificationUUID = newValue }
    }
    /// `signedDate`, in UNIX milliseconds.
    public var signedDate: Int64 {
        get { payload.signedDate! }
        set { payload.signedDate = newValue }
    }
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
