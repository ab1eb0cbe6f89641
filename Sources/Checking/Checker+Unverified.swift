import Profile
import Simulation
import TargetContract

/// What a target that trusts an unverified source shows: a consumable's excess that forged transactions explain,
/// an unlock that a forgery or a pending Ask to Buy explains once every verified purchase was refunded. Each is
/// filed as an unlock without a verified purchase, the plainer reading of what the probe shows.
extension Checker {
    /// What explains an entitlement to a one-time product (non-consumable or non-renewing) whose every verified
    /// purchase was refunded before the probe asked, besides a refund not honored: a forged transaction of it
    /// the target acknowledged, or an Ask to Buy of it reported pending. A target that trusts either unlocks
    /// the product whatever became of the refunds, so the plainer reading is the unlock, as for a consumable's
    /// excess (`creditedForgeryFinding`). A purchase delivery the target took after its refund and after the
    /// pending report, without saying it had it already, may have resurrected it (a stale overwrite): the later
    /// cause outweighs the pending report, and only an acknowledged forgery explains it then (either reading
    /// names the other). Nil when a purchase still stands or neither was sent.
    func unverifiedSource(of product: String, _ context: Context) -> (reading: String, evidence: [WitnessEntry])? {
        guard typeOf[product] == .nonConsumable || typeOf[product] == .nonRenewing, context.bought(product),
            !context.unrefundedPurchase(of: product, besides: "")
        else { return nil }
        let refunded = context.genuine(product).map(\.1)
        // The later cause is the plainer one: a replay taken after both the refund and the pending report. But a
        // target already seen unlocking this product on a pending report is known to do so; a replay is only
        // possibly taken, so the unlock stays the reading.
        let pendingAt = Int64(((context.book.pending[product]?.at ?? 0) * 1000).rounded(.up))
        let regranted = refunded.map(\.regrantedMillis).max() ?? 0
        let replayed =
            !context.book.unlockedOnPending.contains(product)
            && max(regranted, context.book.folded[product]?.regrantedMillis ?? 0) > pendingAt
        return unverifiedReading(of: product, beside: refunded, pendingCounts: !replayed, context)
    }

    /// Remembers the products the probe shows entitled that were never bought, while an Ask to Buy of them was
    /// reported pending and no forgery of them may have counted: the target unlocked them on the pending report.
    func noteUnlocksOnPending(_ context: Context, book: inout AccountBook) {
        for entitlement in context.observed.entitlements {
            let product = entitlement.productId
            if context.book.pending[product] != nil, !context.bought(product), context.forgedOnly(product).isEmpty {
                book.unlockedOnPending.insert(product)
            }
        }
    }

    /// What explains an entitlement to a subscription product, shown as a one-time unlock (no expiry, no genuine
    /// transaction), while no series of its group is owed one (each refunded or ended, none near a boundary): an
    /// acknowledged forgery of the product, or an Ask to Buy of it reported pending. A target that trusts either
    /// unlocks the product whatever became of its series, so the plainer reading is the unlock, as for a
    /// one-time product (`unverifiedSource(of:_:)`); revocation and subscription state then leave that
    /// entitlement to it. An entitlement with an expiry is a series' own, judged as one. Nil when the
    /// entitlement may be a series', a series may still be owed it, or neither source was sent.
    func unverifiedSource(
        ofSubscription entitlement: AccountState.Entitlement,
        _ context: Context
    ) -> (reading: String, evidence: [WitnessEntry])? {
        let product = entitlement.productId
        guard typeOf[product] == .autoRenewable, let group = groupOf[product], entitlement.expiresDate == nil
        else { return nil }
        if context.namesGenuineTransaction(entitlement) { return nil }
        guard
            !context.book.subs.values.contains(where: {
                $0.group == group && $0.mayBeOwed(at: context.now, boundary: context.boundary)
            })
        else { return nil }
        let ended = context.book.txs.values.filter { $0.group == group && $0.genuine && $0.sent }
        return unverifiedReading(of: product, beside: Array(ended), pendingCounts: true, context)
    }

    /// The unverified source that explains an unlock of `product`, with the genuine purchases it outlived as
    /// evidence: an acknowledged forgery of it, else (if `pendingCounts`) a pending Ask to Buy of it; nil when
    /// neither was sent.
    private func unverifiedReading(
        of product: String,
        beside genuine: [OracleTransaction],
        pendingCounts: Bool,
        _ context: Context
    ) -> (reading: String, evidence: [WitnessEntry])? {
        // Only a forgery the target acknowledged, and one it had to refuse: one that got no answer (a restart)
        // from a target that refuses forgeries, or a bare claim acknowledged as a report, leaves the refund not
        // honored as the plainer reading.
        let forged = context.forgedOnly(product).filter(\.forgeryAcknowledged)
        if !forged.isEmpty {
            return (
                "forged transactions of it were not refused: a forgery was credited",
                context.evidence(forged + genuine, .all)
            )
        }
        guard pendingCounts, let pending = context.book.pending[product] else { return nil }
        return (
            "an Ask to Buy of it was reported pending: the pending purchase unlocked it",
            context.evidence(genuine, .all, pending: pending)
        )
    }

    /// A consumable's balance beyond what its genuine purchases allow (all sent, or what their refunds leave)
    /// that forged transactions the target may have credited explain: a forgery was credited.
    func creditedForgeryFinding(_ product: String, balance: Int, _ context: Context) -> Finding? {
        // A probe without per-transaction grants cannot tell it from a double grant or a refund not taken back;
        // forged units covering the excess make the forgery the plainer reading.
        let upper = context.genuineUnits(product)
        let allowed = context.unitsNotRefunded(product)
        let forged = context.forgedOnly(product)
        let forgedUnits = forged.reduce(0) { $0 + $1.quantity }
        guard forgedUnits > 0 else { return nil }
        // Units that the probe's grants show credited twice are a double grant's (filed there), not a forgery's.
        let counted = balance - context.unitsGrantedAgain(product)
        let bound: String
        if counted > upper && counted <= upper + forgedUnits {
            bound = "the verified purchases sent add up to \(upper)"
        } else if counted > allowed && counted <= upper && counted <= allowed + forgedUnits {
            bound = "only \(allowed) remain once refunds are taken back"
        } else {
            return nil
        }
        return .fail(
            "the target shows \(balance) \(product) but \(bound), and forged transactions of it were "
                + "not refused: a forgery was credited (or "
                + (counted > upper ? "a purchase was credited twice)" : "a refund was not taken back)"),
            context.evidence(forged + context.genuine(product).map(\.1), .all),
            "showed a balance of \(balance) \(product)",
            about: .product(product)
        )
    }
}
