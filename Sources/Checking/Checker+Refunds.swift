import Profile
import Simulation
import TargetContract

/// What the target's books say of refunds, when the probe lists them: how often each refund was applied
/// (`refunds`), and which transactions are revoked and over which period (`transactions`). A refund applied
/// more often than the App Store refunded the transaction is a double refund; a transaction revoked or refunded
/// that the App Store never refunded or revoked, an over-revocation; a refunded period whose end moved, a wrong
/// subscription state.
extension Checker {
    /// No-double-refund: nil when the probe lists no refunds (the invariant is then not checked). A transaction
    /// the oracle no longer keeps (folded), rebuilt from the folded counts (its earlier refunds forgotten) or
    /// never issued decides nothing; one the App Store never refunded is an over-revocation
    /// (``overRevocationFinding(_:)``).
    func doubleRefundFinding(_ context: Context) -> Finding? {
        guard let refunds = context.observed.refunds else { return nil }
        let counts = Dictionary(refunds.map { ($0.transactionId, $0.count) }, uniquingKeysWith: +)
        for (id, count) in counts.sorted(by: { $0.key < $1.key }) where count > 1 {
            guard let tx = context.book.txs[id], tx.genuine, !tx.refundsForgotten, tx.refundsIssued > 0,
                count > tx.refundsIssued
            else { continue }
            let issued = tx.refundsIssued == 1 ? "once" : "\(tx.refundsIssued) times"
            return .fail(
                "the target applied the refund of transaction \(id) of \(tx.product) \(count) times, but the App "
                    + "Store refunded it \(issued)",
                context.evidence([tx], [.purchase, .refund]),
                "listed \(count) refunds of transaction \(id)",
                about: .transaction(id)
            )
        }
        return .pass
    }

    /// Revocation-honored: a transaction the target's books list as revoked, or as refunded, though the App
    /// Store never refunded or revoked it (an upgraded period, which may read as revoked, aside). Not judged for
    /// a target served the App Store Server API, which may show a refund before its notification is dispatched.
    func overRevocationFinding(_ context: Context) -> Finding? {
        guard context.learnsOnlyFromDeliveries else { return nil }
        let revoked = (context.observed.transactions ?? []).filter { $0.state == .revoked }.map(\.transactionId)
        let refunded = (context.observed.refunds ?? []).filter { $0.count > 0 }.map(\.transactionId)
        for id in revoked + refunded {
            guard let tx = context.book.txs[id], tx.genuine, tx.refundsIssued == 0, tx.revokedDate == 0, !tx.superseded
            else { continue }
            let how =
                revoked.contains(id) ? "listed transaction \(id) as revoked" : "listed a refund of transaction \(id)"
            return .fail(
                "the target revoked transaction \(id) of \(tx.product), which the App Store never refunded or revoked",
                context.evidence([tx], [.purchase, .acks]),
                how,
                about: .transaction(id)
            )
        }
        return nil
    }

    /// Subscription-state: a refunded period the target's books list with an end other than the one the App
    /// Store signed (a refund that stretched or cut the period it revoked). An upgraded period may end early.
    func revokedPeriodFinding(_ context: Context) -> Finding? {
        for listed in context.observed.transactions ?? [] where listed.state == .revoked {
            guard let end = listed.periodEnd, let tx = context.book.txs[listed.transactionId], tx.genuine, tx.revoked,
                !tx.superseded, tx.type == .autoRenewable, let truthEnd = tx.expires,
                abs(end - truthEnd) > context.boundary
            else { continue }
            return .fail(
                "the target's books give refunded transaction \(listed.transactionId) of \(tx.product) a period "
                    + "ending at \(end), but the App Store signed \(truthEnd)",
                context.evidence([tx], [.purchase, .refund, .recent]),
                showing(listed),
                about: .transaction(listed.transactionId)
            )
        }
        return nil
    }

    /// No-double-refund as unchecked when no probe listed refunds (and nothing else already says why).
    func uncheckedRefunds(_ tallies: [Invariant: Tally], besides unchecked: [Unchecked]) -> [Unchecked] {
        guard tallies[.noDoubleRefund] == nil, !unchecked.contains(where: { $0.invariant == .noDoubleRefund }) else {
            return []
        }
        return [
            Unchecked(
                invariant: .noDoubleRefund,
                reason: "the probe lists no refunds (`refunds: [{transactionId, count}]` in the probe contract)"
            )
        ]
    }
}
