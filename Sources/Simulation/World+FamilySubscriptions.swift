internal import AppStoreModel
import Primitives
internal import Profile

// Family Sharing of auto-renewable subscriptions: while the purchaser's product is family-shareable, the partner
// has its own FAMILY_SHARED transaction for each period (its own transactionId, and its own originalTransactionId
// for the series, as Apple issues them), its own SUBSCRIBED, DID_RENEW and status notifications, a REVOKE
// (FAMILY_REVOKE) when the purchaser is refunded or stops sharing, and a REFUND_REVERSED when that refund is.

extension World {
    /// The purchaser's new period (a purchase, a renewal, an upgrade) reaches the partner as its own
    /// `FAMILY_SHARED` transaction (see ``FamilyShare/newPeriod(type:subtype:lifecycle:shareable:partnerTaken:)``).
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
        var share = accounts[account].familyShare(group) ?? FamilyShare(group: group)
        let effects = share.newPeriod(
            type: type,
            subtype: subtype,
            lifecycle: lifecycle,
            shareable: products[groupProducts[group][Int(sub.position)]].familyShareable,
            partnerTaken: accounts[partner].sub(group).map { !$0.isOver } == true
                || accounts[partner].familyMember.contains(group)
        )
        play(effects, of: share, account: account, at: t, cause: nil)
    }

    /// A change of the purchaser's subscription status (a billing failure, a grace period's end, an expiry, a
    /// renewal extension) reaches the partner for its own transaction; an expiry ends the sharing until the
    /// purchaser subscribes again.
    mutating func shareNotice(account: Int, group: Int, _ notice: SubscriptionLifecycle.Notice, at t: Double) {
        guard notice.truth != .none, var share = accounts[account].familyShare(group),
            let sub = accounts[account].sub(group)
        else { return }
        let effects = share.notice(notice, ends: sub.isOver)
        play(effects, of: share, account: account, at: t, cause: nil)
    }

    /// The partner loses the shared subscription (`REVOKE`, `FAMILY_REVOKE`): the purchaser's current period was
    /// refunded (`refunded`), moved to a product that is not family-shareable, or the purchaser stopped sharing
    /// (`stopsSharing`, for good).
    mutating func revokeFamilyShare(
        account: Int,
        group: Int,
        at t: Double,
        cause: String?,
        stopsSharing: Bool,
        refunded: Bool = false
    ) {
        guard var share = accounts[account].familyShare(group) else { return }
        let effects = share.revoke(stopsSharing: stopsSharing, refunded: refunded)
        play(effects, of: share, account: account, at: t, cause: cause)
    }

    /// Apple reversed the refund of the purchaser's current period: the partner's revoked transaction is
    /// reinstated too, when the share can be (see `FamilyShare.reinstate`).
    mutating func reinstateFamilyShare(account: Int, group: Int, at t: Double) {
        guard var share = accounts[account].familyShare(group), let sub = accounts[account].sub(group) else { return }
        let partner = account ^ 1  // accounts pair as 2k and 2k+1 (see `familyPartner`)
        let effects = share.reinstate(
            ongoing: sub.isEntitled,
            shareable: products[groupProducts[group][Int(sub.position)]].familyShareable,
            partnerTaken: accounts[partner].sub(group).map { !$0.isOver } == true
                || accounts[partner].familyMember.contains(group)
        )
        // Stored even without effects: a share the reversal did not restore waits for the next period.
        accounts[account].setFamilyShare(share)
        play(effects, of: share, account: account, at: t, cause: nil)
    }

    /// Carries out a share's effects in order; `share` is the machine after its event, stored before the first.
    mutating func play(
        _ effects: [FamilyShare.Effect],
        of share: FamilyShare,
        account: Int,
        at t: Double,
        cause: String?
    ) {
        guard !effects.isEmpty else { return }
        var share = share
        let partner = account ^ 1  // accounts pair as 2k and 2k+1 (see `familyPartner`)
        accounts[account].setFamilyShare(share)
        for effect in effects {
            switch effect {
            case .join:
                accounts[partner].familyMember.set(share.group, true)
            case .leave:
                accounts[partner].familyMember.set(share.group, false)
            case .announce(let period):
                share.number(newTransaction(), atMs: millis(t))
                accounts[account].setFamilyShare(share)
                announceMemberPeriod(period, purchaser: account, share: share, at: t)
            case .drawStop:
                // A quarter of the purchasers stop sharing within a few periods.
                guard rng.chance(0.25), let sub = accounts[account].sub(share.group) else { continue }
                let period = Double(groupLevels[share.group][Int(sub.position)].periodMillis) / 1000
                schedule(.stopSharing(account: account, group: share.group), at: t + rng.between(0.2, 2) * period)
            case .forward(let notice):
                forward(notice, purchaser: account, share: share, at: t)
            case .revoke:
                revokeMember(purchaser: account, share: share, at: t, cause: cause)
            case .reinstate:
                reinstateMember(purchaser: account, share: share, at: t)
            }
        }
    }

    /// The partner's transaction for a new period on its devices (`Transaction.updates`), then its notification.
    private mutating func announceMemberPeriod(
        _ period: FamilyShare.Period,
        purchaser account: Int,
        share: FamilyShare,
        at t: Double
    ) {
        let partner = account ^ 1
        let group = share.group
        let now = millis(t)
        var truth = subscriptionTruth(account: account, group: group, kind: .grant, signedMs: now)
        truth.transactionId = String(share.transaction)
        truth.originalTransactionId = String(share.original)
        if let supersedes = period.supersedes { truth.supersedes = String(supersedes) }
        let event = newEvent()
        let facts = memberTransaction(account: account, share: share, reason: period.reason, signedMs: now)
        deliverToDevices(
            facts,
            account: partner,
            purchaser: nil,
            everyDevice: true,
            lifecycle: period.lifecycle,
            event: event,
            truth: truth,
            at: t,
            cause: nil
        )
        let note = notification(
            type: period.type,
            subtype: period.subtype,
            signedMs: now,
            status: SubscriptionStatus.active.wire,
            facts,
            memberRenewal(account: account, share: share, signedMs: now)
        )
        emit(
            period.lifecycle,
            account: partner,
            event: event,
            at: t + rng.between(0.1, 0.6),
            .notification(note),
            truth
        )
    }

    /// The purchaser's status change as the partner's notification, for the partner's own transaction.
    private mutating func forward(
        _ notice: SubscriptionLifecycle.Notice,
        purchaser account: Int,
        share: FamilyShare,
        at t: Double
    ) {
        guard let sub = accounts[account].sub(share.group) else { return }
        let now = millis(t)
        var truth = subscriptionTruth(account: account, group: share.group, kind: notice.truth, signedMs: now)
        truth.transactionId = String(share.transaction)
        truth.originalTransactionId = String(share.original)
        let note = notification(
            type: notice.type,
            subtype: notice.subtype,
            signedMs: now,
            status: sub.status.wire,
            memberTransaction(account: account, share: share, reason: nil, signedMs: now),
            memberRenewal(account: account, share: share, signedMs: now)
        )
        emit(notice.lifecycle, account: account ^ 1, event: newEvent(), at: t, .notification(note), truth)
    }

    /// The partner's transaction revoked (`REVOKE`, `FAMILY_REVOKE`), in its notification and on its devices.
    private mutating func revokeMember(purchaser account: Int, share: FamilyShare, at t: Double, cause: String?) {
        let partner = account ^ 1
        let now = millis(t)
        var facts = memberTransaction(account: account, share: share, reason: nil, signedMs: now)
        facts.payload.revocationDate = now
        facts.payload.revocationReason = .refundedForOtherReason  // as Apple sends a family revocation
        facts.payload.revocationType = .familyRevoke
        facts.payload.revocationPercentage = nil
        var truth = subscriptionTruth(account: account, group: share.group, kind: .revoke, signedMs: now)
        truth.transactionId = facts.transactionId
        truth.originalTransactionId = facts.originalTransactionId
        truth.status = .revoked
        truth.gracePeriodExpiresDate = nil
        var renewal = memberRenewal(account: account, share: share, signedMs: now)
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

    /// The partner's revoked transaction reinstated with the purchaser's period (`REFUND_REVERSED`).
    private mutating func reinstateMember(purchaser account: Int, share: FamilyShare, at t: Double) {
        guard let sub = accounts[account].sub(share.group) else { return }
        let now = millis(t)
        var truth = subscriptionTruth(account: account, group: share.group, kind: .reinstate, signedMs: now)
        truth.transactionId = String(share.transaction)
        truth.originalTransactionId = String(share.original)
        let note = notification(
            type: .refundReversed,
            subtype: nil,
            signedMs: now,
            status: sub.status.wire,
            memberTransaction(account: account, share: share, reason: nil, signedMs: now),
            memberRenewal(account: account, share: share, signedMs: now)
        )
        emit(.refundReversal, account: account ^ 1, event: newEvent(), at: t, .notification(note), truth)
    }

    /// The partner's `FAMILY_SHARED` transaction for the purchaser's current period: free, with no offer.
    private mutating func memberTransaction(
        account: Int,
        share: FamilyShare,
        reason: TransactionReason?,
        signedMs: Int64
    ) -> TransactionFacts {
        let partner = account ^ 1  // accounts pair as 2k and 2k+1 (see `familyPartner`)
        let facts = subscriptionTransaction(account: account, group: share.group, reason: reason, signedMs: signedMs)
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
        share: FamilyShare,
        signedMs: Int64
    ) -> JWSRenewalInfoDecodedPayload {
        let partner = account ^ 1
        var facts = renewal(account: account, group: share.group, signedMs: signedMs)
        facts.originalTransactionId = String(share.original)
        facts.appAccountToken = token(partner, purchase: share.original)
        facts.appTransactionId = appTransactionId(partner)
        facts.offerType = nil
        facts.offerIdentifier = nil
        facts.offerDiscountType = nil
        facts.eligibleWinBackOfferIds = nil
        return facts
    }
}
