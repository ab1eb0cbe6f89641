internal import AppStoreModel
import Primitives
internal import Profile

// Refunds (immediate, requested from the app and decided hours later, of older subscription periods) and
// their reversals.

extension World {
    /// Refunds one of the account's refundable purchases or subscription periods; false when it has none.
    /// Any past period of a subscription may be refunded, not only the current one; mid-stream refunds
    /// (`latestOnly`) follow their purchase. A third of the refunds are requested from inside the app first
    /// (see `requestRefund`).
    mutating func refund(account: Int, at t: Double, cause: String?, latestOnly: Bool = false) -> Bool {
        guard changesSettled(account: account, at: t) else { return false }
        let purchases = accounts[account].purchases
        let subs = entitledGroups(account)
        let total = purchases.count + subs.count
        guard total > 0 else { return false }
        var pick = latestOnly ? total - 1 : rng.below(total)
        if latestOnly, let latestPurchase = purchases.last,
            let latestSub = subs.max(by: {
                accounts[account].subs[$0]!.purchaseMs < accounts[account].subs[$1]!.purchaseMs
            })
        {
            // The most recent purchase of either kind (mid-stream refunds follow their purchase).
            let subMs = accounts[account].subs[latestSub]!.purchaseMs
            pick =
                latestPurchase.purchaseMs >= subMs
                ? purchases.count - 1 : purchases.count + subs.firstIndex(of: latestSub)!
        }
        let requested = !latestOnly && rng.chance(0.3)
        if pick < purchases.count {
            let ref = purchases[pick]
            if requested {
                requestRefund(account: account, group: nil, transaction: ref.transaction, at: t)
            } else {
                refundPurchase(account: account, ref: ref, at: t, cause: cause)
            }
            return true
        }
        let group = subs[pick - purchases.count]
        let sub = accounts[account].sub(group)!
        let older = !latestOnly && sub.previous != nil && rng.chance(0.5)
        if requested {
            let transaction = older ? sub.previous!.transaction : sub.transaction
            requestRefund(account: account, group: group, transaction: transaction, at: t)
        } else if older {
            refundPreviousPeriod(account: account, group: group, at: t, cause: cause)
        } else {
            refundSubscription(account: account, group: group, at: t, cause: cause)
        }
        return true
    }

    /// Refunds a one-time purchase (and revokes the partner's shared copy).
    mutating func refundPurchase(account: Int, ref: OneTimePurchase, at t: Double, cause: String?) {
        accounts[account].changedMs = millis(t)
        var purchase = ref
        let effects = purchase.refund()
        play(effects, of: purchase, account: account, at: t, cause: cause)
    }

    /// Fills the revocation fields of a fully refunded transaction.
    mutating func revoked(_ facts: inout TransactionFacts, at now: Int64) {
        facts.payload.revocationDate = now
        facts.payload.revocationReason = rng.chance(0.5) ? 1 : 0
        facts.payload.revocationType = .refundFull
        facts.payload.revocationPercentage = 100_000
    }

    /// Refunds the current period: the subscription is revoked and stops renewing.
    mutating func refundSubscription(account: Int, group: Int, at t: Double, cause: String?) {
        let now = millis(t)
        accounts[account].changedMs = now
        var sub = accounts[account].sub(group)!
        sub.revoke(nowMs: now, reason: rng.chance(0.5) ? 1 : 0)
        accounts[account].setSub(group, sub)
        // subscriptionTransaction fills the revocation from the revoked state.
        let facts = subscriptionTransaction(account: account, group: group, reason: nil, signedMs: now)
        let truth = subscriptionTruth(account: account, group: group, kind: .revoke, signedMs: now)
        subscriptionRefundNotification(account: account, group: group, facts: facts, truth: truth, at: t, cause: cause)
        revokeFamilyShare(account: account, group: group, at: t, cause: cause, stopsSharing: false, refunded: true)
    }

    /// Refunds the period before the current one: only that transaction is revoked; the current period is
    /// still owed, so a backend that refunds "the product" (its latest transaction) ends a period it must not.
    mutating func refundPreviousPeriod(account: Int, group: Int, at t: Double, cause: String?) {
        let now = millis(t)
        guard var facts = previousTransaction(account: account, group: group, signedMs: now),
            var sub = accounts[account].sub(group), let period = sub.refundPrevious()
        else { return }
        accounts[account].setSub(group, sub)
        accounts[account].changedMs = now
        revoked(&facts, at: now)
        var truth = Truth(kind: .revoke, effectiveDate: now)
        truth.productId = facts.productId
        truth.productType = .autoRenewable
        truth.transactionId = facts.transactionId
        truth.originalTransactionId = facts.originalTransactionId
        truth.groupId = profile.catalog.groups[group].id
        truth.expiresDate = period.expiresMs
        // No status: the subscription's state is its current period's, which this refund leaves alone.
        subscriptionRefundNotification(account: account, group: group, facts: facts, truth: truth, at: t, cause: cause)
    }

    /// A subscription's `REFUND` (status and renewal info as of now) and the revoked transaction on every device.
    mutating func subscriptionRefundNotification(
        account: Int,
        group: Int,
        facts: TransactionFacts,
        truth: Truth,
        at t: Double,
        cause: String?
    ) {
        let now = millis(t)
        let event = newEvent()
        let note = notification(
            type: .refund,
            subtype: nil,
            signedMs: now,
            status: accounts[account].sub(group)!.status.wire,
            facts,
            renewal(account: account, group: group, signedMs: now)
        )
        emit(.refund, account: account, event: event, at: t, .notification(note), truth, cause: cause)
        deliverToDevices(
            facts,
            account: account,
            purchaser: nil,
            everyDevice: true,
            lifecycle: .refund,
            event: event,
            truth: truth,
            at: t,
            cause: cause
        )
    }

    /// A refund requested from inside the app: Apple asks for consumption data at once (consumables and
    /// auto-renewable subscriptions, `CONSUMPTION_REQUEST`), then decides 12 to 48 hours later (compressed
    /// like every period): a refund, or `REFUND_DECLINED`.
    /// - Parameters:
    ///   - group: nil for a one-time purchase, else the subscription group.
    ///   - transaction: the transaction asked about (for a subscription, the current or the previous period).
    mutating func requestRefund(account: Int, group: Int?, transaction: UInt64, at t: Double) {
        let now = millis(t)
        guard let subject = refundSubject(account: account, group: group, transaction: transaction, signedMs: now)
        else { return }
        let type = subject.facts.type
        if type == .consumable || type == .autoRenewableSubscription {
            var note = notification(
                type: .consumptionRequest,
                subtype: nil,
                signedMs: now,
                status: subject.status,
                subject.facts,
                subject.renewal
            )
            note.payload.data?.consumptionRequestReason = .unintendedPurchase
            let truth = Self.carried(subject.facts, signedMs: now)
            emit(.consumptionRequest, account: account, event: newEvent(), at: t, .notification(note), truth)
        }
        let approve = rng.chance(0.5)
        let hours = rng.between(12, 48)
        schedule(
            .refundDecision(account: account, group: group, transaction: transaction, approve: approve),
            at: t + profile.timeCompression.seconds(days: hours / 24)
        )
    }

    /// Apple's decision on a refund request, if the transaction is still refundable (not refunded meanwhile, and
    /// for a subscription still its current or previous period).
    mutating func decideRefund(account: Int, group: Int?, transaction: UInt64, approve: Bool, at t: Double) {
        guard changesSettled(account: account, at: t) else {
            // Decided a millisecond later, after the refund or reversal signed in this one.
            schedule(
                .refundDecision(account: account, group: group, transaction: transaction, approve: approve),
                at: t + 0.001
            )
            return
        }
        let now = millis(t)
        guard let subject = refundSubject(account: account, group: group, transaction: transaction, signedMs: now)
        else { return }
        if approve {
            if let group {
                if accounts[account].sub(group)?.transaction == transaction {
                    refundSubscription(account: account, group: group, at: t, cause: nil)
                } else {
                    refundPreviousPeriod(account: account, group: group, at: t, cause: nil)
                }
            } else if let ref = accounts[account].purchases.first(where: { $0.transaction == transaction }) {
                refundPurchase(account: account, ref: ref, at: t, cause: nil)
            }
            return
        }
        let declined = notification(
            type: .refundDeclined,
            subtype: nil,
            signedMs: now,
            status: subject.status,
            subject.facts,
            subject.renewal
        )
        let truth = Self.carried(subject.facts, signedMs: now)
        emit(.refundDeclined, account: account, event: newEvent(), at: t, .notification(declined), truth)
    }

    /// The transaction a refund request is about, signed at `signedMs`, with its subscription's renewal info and
    /// status; nil when it can no longer be refunded.
    mutating func refundSubject(
        account: Int,
        group: Int?,
        transaction: UInt64,
        signedMs: Int64
    ) -> (facts: TransactionFacts, renewal: JWSRenewalInfoDecodedPayload?, status: Status?)? {
        guard let group else {
            guard let ref = accounts[account].purchases.first(where: { $0.transaction == transaction }) else {
                return nil
            }
            return (purchaseTransaction(account: account, ref: ref, signedMs: signedMs), nil, nil)
        }
        guard let sub = accounts[account].sub(group), sub.isEntitled else {
            return nil
        }
        let facts: TransactionFacts?
        if sub.transaction == transaction {
            facts = subscriptionTransaction(account: account, group: group, reason: nil, signedMs: signedMs)
        } else if sub.previous?.transaction == transaction {
            facts = previousTransaction(account: account, group: group, signedMs: signedMs)
        } else {
            facts = nil
        }
        guard let facts else { return nil }
        return (facts, renewal(account: account, group: group, signedMs: signedMs), sub.status.wire)
    }

    /// A one-time transaction's `REFUND` or `REVOKE`, and the revoked transaction on the devices.
    mutating func revokeNotification(
        account: Int,
        facts: TransactionFacts,
        type: NotificationTypeV2,
        lifecycle: Lifecycle,
        at t: Double,
        cause: String?
    ) {
        let event = newEvent()
        var truth = Truth(kind: .revoke, effectiveDate: facts.signedDate)
        truth.productId = facts.productId
        truth.productType = ProductKind(facts.type)
        truth.transactionId = facts.transactionId
        truth.originalTransactionId = facts.originalTransactionId
        truth.quantity = Int(facts.quantity)
        let note = notification(type: type, subtype: nil, signedMs: facts.signedDate, status: nil, facts, nil)
        emit(lifecycle, account: account, event: event, at: t, .notification(note), truth, cause: cause)
        let everyDevice = truth.productType != .consumable
        deliverToDevices(
            facts,
            account: account,
            purchaser: everyDevice ? nil : 0,
            everyDevice: everyDevice,
            lifecycle: lifecycle,
            event: event,
            truth: truth,
            at: t,
            cause: cause
        )
    }

    /// Reverses an earlier refund: of a one-time purchase, or of a subscription's current period.
    mutating func reverseRefund(account: Int, at t: Double) -> Bool {
        guard changesSettled(account: account, at: t) else { return false }
        let revokedGroups = accounts[account].subs.indices.filter { accounts[account].subs[$0]?.status == .revoked }
        var purchase = accounts[account].refunded.last
        if let ref = purchase, products[Int(ref.product)].type == .nonConsumable,
            accounts[account].owns(Int(ref.product))
        {
            purchase = nil
        }
        let choices = revokedGroups.count + (purchase == nil ? 0 : 1)
        guard choices > 0 else { return false }
        let pick = choices > 1 ? rng.below(choices) : 0
        guard let ref = purchase, pick == revokedGroups.count else {
            reverseSubscriptionRefund(account: account, group: revokedGroups[pick], at: t)
            return true
        }
        accounts[account].changedMs = millis(t)
        var reversed = ref
        let effects = reversed.reverseRefund()
        play(effects, of: reversed, account: account, at: t, cause: nil)
        return true
    }

    /// Apple reverses the refund of a subscription's current period: the period is owed again until its
    /// unchanged end; auto-renew stays off (the refund turned it off), so the subscription then expires.
    mutating func reverseSubscriptionRefund(account: Int, group: Int, at t: Double) {
        guard var sub = accounts[account].sub(group) else { return }
        let now = millis(t)
        accounts[account].changedMs = now
        let effects = sub.reinstate(nowMs: now)
        accounts[account].setSub(group, sub)
        play(effects, account: account, group: group, at: t)
        let facts = subscriptionTransaction(account: account, group: group, reason: nil, signedMs: now)
        let truth = subscriptionTruth(account: account, group: group, kind: .reinstate, signedMs: now)
        let note = notification(
            type: .refundReversed,
            subtype: nil,
            signedMs: now,
            status: sub.status.wire,
            facts,
            renewal(account: account, group: group, signedMs: now)
        )
        emit(.refundReversal, account: account, event: newEvent(), at: t, .notification(note), truth)
        reinstateFamilyShare(account: account, group: group, at: t)
    }

    /// Whether a refund, reversal or renewal extension may be signed on the account at `t`: not in the
    /// millisecond of its last one. Apple decides them hours or days apart, and two signed at the same instant
    /// leave a backend nothing to order them by (a refund and its reversal, a reversal and the refund after it,
    /// two extensions of one period).
    func changesSettled(account: Int, at t: Double) -> Bool {
        millis(t) > accounts[account].changedMs
    }

    /// The truth of a notification that changes nothing but carries a signed transaction (a refund request,
    /// its decline): which purchase, of what and how many units, since a target may credit from it a purchase
    /// whose own deliveries have not come yet.
    static func carried(_ facts: TransactionFacts, signedMs: Int64) -> Truth {
        var truth = Truth(kind: .none, effectiveDate: signedMs)
        truth.transactionId = facts.transactionId
        truth.productId = facts.productId
        truth.productType = ProductKind(facts.type)
        truth.quantity = Int(facts.quantity)
        return truth
    }
}
