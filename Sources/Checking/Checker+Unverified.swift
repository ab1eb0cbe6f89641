import Profile
import Simulation

/// What a target that trusts an unverified source shows: a consumable's excess that forged transactions explain,
/// an unlock that a forgery or a pending Ask to Buy explains once every verified purchase was refunded. Each is
/// filed as an unlock without a verified purchase, the plainer reading of what the probe shows.
extension Checker {
    /// What explains an entitlement to a one-time product (non-consumable or non-renewing) whose every verified
    /// purchase was refunded before the probe asked, besides a refund not honored: a forged transaction of it
    /// the target acknowledged, or an Ask to Buy of it reported pending. A target that trusts either unlocks
    /// the product whatever became of the refunds, so the plainer reading is the unlock, as for a consumable's
    /// excess (`creditedForgeryFinding`). Nil when a purchase still stands or neither was sent.
    func unverifiedSource(of product: String, _ c: Context) -> (reading: String, evidence: [WitnessEntry])? {
        guard typeOf[product] == .nonConsumable || typeOf[product] == .nonRenewing, c.bought(product),
            !c.unrefundedPurchase(of: product, besides: "")
        else { return nil }
        let refunded = c.genuine(product).map(\.1)
        // Only a forgery the target acknowledged: one that got no answer (a restart) from a target that refuses
        // forgeries leaves the refund not honored as the plainer reading.
        let forged = c.forgedOnly(product).filter { $0.trail.earliest(.acks) != nil }
        if !forged.isEmpty {
            return (
                "forged transactions of it were not refused: a forgery was credited",
                c.evidence(forged + refunded, .all)
            )
        }
        guard let pending = c.book.pending[product] else { return nil }
        return (
            "an Ask to Buy of it was reported pending: the pending purchase unlocked it",
            c.evidence(refunded, .all, pending: pending)
        )
    }

    /// A consumable's balance beyond what its genuine purchases allow (all sent, or what their refunds leave)
    /// that forged transactions the target may have credited explain: a forgery was credited.
    func creditedForgeryFinding(_ product: String, balance: Int, _ c: Context) -> Finding? {
        // A probe without per-transaction grants cannot tell it from a double grant or a refund not taken back;
        // forged units covering the excess make the forgery the plainer reading.
        let upper = c.genuineUnits(product)
        let allowed = c.unitsNotRefunded(product)
        let forged = c.forgedOnly(product)
        let forgedUnits = forged.reduce(0) { $0 + $1.quantity }
        guard forgedUnits > 0 else { return nil }
        let bound: String
        if balance > upper && balance <= upper + forgedUnits {
            bound = "the verified purchases sent add up to \(upper)"
        } else if balance > allowed && balance <= upper && balance <= allowed + forgedUnits {
            bound = "only \(allowed) remain once refunds are taken back"
        } else {
            return nil
        }
        return .fail(
            "the target shows \(balance) \(product) but \(bound), and forged transactions of it were "
                + "not refused: a forgery was credited (or "
                + (balance > upper ? "a purchase was credited twice)" : "a refund was not taken back)"),
            c.evidence(forged + c.genuine(product).map(\.1), .all),
            "showed a balance of \(balance) \(product)"
        )
    }
}
