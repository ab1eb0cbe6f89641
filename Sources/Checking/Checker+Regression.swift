import Profile
import Simulation
import TargetContract

/// No stale regression: an expiry moved back with no newer data that shortens it, or a refunded purchase that
/// disappeared and came back without a reversal.
extension Checker {
    func regressionFinding(_ context: Context, book: inout AccountBook) -> Finding {
        // Each part notes what the probe showed in the books, whatever an earlier part found.
        let movedBack = expiryMovedBackFinding(context, book: &book)
        let cameBack = cameBackFinding(context, book: &book)
        let folded = foldedRefundRegressionFinding(context, book: &book)
        return movedBack ?? cameBack ?? folded ?? .pass
    }

    /// A group's expiry moved back below what the target had acknowledged, with no data since the longest
    /// expiry shown that explains it; notes each group's expiry shown in `book`.
    private func expiryMovedBackFinding(_ context: Context, book: inout AccountBook) -> Finding? {
        var failure: Finding?
        var observedMax: [String: Int64] = [:]
        for entitlement in context.observed.entitlements {
            guard let group = groupOf[entitlement.productId], let expires = entitlement.expiresDate else { continue }
            observedMax[group] = max(observedMax[group] ?? .min, expires)
        }
        for (group, seen) in observedMax {
            let truth = book.longestTruth(of: group)
            // A first expiry, a longer one, or a shorter one that data since the longest explains (the target
            // took that data, and may not have the later data yet): what the target shows is the baseline.
            guard let previous = book.seenExpiry[group], seen < previous.longest, previous.shortestTruthSince > seen
            else {
                book.seenExpiry[group] = SeenExpiry(longest: seen, shortestTruthSince: truth?.expires ?? seen)
                continue
            }
            // Stale only below what the target acknowledged of the group when the probe asked: the data that
            // would lengthen the group again (an upgrade, an extension, another series' renewal) may still be on
            // its way. With nothing of the group standing acknowledged, nothing it shows is stale.
            if let truth, truth.expires >= previous.longest, truth.status != .revoked,
                let acknowledged = book.longestAcknowledged(of: group, by: context.asked, answered: context.answered),
                acknowledged > seen
            {
                // The stale delivery that set the older expiry, and the newer one it overrode.
                let stale = book.txs.values.filter { $0.group == group && $0.acked && $0.expires == seen }
                let newer = book.txs.values.filter {
                    $0.group == group && $0.acked && $0.expires == previous.longest
                }
                let txs = stale.isEmpty ? book.txs.values.filter { $0.group == group && $0.acked } : stale + newer
                failure =
                    failure
                    ?? .fail(
                        "the target moved the expiry of group \(group) back from \(previous.longest) to \(seen) ms although no newer data shortened it",
                        context.evidence(Array(txs), .acks),
                        "showed group \(group) expiring at \(seen) ms, after \(previous.longest) ms earlier",
                        about: .groupExpiry(group, seen)
                    )
            }
        }
        return failure
    }

    /// A refunded transaction (or a non-consumable with no unrefunded purchase left) that the target stopped
    /// entitling, then entitled again without a refund reversal; notes in `book` what is gone.
    private func cameBackFinding(_ context: Context, book: inout AccountBook) -> Finding? {
        var failure: Finding?
        let entitledIDs = Set(context.observed.entitlements.compactMap(\.transactionId))
        let entitledProducts = Set(context.observed.entitlements.map(\.productId))
        // Only a refund that stood when the probe asked is one the target must show (see `refundStood`).
        for (id, tx) in book.txs where tx.genuine && context.refundStood(tx) {
            if entitledIDs.contains(id) {
                if book.gone.contains(id) {
                    failure =
                        failure
                        ?? .fail(
                            "transaction \(id) of \(tx.product) was revoked, disappeared, then came back without a refund reversal",
                            context.evidence([tx], [.refund, .acks]),
                            "showed entitlement \(tx.product) (transaction \(id)) again",
                            about: .transaction(id)
                        )
                }
            } else {
                book.gone.insert(id)
            }
            guard tx.type == .nonConsumable, !context.unrefundedPurchase(of: tx.product, besides: id) else { continue }
            let key = "product:" + tx.product
            if entitledProducts.contains(tx.product) {
                // An unverified source the target trusted explains the return too: filed as an unlock.
                if book.gone.contains(key), unverifiedSource(of: tx.product, context) == nil {
                    failure =
                        failure
                        ?? .fail(
                            "\(tx.product) was revoked, disappeared, then came back without a refund reversal",
                            context.evidence([tx], [.refund, .acks]),
                            "showed entitlement \(tx.product) again",
                            about: .product(tx.product)
                        )
                }
            } else {
                book.gone.insert(key)
            }
        }
        return failure
    }
}
