internal import AppStoreModel

// The values a subscription's lifecycle takes in and hands out, and what its status says.

extension SubscriptionLifecycle {
    /// Active or in its grace period: the customer is owed the product.
    var isEntitled: Bool { status == .active || status == .gracePeriod }

    /// Billing failed and is being retried (with or without grace).
    var isBilling: Bool { status == .billingRetry || status == .gracePeriod }

    /// Whether the customer can subscribe to the group again.
    var isOver: Bool { status == .expired || status == .revoked }

    /// What a product of the group brings to the lifecycle, by position in the group (0 the highest level).
    struct Level: Sendable, Hashable {
        /// How long one period lasts, in ms.
        var periodMillis: Int64
        /// How many periods each of the product's offers lasts, by offer index.
        var offerPeriods: [Int8]
    }

    /// The group's billing settings.
    struct Billing: Sendable, Hashable {
        var gracePeriodSeconds: Double
        var billingRetrySeconds: Double
    }

    /// Where a price increase stands.
    enum PriceIncrease: Sendable, Hashable {
        case notAnnounced, pending, accepted
    }

    /// The timers a subscription sets.
    enum Timer: Sendable, Hashable {
        /// The current period ends: renew, expire, or fail to bill.
        case renewal
        /// Billing succeeds again during the retry period.
        case recovery
        /// The billing grace period ends.
        case graceEnd
        /// The billing retry period ends without recovery.
        case retryEnd
        /// The customer answers a pending price increase.
        case priceConsent
    }

    /// A timer to set: it fires `secondsAfterPeriodEnd` after `periodEndMs` (the end of the current period),
    /// and only while the subscription's version is still `version` (any later transition makes it stale).
    struct Alarm: Sendable, Hashable {
        var timer: Timer
        var version: UInt32
        var periodEndMs: Int64
        var secondsAfterPeriodEnd: Double
    }

    /// A notification about the current transaction (no new one).
    struct Notice: Sendable, Hashable {
        var type: NotificationTypeV2
        var subtype: Subtype?
        var lifecycle: Lifecycle
        var truth: Truth.Kind
    }

    /// What the world does after an event, in order, once it has stored the machine.
    enum Effect: Sendable, Hashable {
        /// Set a timer.
        case setAlarm(Alarm)
        /// Apple notifies about the current transaction.
        case notify(Notice)
        /// A marker for the oracle that the state changed with no delivery.
        case mark(Lifecycle)
        /// The period renews: number a new transaction and call ``renew(transaction:webOrder:nowMs:recovery:levels:)``.
        case renew(recovery: Bool)
        /// Billing failed: draw whether (and how many seconds into the retry period) it recovers, and carry out
        /// ``retryAlarms(recoveryAfter:billing:)``.
        case drawRecovery
        /// A price increase awaits the customer's answer: draw it and call ``answerPriceIncrease(accepted:)``.
        case askConsent
        /// Set the ``Timer/priceConsent`` timer under `version`, at a drawn moment before `periodEndMs`.
        case drawConsentTime(version: UInt32, periodEndMs: Int64)
    }

    /// A period that is no longer current, kept so that a refund of an older renewal can be played.
    struct Period: Sendable, Hashable {
        var transaction: UInt64
        var webOrder: UInt64
        var purchaseMs: Int64
        var expiresMs: Int64
        var position: Int32
        var offer: Int8?
        var priceBumped: Bool
    }
}
