internal import AppStoreModel
import Primitives
internal import Profile

// Family Sharing of auto-renewable subscriptions: while the purchaser's product is family-shareable, the partner
// has its own FAMILY_SHARED transaction for each period (its own transactionId, and its own originalTransactionId
// for the series, as Apple issues them), its own SUBSCRIBED, DID_RENEW and status notifications, and a REVOKE
// (FAMILY_REVOKE) when the purchaser is refunded or stops sharing.

/// One subscription an account shares with its Family Sharing partner (kept by the purchaser, one per group).
struct FamilyShare: Sendable, Hashable {
    var group: Int
    /// The partner's `originalTransactionId`: its first shared transaction, for every later period.
    var original: UInt64
    var originalMs: Int64
    /// The partner's transaction for the purchaser's current period.
    var transaction: UInt64
    /// The partner has the subscription now.
    var active: Bool
    /// The purchaser stopped sharing it: never shared again.
    var stopped = false
}

extension SimulatedAccount {
    func familyShare(_ group: Int) -> FamilyShare? { familyShares.first { $0.group == group } }

    mutating func setFamilyShare(_ share: FamilyShare) {
        familyShares.removeAll { $0.group == share.group }
        familyShares.append(share)
    }
}

extension World {
    /// The purchaser's new period (a purchase, a renewal, an upgrade) reaches the partner as its own
    /// `FAMILY_SHARED` transaction: `SUBSCRIBED` when sharing starts, else the purchaser's own notification type.
    /// A period of a product that is not family-shareable ends the sharing (`REVOKE`).
    mutating func shareNewPeriod(
        account: Int,
        group: Int,
        type: NotificationTypeV2,
        subtype: Subtype?,
        lifecycle: Lifecycle,
        at t: Double
    ) {
        guard let partner = Self.familyPartner(of: account, seed: profile.seed, population: profile.population),
            let sub = accounts[account].sub(group)
        else { return }
        let previous = accounts[account].familyShare(group)
        let shareable = products[groupProducts[group][Int(sub.position)]].familyShareable
        guard shareable, previous?.stopped != true else {
            revokeFamilyShare(account: account, group: group, at: t, cause: nil, stopsSharing: false)
            return
        }
        let continuing = previous?.active == true
        // A partner with its own subscription in the group, or one shared by someone else, is not shared another.
        if !continuing
            && (accounts[partner].sub(group).map { !$0.isOver } == true
                || accounts[partner].familyMember.contains(group))
        {
            return
        }
        let now = millis(t)
        let tx = newTransaction()
        let share = FamilyShare(
            group: group,
            original: previous?.original ?? tx,
            originalMs: previous?.originalMs ?? now,
            transaction: tx,
            active: true
        )
        accounts[account].setFamilyShare(share)
        accounts[partner].familyMember.set(group, true)
        let reason =
            continuing && lifecycle != .upgrade && lifecycle != .offerRedeemed ? TransactionReason.renewal : .purchase
        var truth = subscriptionTruth(account: account, group: group, kind: .grant, signedMs: now)
        truth.transactionId = String(tx)
        truth.originalTransactionId = String(share.original)
        if continuing && (lifecycle == .upgrade || lifecycle == .offerRedeemed) {
            truth.supersedes = previous.map { String($0.transaction) }
        }
        announceMemberPeriod(
            truth,
            purchaser: account,
            group: group,
            share: share,
            reason: reason,
            type: continuing ? type : .subscribed,
            subtype: continuing ? subtype : (previous == nil ? .initialBuy : .resubscribe),
            lifecycle: continuing ? lifecycle : .familySubscribe,
            at: t
        )
        if !continuing, rng.chance(0.25) {
            // A quarter of the purchasers stop sharing within a few periods.
            let period = Double(groupLevels[group][Int(sub.position)].periodMillis) / 1000
            schedule(.stopSharing(account: account, group: group), at: t + rng.between(0.2, 2) * period)
        }
    }

    /// The partner's transaction for a new period on its devices (`Transaction.updates`), then its notification.
    private mutating func announceMemberPeriod(
        _ truth: Truth,
        purchaser account: Int,
        group: Int,
        share: FamilyShare,
        reason: TransactionReason,
        type: NotificationTypeV2,
        subtype: Subtype?,
        lifecycle: Lifecycle,
        at t: Double
    ) {
        let partner = account ^ 1  // accounts pair as 2k and 2k+1 (see `familyPartner`)
        let now = millis(t)
        let event = newEvent()
        let facts = memberTransaction(account: account, group: group, share: share, reason: reason, signedMs: now)
        deliverToDevices(
            facts,
            account: partner,
            purchaser: nil,
            everyDevice: true,
            lifecycle: lifecycle,
            event: event,
            truth: truth,
            at: t,
            cause: nil
        )
        let note = notification(
            type: type,
            subtype: subtype,
            signedMs: now,
            status: SubscriptionStatus.active.wire,
            facts,
            memberRenewal(account: account, group: group, share: share, signedMs: now)
        )
        emit(lifecycle, account: partner, event: event, at: t + rng.between(0.1, 0.6), .notification(note), truth)
    }

    /// A change of the purchaser's subscription status (a billing failure, a grace period's end, an expiry, a
    /// renewal extension) reaches the partner for its own transaction; an expiry ends the sharing until the
    /// purchaser subscribes again.
    mutating func shareNotice(account: Int, group: Int, _ notice: SubscriptionLifecycle.Notice, at t: Double) {
        guard notice.truth != .none, let share = accounts[account].familyShare(group), share.active,
            let partner = Self.familyPartner(of: account, seed: profile.seed, population: profile.population),
            let sub = accounts[account].sub(group)
        else { return }
        let now = millis(t)
        var truth = subscriptionTruth(account: account, group: group, kind: notice.truth, signedMs: now)
        truth.transactionId = String(share.transaction)
        truth.originalTransactionId = String(share.original)
        let note = notification(
            type: notice.type,
            subtype: notice.subtype,
            signedMs: now,
            status: sub.status.wire,
            memberTransaction(account: account, group: group, share: share, reason: nil, signedMs: now),
            memberRenewal(account: account, group: group, share: share, signedMs: now)
        )
        emit(notice.lifecycle, account: partner, event: newEvent(), at: t, .notification(note), truth)
        if sub.isOver {
            var ended = share
            ended.active = false
            accounts[account].setFamilyShare(ended)
            accounts[partner].familyMember.set(group, false)
        }
    }

    /// The partner loses the shared subscription (`REVOKE`, `FAMILY_REVOKE`): the purchaser's current period was
    /// refunded, moved to a product that is not family-shareable, or the purchaser stopped sharing
    /// (`stopsSharing`, for good).
    mutating func revokeFamilyShare(account: Int, group: Int, at t: Double, cause: String?, stopsSharing: Bool) {
        guard var share = accounts[account].familyShare(group), share.active,
            let partner = Self.familyPartner(of: account, seed: profile.seed, population: profile.population)
        else { return }
        let now = millis(t)
        var facts = memberTransaction(account: account, group: group, share: share, reason: nil, signedMs: now)
        facts.payload.revocationDate = now
        facts.payload.revocationReason = .refundedForOtherReason  // as Apple sends a family revocation
        facts.payload.revocationType = .familyRevoke
        facts.payload.revocationPercentage = nil
        var truth = subscriptionTruth(account: account, group: group, kind: .revoke, signedMs: now)
        truth.transactionId = facts.transactionId
        truth.originalTransactionId = facts.originalTransactionId
        truth.status = .revoked
        truth.gracePeriodExpiresDate = nil
        share.active = false
        share.stopped = share.stopped || stopsSharing
        accounts[account].setFamilyShare(share)
        accounts[partner].familyMember.set(group, false)
        var renewal = memberRenewal(account: account, group: group, share: share, signedMs: now)
        renewal.autoRenewStatus = 0
        let event = newEvent()
        let note = notification(
            type: .revoke,
            subtype: nil,
            signedMs: now,
            status: SubscriptionStatus.revoked.wire,
            facts,
            renewal
        )
        emit(.familyRevoke, account: partner, event: event, at: t, .notification(note), truth, cause: cause)
        deliverToDevices(
            facts,
            account: partner,
            purchaser: nil,
            everyDevice: true,
            lifecycle: .familyRevoke,
            event: event,
            truth: truth,
            at: t,
            cause: cause
        )
    }

    /// The partner's `FAMILY_SHARED` transaction for the purchaser's current period: free, with no offer.
    private mutating func memberTransaction(
        account: Int,
        group: Int,
        share: FamilyShare,
        reason: TransactionReason?,
        signedMs: Int64
    ) -> TransactionFacts {
        let partner = account ^ 1  // accounts pair as 2k and 2k+1 (see `familyPartner`)
        let facts = subscriptionTransaction(account: account, group: group, reason: reason, signedMs: signedMs)
        var shared = sharedCopy(of: facts, transaction: share.transaction, original: share.original, partner: partner)
        shared.payload.originalPurchaseDate = share.originalMs
        shared.payload.offerType = nil
        shared.payload.offerIdentifier = nil
        shared.payload.offerDiscountType = nil
        shared.payload.offerPeriod = nil
        return shared
    }

    /// The partner's renewal info: the purchaser's, for the partner's own series and account, with no offer.
    private func memberRenewal(
        account: Int,
        group: Int,
        share: FamilyShare,
        signedMs: Int64
    ) -> JWSRenewalInfoDecodedPayload {
        let partner = account ^ 1
        var facts = renewal(account: account, group: group, signedMs: signedMs)
        facts.originalTransactionId = String(share.original)
        facts.appAccountToken = token(partner)
        facts.appTransactionId = appTransactionId(partner)
        facts.offerType = nil
        facts.offerIdentifier = nil
        facts.offerDiscountType = nil
        facts.eligibleWinBackOfferIds = nil
        return facts
    }
}
