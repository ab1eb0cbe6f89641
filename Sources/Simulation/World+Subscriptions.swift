internal import AppStoreModel
import Primitives
internal import Profile

// Auto-renewable subscriptions: buying, renewing and the lifecycle's timers. The lifecycle's rules live in
// `SubscriptionLifecycle`; the world draws, numbers transactions, schedules and turns notices into payloads.

extension World {
    /// Starts a subscription in `group` with `product`, or resubscribes a lapsed one.
    mutating func subscribe(account: Int, group: Int, product: Int, device: Int, at t: Double, approval: Bool) {
        let previous = accounts[account].sub(group)
        let now = millis(t)
        let tx = newTransaction()
        var sub = previous ?? SubscriptionLifecycle(original: tx, originalMs: now)
        let offers = products[product].offers
        var offer: Int8?
        if !accounts[account].introUsed(group), let intro = offers.firstIndex(where: { $0.kind == .introductory }) {
            offer = Int8(intro)
            accounts[account].setIntroUsed(group)
        } else if previous != nil, let winBack = offers.firstIndex(where: { $0.kind == .winBack }), rng.chance(0.5) {
            // A win-back offer brings a lapsed subscriber back at a discount (RESUBSCRIBE, offerType 4).
            offer = Int8(winBack)
        }
        let position = groupProducts[group].firstIndex(of: product)!
        let effects = sub.subscribe(
            position: Int32(position),
            level: groupLevels[group][position],
            transaction: tx,
            webOrder: newWebOrder(),
            nowMs: now,
            offer: offer,
            resubscribing: previous != nil,
            lapseMillis: Int64(profile.timeCompression.seconds(days: 60) * 1000)
        )
        accounts[account].setSub(group, sub)
        play(effects, account: account, group: group, at: t)
        let lifecycle: Lifecycle = approval ? .askToBuyApproved : (previous == nil ? .subscribe : .resubscribe)
        let cause = approval ? "askToBuy" : nil
        let event = newEvent()
        let facts = subscriptionTransaction(account: account, group: group, reason: .purchase, signedMs: now)
        let truth = subscriptionTruth(account: account, group: group, kind: .grant, signedMs: now)
        announceNewPeriod(
            facts,
            truth,
            account: account,
            group: group,
            event: event,
            lifecycle: lifecycle,
            purchaser: approval ? nil : device,
            cause: cause,
            type: .subscribed,
            subtype: previous == nil ? .initialBuy : .resubscribe,
            notifiedWithin: (0.05, 0.5),
            at: t
        )
        if let mid = profile.faults.refundMidStream, rng.chance(mid.probability) {
            schedule(.refund(account: account), at: t + rng.between(0, 1.0))
        }
    }

    /// A subscription's timer fires: the lifecycle decides, the world plays the outcome.
    mutating func fire(_ timer: SubscriptionLifecycle.Timer, account: Int, group: Int, version: UInt32, at t: Double) {
        let billing = billing(group)
        drive(account: account, group: group, at: t) { $0.fire(timer, version: version, billing: billing) }
    }

    /// The subscription renews with a new transaction (on time, or recovering from a billing failure).
    mutating func renew(account: Int, group: Int, at t: Double, recovery: Bool) {
        guard var sub = accounts[account].sub(group) else { return }
        let now = millis(t)
        let effects = sub.renew(
            transaction: newTransaction(),
            webOrder: newWebOrder(),
            nowMs: now,
            recovery: recovery,
            levels: groupLevels[group]
        )
        accounts[account].setSub(group, sub)
        play(effects, account: account, group: group, at: t)
        let event = newEvent()
        let facts = subscriptionTransaction(account: account, group: group, reason: .renewal, signedMs: now)
        let truth = subscriptionTruth(account: account, group: group, kind: .grant, signedMs: now)
        let lifecycle: Lifecycle = recovery ? .billingRecovery : .renewal
        announceNewPeriod(
            facts,
            truth,
            account: account,
            group: group,
            event: event,
            lifecycle: lifecycle,
            purchaser: nil,
            cause: nil,
            type: .didRenew,
            subtype: recovery ? .billingRecovery : nil,
            notifiedWithin: (0.0, 0.3),
            at: t
        )
    }

    /// A new period's transaction (a purchase, a renewal, an upgrade): on the account's devices, then Apple's
    /// notification, `notifiedWithin` seconds later (a range drawn from).
    mutating func announceNewPeriod(
        _ facts: TransactionFacts,
        _ truth: Truth,
        account: Int,
        group: Int,
        event: UInt64,
        lifecycle: Lifecycle,
        purchaser: Int?,
        cause: String?,
        type: NotificationTypeV2,
        subtype: Subtype?,
        notifiedWithin delay: (Double, Double),
        at t: Double
    ) {
        deliverToDevices(
            facts,
            account: account,
            purchaser: purchaser,
            everyDevice: true,
            lifecycle: lifecycle,
            event: event,
            truth: truth,
            at: t,
            cause: cause
        )
        let now = millis(t)
        let note = notification(
            type: type,
            subtype: subtype,
            signedMs: now,
            status: SubscriptionStatus.active.wire,
            facts,
            renewal(account: account, group: group, signedMs: now)
        )
        let at = t + rng.between(delay.0, delay.1)
        emit(lifecycle, account: account, event: event, at: at, .notification(note), truth, cause: cause)
        shareNewPeriod(account: account, group: group, type: type, subtype: subtype, lifecycle: lifecycle, at: t)
    }

    /// A notification about the current subscription transaction (no new one), to the webhook only.
    mutating func subscriptionNotification(
        account: Int,
        group: Int,
        _ notice: SubscriptionLifecycle.Notice,
        at t: Double
    ) {
        guard let sub = accounts[account].sub(group) else { return }
        let now = millis(t)
        let facts = subscriptionTransaction(account: account, group: group, reason: nil, signedMs: now)
        let truth = subscriptionTruth(account: account, group: group, kind: notice.truth, signedMs: now)
        let note = notification(
            type: notice.type,
            subtype: notice.subtype,
            signedMs: now,
            status: sub.status.wire,
            facts,
            renewal(account: account, group: group, signedMs: now)
        )
        emit(notice.lifecycle, account: account, event: newEvent(), at: t, .notification(note), truth)
        shareNotice(account: account, group: group, notice, at: t)
    }

    /// The groups in which the account is owed its subscription (active or in grace).
    func entitledGroups(_ account: Int) -> [Int] {
        accounts[account].subs.indices.filter { accounts[account].subs[$0]?.isEntitled == true }
    }

    /// One entitled group of the account whose subscription meets `condition`, drawn at random; nil if none.
    mutating func pickEntitled(
        _ account: Int,
        where condition: (SubscriptionLifecycle, Int) -> Bool
    ) -> Int? {
        let groups = entitledGroups(account).filter { condition(accounts[account].subs[$0]!, $0) }
        return groups.isEmpty ? nil : groups[rng.below(groups.count)]
    }
}
