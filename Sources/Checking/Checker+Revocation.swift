import Profile
import Simulation
import TargetContract

/// Revocation honored: a refund the target acknowledged takes back what it paid for, and no more.
extension Checker {
    func revocationFinding(_ context: Context) -> Finding {
        if let failure = overRevocationFinding(context) { return failure }
        var undecided = Undecided()
        // The target's own books: a transaction the App Store refunded must read `revoked` there.
        for listed in context.observed.transactions ?? [] where listed.state == .granted {
            guard let tx = context.book.txs[listed.transactionId], tx.genuine, tx.revoked, tx.revocationAcked else {
                continue
            }
            return .fail(
                "the target's books still show refunded transaction \(listed.transactionId) of \(tx.product) as granted",
                context.evidence([tx], [.purchase, .refund, .acks]),
                showing(listed),
                about: .transaction(listed.transactionId)
            )
        }
        if let failure = foldedRefundRevocationFinding(context) { return failure }
        let entitledProducts = Set(context.observed.entitlements.map(\.productId))
        for (id, tx) in context.book.txs.sorted(by: { $0.value.sequence < $1.value.sequence })
        where tx.revoked && tx.genuine {
            guard tx.revocationAcked else {
                if tx.revocationIndeterminate { undecided.note("the refund of \(id) got no answer") }
                continue
            }
            if let failure = stillEntitledFinding(refunded: tx, id: id, entitled: entitledProducts, context) {
                return failure
            }
        }
        if let failure = refundNotTakenBackFinding(context, undecided: &undecided) { return failure }
        return undecided.finding
    }

    /// What the target still entitles through an acknowledged refund of `tx`: the transaction itself, its
    /// product when no other purchase explains it, or its subscription group; or an unrefunded purchase that
    /// the refund also took away.
    func stillEntitledFinding(
        refunded tx: OracleTransaction,
        id: String,
        entitled entitledProducts: Set<String>,
        _ context: Context
    )
        -> Finding?
    {
        if let entitlement = context.observed.entitlements.first(where: { $0.transactionId == id }) {
            return .fail(
                "the target still entitles \(tx.product) through refunded transaction \(id)",
                context.evidence([tx], [.purchase, .refund, .acks]),
                showing(entitlement),
                about: .transaction(id)
            )
        }
        switch tx.type {
        case .nonConsumable, .nonRenewing:
            return stillEntitledProductFinding(refunded: tx, id: id, entitled: entitledProducts, context)
        case .autoRenewable:
            return stillEntitledGroupFinding(refunded: tx, id: id, context)
        case .consumable, nil:
            return nil
        }
    }

    /// A refunded one-time purchase whose product the target still entitles with no other purchase to
    /// explain it, or whose refund also took away another, unrefunded purchase of it.
    private func stillEntitledProductFinding(
        refunded tx: OracleTransaction,
        id: String,
        entitled entitledProducts: Set<String>,
        _ context: Context
    ) -> Finding? {
        // Another unrefunded purchase of the product, kept or folded, may be what the target entitles.
        // An unverified source the target trusted explains it too: filed as an unlock (`unverifiedSource`).
        if entitledProducts.contains(tx.product) && !context.unrefundedPurchase(of: tx.product, besides: id)
            && unverifiedSource(of: tx.product, context) == nil
        {
            let entitlement = context.observed.entitlements.first { $0.productId == tx.product }
            // A replay after the refund outweighed a pending report (see `unverifiedSource`): say both.
            let pending = context.book.pending[tx.product]
            return .fail(
                "the target still entitles \(tx.product) although its only purchase \(id) was refunded"
                    + (pending == nil ? "" : " (or the Ask to Buy of it reported pending unlocked it)"),
                context.evidence([tx], [.purchase, .refund, .acks], pending: pending),
                entitlement.map(showing) ?? "showed entitlement \(tx.product)",
                about: .transaction(id)
            )
        }
        // Revoked too much: the refund of this transaction also took away another, unrefunded one.
        if !entitledProducts.contains(tx.product), let victim = overRevoked(by: tx, context) {
            return .fail(
                "the target revoked too much: the refund of transaction \(id) also removed unrefunded transaction \(victim.id) of \(tx.product)",
                context.evidence([(tx, .refund), (victim, [.purchase, .acks])]),
                "showed no entitlement to \(tx.product)",
                about: .transaction(victim.id)
            )
        }
        return nil
    }

    /// A refunded subscription transaction whose group the target still entitles.
    private func stillEntitledGroupFinding(refunded tx: OracleTransaction, id: String, _ context: Context) -> Finding? {
        // Not while another transaction of the series runs by what the target acknowledged (its own refund
        // never reached the target): that one may be what it entitles.
        if let group = tx.group, let original = tx.original, let sub = context.book.subs[original],
            sub.status == .revoked, let entitlement = entitlement(ofGroup: group, series: original, context),
            unverifiedSource(ofSubscription: entitlement, context) == nil,
            !context.stillRunsAsAcknowledged(series: original)
        {
            return .fail(
                "the target still entitles subscription group \(group) although transaction \(id) was refunded",
                context.evidence([tx], [.purchase, .refund]),
                showing(entitlement),
                about: .transaction(id)
            )
        }
        return nil
    }

    /// A consumable's balance beyond what its refunds leave, once forgeries the target may have credited are
    /// set aside: a refund not taken back.
    func refundNotTakenBackFinding(_ context: Context, undecided: inout Undecided) -> Finding? {
        for (product, balance) in context.observed.balances where typeOf[product] == .consumable {
            let refunded = context.genuine(product).filter { context.refundStood($0.1) }
            guard !refunded.isEmpty || (context.book.folded[product]?.refunded ?? 0) > 0 else { continue }
            let allowed = context.unitsNotRefunded(product)
            // Units that forged transactions the target may have credited explain are an unlock without a
            // verified purchase (filed there); only what remains beyond them proves a refund was not taken back.
            let forgedUnits = context.forgedOnly(product).reduce(0) { $0 + $1.quantity }
            // Units that the probe's grants show credited more than once are a double grant (filed there): a
            // refund taken back leaves them too. Transactions folded away may explain the rest: then undecided.
            let excess = balance - forgedUnits - context.unitsGrantedAgain(product) - allowed
            if excess > 0 && excess <= context.unitsFoldedGrantedAgain(product) {
                undecided.note("\(product) beyond its refunds may be folded transactions the target granted twice")
            } else if excess > 0 {
                let twice =
                    context.observed.grants == nil && balance <= context.genuineUnits(product)
                    ? " (or a purchase was credited twice: the probe shows no per-transaction grants)" : ""
                return .fail(
                    "the target shows \(balance) \(product) but only \(allowed) remain once refunds are taken back"
                        + twice,
                    context.evidence(refunded.map(\.1), .refund),
                    "showed a balance of \(balance) \(product)",
                    about: .product(product)
                )
            }
        }
        return nil
    }

    /// An acknowledged, unrefunded purchase of the same product that the target no longer entitles after
    /// `refunded`'s refund, if one is owed now (a non-renewing one only within its period, away from its end).
    /// Only a purchase the target acknowledged before the refund was first dispatched can have been taken by
    /// it: one bought later and missing is lost (no-lost-purchase), not revoked.
    func overRevoked(by refunded: OracleTransaction, _ context: Context) -> OracleTransaction? {
        guard let refundSent = refunded.trail.earliest(.refund) else { return nil }
        return context.book.txs.values.filter { tx in
            guard tx.id != refunded.id, tx.product == refunded.product, tx.genuine, tx.acked, !tx.revoked,
                !tx.forged, let acknowledged = tx.trail.earliest(.acks), acknowledged < refundSent
            else { return false }
            guard tx.type == .nonRenewing else { return true }
            guard let expires = tx.expires else { return false }
            return context.now + context.boundary < expires
        }.min { $0.sequence < $1.sequence }
    }
}
