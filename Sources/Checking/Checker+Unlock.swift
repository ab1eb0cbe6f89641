import Profile
import Simulation
import TargetContract

/// No unlock without a verified purchase: whatever the target entitles, credits or lists as granted must come
/// from a genuine purchase.
extension Checker {
    func unlockFinding(_ context: Context) -> Finding {
        for entitlement in context.observed.entitlements {
            if let failure = unlockedEntitlementFinding(entitlement, context) { return failure }
        }
        for (product, balance) in context.observed.balances where balance > 0 && !context.bought(product) {
            let forged = context.book.txs.values.filter { $0.product == product && $0.forged }
            let pending = context.book.pending[product]
            return .fail(
                "the target shows a balance of \(balance) \(product) but no verified purchase of it was sent",
                context.evidence(forged, .all, pending: pending),
                "showed a balance of \(balance) \(product)",
                about: .product(product)
            )
        }
        for (product, balance) in context.observed.balances where balance > 0 && context.bought(product) {
            if let failure = creditedForgeryFinding(product, balance: balance, context) { return failure }
        }
        for grant in context.observed.grants ?? [] where grant.count > 0 {
            if let failure = unissuedGrantFinding(grant, context) { return failure }
        }
        return .pass
    }

    /// An entitlement that no verified purchase explains: through a forged transaction, of a product never
    /// bought (or only pending), or through an unverified source the target trusted.
    private func unlockedEntitlementFinding(_ entitlement: AccountState.Entitlement, _ context: Context) -> Finding? {
        if let id = entitlement.transactionId, let tx = context.book.txs[id], tx.forged && !tx.genuine {
            return .fail(
                "the target entitles \(entitlement.productId) through transaction \(id), which exists only in a forged delivery",
                context.evidence([tx], .all),
                showing(entitlement),
                about: .transaction(id)
            )
        }
        // A purchase the App Store emulation already disclosed (the harness, behind its schedule, has not booked
        // it yet) explains an entitlement that names it.
        if !context.bought(entitlement.productId),
            !(entitlement.transactionId.map { context.isDisclosed($0, product: entitlement.productId) } ?? false)
        {
            let forged = context.book.txs.values.filter { $0.product == entitlement.productId && $0.forged }
            if let pending = context.book.pending[entitlement.productId] {
                return .fail(
                    "the target entitles \(entitlement.productId), whose only purchase was pending (Ask to Buy) or declined",
                    context.evidence(forged, .all, pending: pending),
                    showing(entitlement),
                    about: .product(entitlement.productId)
                )
            }
            let how =
                forged.isEmpty ? "no purchase of it was ever sent" : "only forged transactions of it were sent"
            return .fail(
                "the target entitles \(entitlement.productId) but \(how)",
                context.evidence(forged, .all),
                showing(entitlement),
                about: .product(entitlement.productId)
            )
        }
        // An entitlement through a genuine transaction is that purchase's, whatever else was sent.
        if !context.namesGenuineTransaction(entitlement),
            let source = unverifiedSource(of: entitlement.productId, context)
        {
            return .fail(
                "the target entitles \(entitlement.productId), whose every verified purchase was refunded, and "
                    + source.reading + " (or a refund was not honored)",
                source.evidence,
                showing(entitlement),
                about: .product(entitlement.productId)
            )
        }
        if let source = unverifiedSource(ofSubscription: entitlement, context) {
            return .fail(
                "the target entitles \(entitlement.productId), though no subscription of its group is owed one, and "
                    + source.reading + " (or a refund or an expiry was not honored)",
                source.evidence,
                showing(entitlement),
                about: .product(entitlement.productId)
            )
        }
        return nil
    }

    /// A grant of a transaction the App Store never issued, or that exists only in a forged delivery.
    private func unissuedGrantFinding(_ grant: AccountState.Grant, _ context: Context) -> Finding? {
        guard let tx = context.book.txs[grant.transactionId] else {
            if let number = UInt64(grant.transactionId), context.book.foldedIDs.contains(number) { return nil }
            // Carried by a genuine notification before its own deliveries came: issued, not yet booked.
            if context.book.issuedAhead[grant.transactionId] != nil { return nil }
            // Disclosed by the App Store emulation (verifyReceipt, the API) before the harness booked it.
            if context.isDisclosed(grant.transactionId) { return nil }
            return .fail(
                "the target granted transaction \(grant.transactionId), which the App Store never issued",
                [],
                showing(grant),
                about: .transaction(grant.transactionId)
            )
        }
        if tx.forged && !tx.genuine {
            return .fail(
                "the target granted transaction \(grant.transactionId), which exists only in a forged delivery",
                context.evidence([tx], .all),
                showing(grant),
                about: .transaction(grant.transactionId)
            )
        }
        return nil
    }
}
