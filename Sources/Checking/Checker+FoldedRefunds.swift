import Simulation
import TargetContract

/// What a probe shows of refunded purchases folded away (see `FoldedRefund`). Each refund stood long before any
/// probe still to be judged asked, so the transaction itself must be neither entitled nor listed as granted;
/// the product-level checks read the product's latest refunds, which stay whole. A folded refund's trail is
/// gone: its witness is the refund itself and what the probe showed.
extension Checker {
    /// A folded refund that the target's books or entitlements still grant (revocation honored).
    func foldedRefundRevocationFinding(_ context: Context) -> Finding? {
        for listed in context.observed.transactions ?? [] where listed.state == .granted {
            guard let refund = context.book.foldedRefund(listed.transactionId) else { continue }
            return .fail(
                "the target's books still show refunded transaction \(listed.transactionId) of \(listed.productId) as granted",
                [entry(refund)],
                showing(listed),
                about: .transaction(listed.transactionId)
            )
        }
        for entitlement in context.observed.entitlements {
            guard let id = entitlement.transactionId, let refund = context.book.foldedRefund(id) else { continue }
            return .fail(
                "the target still entitles \(entitlement.productId) through refunded transaction \(id)",
                [entry(refund)],
                showing(entitlement),
                about: .transaction(id)
            )
        }
        return nil
    }

    /// A folded refund whose transaction a probe no longer showed and now shows entitled again (stale
    /// regression); marks those the probe does not show.
    func foldedRefundRegressionFinding(_ context: Context, book: inout AccountBook) -> Finding? {
        let shown = Set(context.observed.entitlements.compactMap { $0.transactionId.flatMap { UInt64($0) } })
        guard let refund = book.noteFoldedRefunds(shown: shown).first,
            let entitlement = context.observed.entitlements.first(where: {
                $0.transactionId.flatMap { UInt64($0) } == refund.id
            })
        else { return nil }
        return .fail(
            "transaction \(refund.id) of \(entitlement.productId) was revoked, disappeared, then came back without a refund reversal",
            [entry(refund)],
            showing(entitlement),
            about: .transaction(String(refund.id))
        )
    }

    /// The witness entry of a folded refund: its signed date, the one thing the oracle still knows of it.
    private func entry(_ refund: FoldedRefund) -> WitnessEntry {
        WitnessEntry(
            at: Double(refund.revokedDate - startMillis) / 1000,
            delivery: nil,
            transactionId: String(refund.id),
            sentence: "transaction \(refund.id) was refunded (signed at \(refund.revokedDate) ms) and the target "
                + "acknowledged the refund; its earlier history was folded away to bound the oracle's memory"
        )
    }
}
