internal import AppStoreModel

// One account's auto-renewable subscription in one group, as a value state machine.

/// One account's subscription in one group: events in (a renewal falls due, auto-renew is turned off, a refund),
/// ``Effect``s out (what Apple notifies, which timers to set), in the way async-http-client writes its connection
/// state machines.
///
/// The machine draws no random numbers, numbers no transactions and knows the catalog only through the
/// ``Level``s it is handed: ``World`` draws, numbers, carries out the effects in the order given and turns
/// ``Notice``s into payloads, so the lifecycle is tested without a world.
struct SubscriptionLifecycle: Sendable, Hashable {
    /// The subscription's state in `data.status` terms.
    typealias Status = SubscriptionStatus

    /// Where the subscription stands, with what only that state knows.
    private enum State: Sendable, Hashable {
        case active
        case billingRetry
        /// Billing failed; the customer keeps the product until `endsMs`.
        case gracePeriod(endsMs: Int64)
        case expired(intent: ExpirationIntent)
        case revoked(atMs: Int64, reason: RevocationReason)
    }

    var original: UInt64
    var originalMs: Int64
    var recentStartMs: Int64
    var transaction: UInt64 = 0
    var webOrder: UInt64 = 0
    var purchaseMs: Int64 = 0
    var expiresMs: Int64 = 0
    /// The transaction an immediate upgrade replaced, for the current period.
    var upgradedFrom: UInt64?
    /// Counts transitions; a timer set under an older version is stale.
    private(set) var version: UInt32 = 0
    /// The current product's position in its group.
    var position: Int32 = 0
    /// The product the next renewal bills.
    var autoRenewPosition: Int32 = 0
    private var state = State.active
    private(set) var autoRenew = true
    /// The next renewal fails to bill.
    private(set) var failNext = false
    /// The current period is billed at the increased price.
    var priceBumped = false
    private(set) var priceIncrease = PriceIncrease.notAnnounced
    /// The offer of the current product in use, by index, and how many periods it still lasts.
    var offer: Int8?
    var offerRemaining: Int8 = 0
    /// An offer redeemed for the next renewal: an index into the offers of the auto-renew product.
    private(set) var pendingOffer: Int8?
    /// The period before the current one (renewed from, never refunded), if any.
    private(set) var previous: Period?

    /// A subscription about to start with transaction `original` at `originalMs`.
    init(original: UInt64, originalMs: Int64) {
        self.original = original
        self.originalMs = originalMs
        self.recentStartMs = originalMs
    }

    /// The state as `data.status` says it.
    var status: Status {
        switch state {
        case .active: .active
        case .billingRetry: .billingRetry
        case .gracePeriod: .gracePeriod
        case .expired: .expired
        case .revoked: .revoked
        }
    }

    /// When the grace period ends (0 outside it).
    var graceExpiresMs: Int64 {
        if case .gracePeriod(let endsMs) = state { return endsMs }
        return 0
    }

    /// Why the subscription expired (0 unless expired).
    var expirationIntent: ExpirationIntent {
        if case .expired(let intent) = state { return intent }
        return 0
    }

    /// When the current period was refunded (0 unless revoked).
    var revocationMs: Int64 {
        if case .revoked(let atMs, _) = state { return atMs }
        return 0
    }

    /// Why the current period was refunded (0 unless revoked).
    var revocationReason: RevocationReason {
        if case .revoked(_, let reason) = state { return reason }
        return 0
    }

    private mutating func transition(to state: State) {
        self.state = state
        version &+= 1
    }

    private var renewalAlarm: Effect { .setAlarm(alarm(.renewal, after: 0)) }

    private func alarm(_ timer: Timer, after seconds: Double) -> Alarm {
        Alarm(timer: timer, version: version, periodEndMs: expiresMs, secondsAfterPeriodEnd: seconds)
    }

    // MARK: - Purchases

    /// A purchase of the product at `position` (an initial buy, or a resubscribe when `resubscribing`), with
    /// `offer` (introductory or win-back) if one applies. A lapse longer than `lapseMillis` starts a new
    /// `recentSubscriptionStartDate`. The world announces the new transaction after the effects.
    mutating func subscribe(
        position: Int32,
        level: Level,
        transaction: UInt64,
        webOrder: UInt64,
        nowMs: Int64,
        offer: Int8?,
        resubscribing: Bool,
        lapseMillis: Int64
    ) -> [Effect] {
        if resubscribing, nowMs - expiresMs > lapseMillis { recentStartMs = nowMs }
        autoRenew = true
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
        transition(to: .active)
        return [renewalAlarm]
    }

    /// An immediate upgrade to the higher `position`: a new transaction starts a full period now and replaces
    /// the current one (``upgradedFrom``). The world announces the new transaction after the effects.
    mutating func upgrade(
        to position: Int32,
        level: Level,
        offer: Int8?,
        transaction: UInt64,
        webOrder: UInt64,
        nowMs: Int64
    ) -> [Effect] {
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
        transition(to: state)
        return [renewalAlarm]
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

    /// A timer set under `version` fires; a stale one does nothing.
    mutating func fire(_ timer: Timer, version: UInt32, billing: Billing) -> [Effect] {
        guard version == self.version else { return [] }
        switch timer {
        case .renewal:
            if !autoRenew { return [.notify(expire(intent: .customerCancelled, subtype: .voluntary))] }
            if priceIncrease == .pending {
                return [.notify(expire(intent: .customerDidNotConsentToPriceIncrease, subtype: .priceIncrease))]
            }
            if failNext { return [.drawRecovery, .notify(failRenewal(billing))] }
            return [.renew(recovery: false)]
        case .recovery:
            return isBilling ? [.renew(recovery: true)] : []
        case .graceEnd:
            guard status == .gracePeriod else { return [] }
            // The retry timers set when billing failed stay valid: no new version.
            state = .billingRetry
            return [
                .notify(Notice(type: .gracePeriodExpired, lifecycle: .gracePeriodExpired, truth: .subscriptionStatus))
            ]
        case .retryEnd:
            return isBilling ? [.notify(expire(intent: .billingError, subtype: .billingRetry))] : []
        case .priceConsent:
            return priceIncrease == .pending ? [.askConsent] : []
        }
    }

    /// The customer's answer to a pending price increase.
    mutating func answerPriceIncrease(accepted: Bool) -> [Effect] {
        guard priceIncrease == .pending, accepted else { return [] }
        priceIncrease = .accepted
        return [
            .notify(Notice(type: .priceIncrease, subtype: .accepted, lifecycle: .priceIncreaseAccepted, truth: .none))
        ]
    }

    private mutating func expire(intent: ExpirationIntent, subtype: Subtype) -> Notice {
        autoRenew = false
        transition(to: .expired(intent: intent))
        return Notice(type: .expired, subtype: subtype, lifecycle: .expiry, truth: .subscriptionStatus)
    }

    private mutating func failRenewal(_ billing: Billing) -> Notice {
        failNext = false
        let grace = billing.gracePeriodSeconds > 0
        transition(
            to: grace ? .gracePeriod(endsMs: expiresMs + Int64(billing.gracePeriodSeconds * 1000)) : .billingRetry
        )
        return Notice(
            type: .didFailToRenew,
            subtype: grace ? .gracePeriod : nil,
            lifecycle: .renewalFailure,
            truth: .subscriptionStatus
        )
    }

    /// The timers of a failed renewal: recovery `recoveryAfter` seconds into the retry period if billing
    /// recovers (else the end of the retry period), and the end of the grace period if there is one.
    func retryAlarms(recoveryAfter: Double?, billing: Billing) -> [Effect] {
        var alarms = [
            recoveryAfter.map { alarm(.recovery, after: $0) } ?? alarm(.retryEnd, after: billing.billingRetrySeconds)
        ]
        if status == .gracePeriod { alarms.append(alarm(.graceEnd, after: billing.gracePeriodSeconds)) }
        return alarms.map(Effect.setAlarm)
    }

    /// The period renews (on time, or on recovery from a billing failure at `nowMs`) with a new transaction:
    /// the pending product and offer become current, an accepted price increase applies. The world announces
    /// the new transaction after the effects.
    mutating func renew(
        transaction: UInt64,
        webOrder: UInt64,
        nowMs: Int64,
        recovery: Bool,
        levels: [Level]
    ) -> [Effect] {
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
        transition(to: .active)
        return [renewalAlarm]
    }
}

// MARK: - The customer's and Apple's changes

extension SubscriptionLifecycle {
    /// The customer turns auto-renew on or off.
    mutating func setAutoRenew(_ enable: Bool) -> [Effect] {
        autoRenew = enable
        let notice = Notice(
            type: .didChangeRenewalStatus,
            subtype: enable ? .autoRenewEnabled : .autoRenewDisabled,
            lifecycle: enable ? .autoRenewEnabled : .autoRenewDisabled,
            truth: .none
        )
        return [.notify(notice)]
    }

    /// A downgrade to the lower `position` from the next renewal; the current product stays owed until then.
    mutating func downgrade(to position: Int32) -> [Effect] {
        autoRenewPosition = position
        // An offer redeemed for the former renewal product does not carry over.
        pendingOffer = nil
        return [.notify(Notice(type: .didChangeRenewalPref, subtype: .downgrade, lifecycle: .downgrade, truth: .none))]
    }

    /// An offer redeemed for the product at `position` (the current one or a lower level), from the next renewal.
    mutating func redeemOffer(_ offer: Int8, at position: Int32) -> [Effect] {
        autoRenewPosition = position
        pendingOffer = offer
        let notice = Notice(
            type: .offerRedeemed,
            subtype: position > self.position ? .downgrade : nil,
            lifecycle: .offerRedeemed,
            truth: .none
        )
        return [.notify(notice)]
    }

    /// The next renewal will fail to bill.
    mutating func armBillingFailure() -> [Effect] {
        failNext = true
        return [.mark(.billingFailureArmed)]
    }

    /// Apple announces a price increase; the customer's answer is due at a ``Timer/priceConsent`` timer.
    mutating func announcePriceIncrease() -> [Effect] {
        priceIncrease = .pending
        return [
            .drawConsentTime(version: version, periodEndMs: expiresMs),
            .notify(Notice(type: .priceIncrease, subtype: .pending, lifecycle: .priceIncreasePending, truth: .none)),
        ]
    }

    /// Apple extends the current period by `millis`: the same transaction, owed until its new end.
    mutating func extendRenewal(byMillis millis: Int64) -> [Effect] {
        expiresMs += millis
        transition(to: state)
        // A grant of the same transaction, with its new end: the backend owes the subscription until then.
        return [renewalAlarm, .notify(Notice(type: .renewalExtended, lifecycle: .renewalExtended, truth: .grant))]
    }

    /// The current period is refunded: the subscription is revoked and stops renewing. The world plays the
    /// refund, which carries the revoked transaction rather than a ``Notice``.
    mutating func revoke(nowMs: Int64, reason: RevocationReason) {
        autoRenew = false
        transition(to: .revoked(atMs: nowMs, reason: reason))
    }

    /// The period before the current one is refunded: it can no longer be refunded, the current one is untouched.
    mutating func refundPrevious() -> Period? {
        defer { previous = nil }
        return previous
    }

    /// The refund of the current period is reversed: owed again until its unchanged end, then it expires
    /// (auto-renew stays off); already expired when the period ended before `nowMs`.
    mutating func reinstate(nowMs: Int64) -> [Effect] {
        let ongoing = expiresMs > nowMs
        transition(to: ongoing ? .active : .expired(intent: .customerCancelled))
        return ongoing ? [renewalAlarm] : []
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
        old.state = .active
        return old
    }
}
