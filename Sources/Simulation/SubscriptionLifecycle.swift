internal import AppStoreModel

// One account's auto-renewable subscription in one group, as a value state machine.

/// One account's subscription in one group: events in (a renewal falls due, auto-renew is turned off, a refund),
/// outputs out (what Apple notifies, which timers to set), in the way async-http-client writes its connection
/// state machines.
///
/// The machine draws no random numbers, numbers no transactions and knows the catalog only through the
/// ``Level``s it is handed: ``World`` draws, numbers, schedules the ``Alarm``s and turns ``Notice``s into
/// payloads, so the lifecycle is tested without a world.
struct SubscriptionLifecycle: Sendable, Hashable {
    /// The subscription's state in `data.status` terms.
    typealias Status = SubscriptionStatus

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

    /// What a timer leads to.
    enum Output: Sendable, Hashable {
        /// Nothing: the timer is stale or no longer applies.
        case ignored
        /// Apple notifies about the current transaction.
        case notify(Notice)
        /// The period renews: number a new transaction and call ``renew(transaction:webOrder:nowMs:recovery:levels:)``.
        case renew(recovery: Bool)
        /// Billing failed: notify, and set ``billingAlarms(recoveryAfter:billing:)``.
        case renewalFailed(Notice)
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

    var original: UInt64
    var originalMs: Int64
    var recentStartMs: Int64
    var transaction: UInt64 = 0
    var webOrder: UInt64 = 0
    var purchaseMs: Int64 = 0
    var expiresMs: Int64 = 0
    var graceExpiresMs: Int64 = 0
    var revocationMs: Int64 = 0
    /// The transaction an immediate upgrade replaced, for the current period.
    var upgradedFrom: UInt64?
    /// Counts transitions; a timer set under an older version is stale.
    var version: UInt32 = 0
    /// The current product's position in its group.
    var position: Int32 = 0
    /// The product the next renewal bills.
    var autoRenewPosition: Int32 = 0
    var status: Status = .active
    var autoRenew = true
    /// The next renewal fails to bill.
    var failNext = false
    /// The current period is billed at the increased price.
    var priceBumped = false
    var priceIncrease = PriceIncrease.notAnnounced
    /// The offer of the current product in use, by index, and how many periods it still lasts.
    var offer: Int8?
    var offerRemaining: Int8 = 0
    /// An offer redeemed for the next renewal: an index into the offers of the auto-renew product.
    var pendingOffer: Int8?
    var expirationIntent: ExpirationIntent = 0
    var revocationReason: RevocationReason = 0
    /// The period before the current one (renewed from, never refunded), if any.
    var previous: Period?

    /// A subscription about to start with transaction `original` at `originalMs`.
    init(original: UInt64, originalMs: Int64) {
        self.original = original
        self.originalMs = originalMs
        self.recentStartMs = originalMs
    }

    /// Active or in its grace period: the customer is owed the product.
    var isEntitled: Bool { status == .active || status == .gracePeriod }

    /// Billing failed and is being retried (with or without grace).
    var isBilling: Bool { status == .billingRetry || status == .gracePeriod }

    /// Whether the customer can subscribe to the group again.
    var isOver: Bool { status == .expired || status == .revoked }

    private mutating func transitioned() -> UInt32 {
        version &+= 1
        return version
    }

    private var renewalAlarm: Alarm { alarm(.renewal, after: 0) }

    private func alarm(_ timer: Timer, after seconds: Double) -> Alarm {
        Alarm(timer: timer, version: version, periodEndMs: expiresMs, secondsAfterPeriodEnd: seconds)
    }

    // MARK: - Purchases

    /// A purchase of the product at `position` (an initial buy, or a resubscribe when `resubscribing`), with
    /// `offer` (introductory or win-back) if one applies. A lapse longer than `lapseMillis` starts a new
    /// `recentSubscriptionStartDate`.
    mutating func subscribe(
        position: Int32,
        level: Level,
        transaction: UInt64,
        webOrder: UInt64,
        nowMs: Int64,
        offer: Int8?,
        resubscribing: Bool,
        lapseMillis: Int64
    ) -> Alarm {
        if resubscribing, nowMs - expiresMs > lapseMillis { recentStartMs = nowMs }
        autoRenew = true
        status = .active
        failNext = false
        priceIncrease = .notAnnounced
        startPeriod(
            position: position,
            level: level,
            offer: offer,
            transaction: transaction,
            webOrder: webOrder,
            nowMs: nowMs
        )
        upgradedFrom = nil
        _ = transitioned()
        return renewalAlarm
    }

    /// An immediate upgrade to the higher `position`: a new transaction starts a full period now and replaces
    /// the current one. Returns the replaced transaction and the new renewal alarm.
    mutating func upgrade(
        to position: Int32,
        level: Level,
        offer: Int8?,
        transaction: UInt64,
        webOrder: UInt64,
        nowMs: Int64
    ) -> (replaced: UInt64, alarm: Alarm) {
        let replaced = self.transaction
        startPeriod(
            position: position,
            level: level,
            offer: offer,
            transaction: transaction,
            webOrder: webOrder,
            nowMs: nowMs
        )
        upgradedFrom = replaced
        _ = transitioned()
        return (replaced, renewalAlarm)
    }

    /// A purchase starts a full period of the product at `position` now, with a new transaction: no earlier
    /// period can be refunded apart from it, and no offer is pending.
    private mutating func startPeriod(
        position: Int32,
        level: Level,
        offer: Int8?,
        transaction: UInt64,
        webOrder: UInt64,
        nowMs: Int64
    ) {
        self.position = position
        autoRenewPosition = position
        self.transaction = transaction
        self.webOrder = webOrder
        purchaseMs = nowMs
        expiresMs = nowMs + level.periodMillis
        self.offer = offer
        offerRemaining = offer.map { level.offerPeriods[Int($0)] } ?? 0
        pendingOffer = nil
        previous = nil
    }

    // MARK: - Timers

    /// A timer fires. `consents` is asked only when a pending price increase awaits the customer's answer.
    mutating func fire(
        _ timer: Timer,
        version: UInt32,
        billing: Billing,
        consents: () -> Bool
    ) -> Output {
        guard version == self.version else { return .ignored }
        switch timer {
        case .renewal:
            if !autoRenew { return .notify(expire(intent: .customerCancelled, subtype: .voluntary)) }
            if priceIncrease == .pending {
                return .notify(expire(intent: .customerDidNotConsentToPriceIncrease, subtype: .priceIncrease))
            }
            if failNext { return .renewalFailed(failRenewal(billing)) }
            return .renew(recovery: false)
        case .recovery:
            return isBilling ? .renew(recovery: true) : .ignored
        case .graceEnd:
            guard status == .gracePeriod else { return .ignored }
            status = .billingRetry
            return .notify(
                Notice(type: .gracePeriodExpired, lifecycle: .gracePeriodExpired, truth: .subscriptionStatus)
            )
        case .retryEnd:
            return isBilling ? .notify(expire(intent: .billingError, subtype: .billingRetry)) : .ignored
        case .priceConsent:
            guard priceIncrease == .pending, consents() else { return .ignored }
            priceIncrease = .accepted
            return .notify(
                Notice(type: .priceIncrease, subtype: .accepted, lifecycle: .priceIncreaseAccepted, truth: .none)
            )
        }
    }

    private mutating func expire(intent: ExpirationIntent, subtype: Subtype) -> Notice {
        status = .expired
        expirationIntent = intent
        autoRenew = false
        graceExpiresMs = 0
        _ = transitioned()
        return Notice(type: .expired, subtype: subtype, lifecycle: .expiry, truth: .subscriptionStatus)
    }

    private mutating func failRenewal(_ billing: Billing) -> Notice {
        failNext = false
        let grace = billing.gracePeriodSeconds > 0
        status = grace ? .gracePeriod : .billingRetry
        graceExpiresMs = grace ? expiresMs + Int64(billing.gracePeriodSeconds * 1000) : 0
        _ = transitioned()
        return Notice(
            type: .didFailToRenew,
            subtype: grace ? .gracePeriod : nil,
            lifecycle: .renewalFailure,
            truth: .subscriptionStatus
        )
    }

    /// The timers of a failed renewal: recovery `recoveryAfter` seconds into the retry period if billing
    /// recovers (else the end of the retry period), and the end of the grace period if there is one.
    func billingAlarms(recoveryAfter: Double?, billing: Billing) -> [Alarm] {
        var alarms = [
            recoveryAfter.map { alarm(.recovery, after: $0) } ?? alarm(.retryEnd, after: billing.billingRetrySeconds)
        ]
        if status == .gracePeriod { alarms.append(alarm(.graceEnd, after: billing.gracePeriodSeconds)) }
        return alarms
    }

    /// The period renews (on time, or on recovery from a billing failure at `nowMs`) with a new transaction:
    /// the pending product and offer become current, an accepted price increase applies.
    mutating func renew(transaction: UInt64, webOrder: UInt64, nowMs: Int64, recovery: Bool, levels: [Level]) -> Alarm {
        previous = Period(
            transaction: self.transaction,
            webOrder: self.webOrder,
            purchaseMs: purchaseMs,
            expiresMs: expiresMs,
            position: position,
            offer: offer,
            priceBumped: priceBumped
        )
        // A pending offer belongs to the auto-renew product, which the renewal makes current.
        position = autoRenewPosition
        self.transaction = transaction
        self.webOrder = webOrder
        purchaseMs = recovery ? nowMs : expiresMs
        let level = levels[Int(position)]
        expiresMs = purchaseMs + level.periodMillis
        status = .active
        graceExpiresMs = 0
        upgradedFrom = nil
        if let pendingOffer {
            offer = pendingOffer
            offerRemaining = level.offerPeriods[Int(pendingOffer)]
            self.pendingOffer = nil
        } else if offerRemaining > 1 {
            offerRemaining -= 1
        } else {
            offer = nil
            offerRemaining = 0
        }
        if priceIncrease == .accepted { priceBumped = true }
        priceIncrease = .notAnnounced
        _ = transitioned()
        return renewalAlarm
    }
}

// MARK: - The customer's and Apple's changes

extension SubscriptionLifecycle {
    /// The customer turns auto-renew on or off.
    mutating func setAutoRenew(_ enable: Bool) -> Notice {
        autoRenew = enable
        return Notice(
            type: .didChangeRenewalStatus,
            subtype: enable ? .autoRenewEnabled : .autoRenewDisabled,
            lifecycle: enable ? .autoRenewEnabled : .autoRenewDisabled,
            truth: .none
        )
    }

    /// A downgrade to the lower `position` from the next renewal; the current product stays owed until then.
    mutating func downgrade(to position: Int32) -> Notice {
        autoRenewPosition = position
        // An offer redeemed for the former renewal product does not carry over.
        pendingOffer = nil
        return Notice(type: .didChangeRenewalPref, subtype: .downgrade, lifecycle: .downgrade, truth: .none)
    }

    /// An offer redeemed for the product at `position` (the current one or a lower level), from the next renewal.
    mutating func redeemOffer(_ offer: Int8, at position: Int32) -> Notice {
        autoRenewPosition = position
        pendingOffer = offer
        return Notice(
            type: .offerRedeemed,
            subtype: position > self.position ? .downgrade : nil,
            lifecycle: .offerRedeemed,
            truth: .none
        )
    }

    /// The next renewal will fail to bill.
    mutating func armBillingFailure() { failNext = true }

    /// Apple announces a price increase; the customer's answer is due at a ``Timer/priceConsent`` timer.
    mutating func announcePriceIncrease() -> Notice {
        priceIncrease = .pending
        return Notice(type: .priceIncrease, subtype: .pending, lifecycle: .priceIncreasePending, truth: .none)
    }

    /// Apple extends the current period by `millis`: the same transaction, owed until its new end.
    mutating func extendRenewal(byMillis millis: Int64) -> (Notice, Alarm) {
        expiresMs += millis
        _ = transitioned()
        // A grant of the same transaction, with its new end: the backend owes the subscription until then.
        return (Notice(type: .renewalExtended, lifecycle: .renewalExtended, truth: .grant), renewalAlarm)
    }

    /// The current period is refunded: the subscription is revoked and stops renewing.
    mutating func revoke(nowMs: Int64, reason: RevocationReason) {
        status = .revoked
        autoRenew = false
        revocationMs = nowMs
        revocationReason = reason
        _ = transitioned()
    }

    /// The period before the current one is refunded: it can no longer be refunded, the current one is untouched.
    mutating func refundPrevious() -> Period? {
        defer { previous = nil }
        return previous
    }

    /// The refund of the current period is reversed: owed again until its unchanged end, then it expires
    /// (auto-renew stays off). Returns the renewal alarm when the period is still running at `nowMs`.
    mutating func reinstate(nowMs: Int64) -> Alarm? {
        let ongoing = expiresMs > nowMs
        status = ongoing ? .active : .expired
        if !ongoing { expirationIntent = .customerCancelled }
        revocationMs = 0
        _ = transitioned()
        return ongoing ? renewalAlarm : nil
    }

    /// The subscription as it stood in its previous period (for that period's transaction), if there is one.
    var previousPeriod: SubscriptionLifecycle? {
        guard let period = previous else { return nil }
        var old = self
        old.transaction = period.transaction
        old.webOrder = period.webOrder
        old.purchaseMs = period.purchaseMs
        old.expiresMs = period.expiresMs
        old.position = period.position
        old.offer = period.offer
        old.priceBumped = period.priceBumped
        old.upgradedFrom = nil
        old.status = .active
        return old
    }
}
