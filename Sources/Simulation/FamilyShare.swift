internal import AppStoreModel

// One subscription an account shares with its Family Sharing partner, as a value state machine.

/// One subscription an account shares with its Family Sharing partner, kept by the purchaser, one per group:
/// the partner's own `FAMILY_SHARED` series (its own `originalTransactionId`, as Apple issues them), shared,
/// lapsed with the purchaser's subscription, or stopped for good. Events in, ``Effect``s out, as
/// ``SubscriptionLifecycle`` does.
///
/// The world numbers the partner's transactions, draws, signs the payloads and carries out the effects in the
/// order given.
struct FamilyShare: Sendable, Hashable {
    /// Where the sharing stands.
    private enum State: UInt8, Sendable, Hashable {
        /// Never shared yet.
        case unshared
        /// The partner has the subscription now.
        case sharing
        /// The purchaser's subscription ended, was refunded or moved to a product that is not family-shareable:
        /// shared again with its next shareable period.
        case lapsed
        /// The purchaser stopped sharing it: never shared again.
        case stopped
        /// The purchaser's current period was refunded: shared again if Apple reverses that refund, else with
        /// the purchaser's next shareable period.
        case refunded
    }

    /// The partner's notification of its transaction for the purchaser's new period.
    struct Period: Sendable, Hashable {
        var type: NotificationTypeV2
        var subtype: Subtype?
        var lifecycle: Lifecycle
        /// The partner's transaction's `transactionReason`.
        var reason: TransactionReason
        /// The partner's transaction this one replaces before its period ended (an upgrade, an offer redeemed).
        var supersedes: UInt64?
    }

    /// What the world does after an event, in order.
    enum Effect: Sendable, Hashable {
        /// The partner has the group through the family.
        case join
        /// The partner no longer has the group through the family.
        case leave
        /// The partner gets its own transaction for the purchaser's new period: the world numbers it, records
        /// it with ``FamilyShare/number(_:atMs:)`` and announces it.
        case announce(Period)
        /// Draw whether the purchaser stops sharing within a few periods.
        case drawStop
        /// The purchaser's status change reaches the partner, for the partner's own transaction.
        case forward(SubscriptionLifecycle.Notice)
        /// The partner's transaction is revoked (`REVOKE`, `FAMILY_REVOKE`).
        case revoke
        /// The partner's revoked transaction is reinstated with the purchaser's period (`REFUND_REVERSED`).
        case reinstate
    }

    /// The subscription group shared.
    let group: Int
    /// The partner's `originalTransactionId`: its first shared transaction, for every later period.
    private(set) var original: UInt64 = 0
    private(set) var originalMs: Int64 = 0
    /// The partner's transaction for the purchaser's current period.
    private(set) var transaction: UInt64 = 0
    private var state = State.unshared

    /// A subscription of `group` not shared yet.
    init(group: Int) { self.group = group }

    /// Whether the partner has the subscription now.
    var isSharing: Bool { state == .sharing }

    /// The purchaser's new period (a purchase, a renewal, an upgrade), notified to the purchaser as `type`,
    /// `subtype` and `lifecycle`: shared when its product is `shareable`, unless the purchaser stopped sharing.
    /// A share that is not running starts (`SUBSCRIBED`) only when the partner has the group neither by itself
    /// nor from someone else (`partnerTaken`); a running one goes on with the purchaser's notification type. A
    /// period that is not shareable revokes a running share.
    mutating func newPeriod(
        type: NotificationTypeV2,
        subtype: Subtype?,
        lifecycle: Lifecycle,
        shareable: Bool,
        partnerTaken: Bool
    ) -> [Effect] {
        guard shareable, state != .stopped else { return revoke(stopsSharing: false) }
        switch state {
        case .sharing:
            // An upgrade or a redeemed offer replaces the partner's transaction; a renewal follows it.
            let replaces = lifecycle == .upgrade || lifecycle == .offerRedeemed
            let period = Period(
                type: type,
                subtype: subtype,
                lifecycle: lifecycle,
                reason: replaces ? .purchase : .renewal,
                supersedes: replaces ? transaction : nil
            )
            return [.join, .announce(period)]
        case .unshared, .lapsed, .refunded:
            guard !partnerTaken else { return [] }
            let period = Period(
                type: .subscribed,
                subtype: state == .unshared ? .initialBuy : .resubscribe,
                lifecycle: .familySubscribe,
                reason: .purchase,
                supersedes: nil
            )
            state = .sharing
            return [.join, .announce(period), .drawStop]
        case .stopped:
            return []
        }
    }

    /// Records the number of the partner's transaction for the new period (after ``Effect/announce(_:)``);
    /// the first one starts the partner's series.
    mutating func number(_ transaction: UInt64, atMs nowMs: Int64) {
        self.transaction = transaction
        if original == 0 {
            original = transaction
            originalMs = nowMs
        }
    }

    /// A change of the purchaser's subscription status reaches the partner; one that ends the subscription
    /// (`ends`) ends the sharing until the purchaser's next period.
    mutating func notice(_ notice: SubscriptionLifecycle.Notice, ends: Bool) -> [Effect] {
        guard state == .sharing else { return [] }
        guard ends else { return [.forward(notice)] }
        state = .lapsed
        return [.forward(notice), .leave]
    }

    /// The partner loses the subscription: the purchaser's current period was refunded (`refunded`) or is not
    /// shareable, or the purchaser stopped sharing (`stopsSharing`, for good). A share that is not running does
    /// nothing.
    mutating func revoke(stopsSharing: Bool, refunded: Bool = false) -> [Effect] {
        guard state == .sharing else { return [] }
        state = stopsSharing ? .stopped : refunded ? .refunded : .lapsed
        return [.leave, .revoke]
    }

    /// Apple reverses the refund that revoked the share: the partner has the purchaser's period again while it
    /// runs (`ongoing`), its product is shareable and the partner has the group neither by itself nor from someone
    /// else (`partnerTaken`); otherwise the share waits for the purchaser's next period.
    mutating func reinstate(ongoing: Bool, shareable: Bool, partnerTaken: Bool) -> [Effect] {
        guard state == .refunded else { return [] }
        guard ongoing && shareable && !partnerTaken else {
            state = .lapsed
            return []
        }
        state = .sharing
        return [.join, .reinstate]
    }
}

extension SimulatedAccount {
    /// The account's share of its subscription in `group` with its partner, if it ever shared it.
    func familyShare(_ group: Int) -> FamilyShare? { familyShares.first { $0.group == group } }

    mutating func setFamilyShare(_ share: FamilyShare) {
        familyShares.removeAll { $0.group == share.group }
        familyShares.append(share)
    }
}
