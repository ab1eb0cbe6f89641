import AppStoreModel
import Testing

@testable import Simulation

/// Every transition of a subscription shared with the Family Sharing partner as one table: where the share
/// stands, the event, where it goes and the effects the world carries out, in order.
struct FamilyShareTests {
    typealias Effect = FamilyShare.Effect
    typealias Period = FamilyShare.Period

    /// How a share got where a row starts.
    enum Start: Sendable, CaseIterable {
        case unshared, sharing, lapsed, stopped
    }

    static let expiry = SubscriptionLifecycle.Notice(type: .expired, subtype: nil, lifecycle: .expiry, truth: .revoke)
    static let failure = SubscriptionLifecycle.Notice(
        type: .didFailToRenew,
        subtype: nil,
        lifecycle: .renewalFailure,
        truth: .none
    )

    static func share(_ start: Start) -> FamilyShare {
        var share = FamilyShare(group: 1)
        guard start != .unshared else { return share }
        _ = renewal(of: &share, shareable: true)
        share.number(50, atMs: 1_000)
        switch start {
        case .lapsed: _ = share.notice(expiry, ends: true)
        case .stopped: _ = share.revoke(stopsSharing: true)
        default: break
        }
        return share
    }

    static func renewal(
        of share: inout FamilyShare,
        lifecycle: Lifecycle = .renewal,
        shareable: Bool,
        partnerTaken: Bool = false
    ) -> [Effect] {
        share.newPeriod(
            type: .didRenew,
            subtype: nil,
            lifecycle: lifecycle,
            shareable: shareable,
            partnerTaken: partnerTaken
        )
    }

    static let first = Period(
        type: .subscribed,
        subtype: .initialBuy,
        lifecycle: .familySubscribe,
        reason: .purchase,
        supersedes: nil
    )
    static var again: Period {
        var period = first
        period.subtype = .resubscribe
        return period
    }
    static let renewed = Period(type: .didRenew, subtype: nil, lifecycle: .renewal, reason: .renewal, supersedes: nil)

    @Test(arguments: [
        (Start.unshared, true, false, true, [Effect.join, .announce(first), .drawStop]),
        (.unshared, true, true, false, []),
        (.unshared, false, false, false, []),
        (.sharing, true, false, true, [.join, .announce(renewed)]),
        (.sharing, true, true, true, [.join, .announce(renewed)]),
        (.sharing, false, false, false, [.leave, .revoke]),
        (.lapsed, true, false, true, [.join, .announce(again), .drawStop]),
        (.lapsed, true, true, false, []),
        (.stopped, true, false, false, []),
    ])
    func aNewPeriodStartsGoesOnOrEndsTheSharing(
        start: Start,
        shareable: Bool,
        partnerTaken: Bool,
        sharing: Bool,
        effects: [Effect]
    ) {
        var share = Self.share(start)
        let made = Self.renewal(of: &share, shareable: shareable, partnerTaken: partnerTaken)
        #expect(made == effects && share.isSharing == sharing)
    }

    @Test(arguments: [Lifecycle.upgrade, .offerRedeemed])
    func anUpgradeOrARedeemedOfferReplacesThePartnersTransaction(lifecycle: Lifecycle) {
        var share = Self.share(.sharing)
        let made = Self.renewal(of: &share, lifecycle: lifecycle, shareable: true)
        let period = Period(type: .didRenew, subtype: nil, lifecycle: lifecycle, reason: .purchase, supersedes: 50)
        #expect(made == [.join, .announce(period)])
    }

    @Test func theFirstNumberStartsThePartnersSeries() {
        var share = Self.share(.sharing)
        _ = Self.renewal(of: &share, shareable: true)
        share.number(60, atMs: 2_000)
        #expect(share.original == 50 && share.originalMs == 1_000 && share.transaction == 60)
    }

    @Test(arguments: [
        (Start.sharing, false, true, [Effect.forward(failure)]),
        (.sharing, true, false, [.forward(failure), .leave]),
        (.unshared, false, false, []),
        (.lapsed, true, false, []),
        (.stopped, false, false, []),
    ])
    func aNoticeReachesAPartnerSharingAndAnEndLapsesIt(start: Start, ends: Bool, sharing: Bool, effects: [Effect]) {
        var share = Self.share(start)
        #expect(share.notice(Self.failure, ends: ends) == effects && share.isSharing == sharing)
    }

    @Test(arguments: [
        (Start.sharing, false, [Effect.leave, .revoke], [Effect.join, .announce(again), .drawStop]),
        (.sharing, true, [.leave, .revoke], []),
        (.unshared, true, [], [.join, .announce(first), .drawStop]),
        (.lapsed, true, [], [.join, .announce(again), .drawStop]),
        (.stopped, false, [], []),
    ])
    func aRevocationLapsesTheShareOrStopsItForGood(
        start: Start,
        stopsSharing: Bool,
        effects: [Effect],
        next: [Effect]
    ) {
        var share = Self.share(start)
        let made = share.revoke(stopsSharing: stopsSharing)
        #expect(made == effects && !share.isSharing)
        #expect(Self.renewal(of: &share, shareable: true) == next)
    }

    /// A reversed refund gives the partner back the period the refund took, while it runs, is shareable and the
    /// partner has the group from nowhere else; a share that lapsed or stopped otherwise is not reinstated.
    @Test(arguments: [
        (Start.sharing, true, true, true, false, true, [Effect.join, .reinstate]),
        (.sharing, true, false, true, false, false, []),
        (.sharing, true, true, false, false, false, []),
        (.sharing, true, true, true, true, false, []),
        (.sharing, false, true, true, false, false, []),
        (.lapsed, false, true, true, false, false, []),
        (.unshared, false, true, true, false, false, []),
    ])
    func aReversedRefundReinstatesTheShareItRevoked(
        start: Start,
        refunded: Bool,
        ongoing: Bool,
        shareable: Bool,
        partnerTaken: Bool,
        sharing: Bool,
        effects: [Effect]
    ) {
        var share = Self.share(start)
        if start == .sharing { _ = share.revoke(stopsSharing: false, refunded: refunded) }
        let made = share.reinstate(ongoing: ongoing, shareable: shareable, partnerTaken: partnerTaken)
        #expect(made == effects && share.isSharing == sharing)
        // Reinstated once: a second reversal finds nothing to restore.
        #expect(share.reinstate(ongoing: true, shareable: true, partnerTaken: false) == [])
    }
}
