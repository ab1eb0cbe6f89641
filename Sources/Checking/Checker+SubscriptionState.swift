import Profile
import Simulation
import TargetContract

/// Subscription state: what the target entitles of a subscription group, and the periods its books give the
/// group's transactions, agree with the App Store's.
extension Checker {
    /// Subscription state covers the target's per-transaction books too: a granted period whose end differs
    /// from the one Apple signed (say a refund that arrived before its renewal, so the target cancelled the
    /// previous period and stretched it over the refunded one) makes the target entitle the subscription for
    /// a time it was not bought, or not for a time it was. That is a wrong subscription state, not a stale
    /// regression: no older data overrode newer, the target computed the period wrongly from current data.
    func subscriptionFinding(_ context: Context) -> Finding {
        if let failure = revokedPeriodFinding(context) { return failure }
        if let failure = periodEndFinding(context) { return failure }
        var undecided = Undecided()
        for (original, sub) in context.book.subs where sub.status != .revoked {
            if let failure = seriesStateFinding(original, sub, context, undecided: &undecided) { return failure }
        }
        return undecided.finding
    }

    /// A granted period in the target's books that ends away from the end the App Store signed.
    private func periodEndFinding(_ context: Context) -> Finding? {
        for listed in context.observed.transactions ?? [] where listed.state == .granted {
            // An upgraded (superseded) period may legitimately end early; a refunded one is revocation's.
            guard let end = listed.periodEnd, let tx = context.book.txs[listed.transactionId], tx.genuine, tx.acked,
                !tx.revoked, !tx.superseded, tx.type == .autoRenewable, let truthEnd = tx.expires
            else { continue }
            if abs(end - truthEnd) > context.boundary {
                return .fail(
                    "the target's books give transaction \(listed.transactionId) of \(tx.product) a period ending at \(end), but the App Store signed \(truthEnd)",
                    context.evidence([tx], [.purchase, .acks, .refund, .recent]),
                    showing(listed),
                    about: .transaction(listed.transactionId)
                )
            }
        }
        return nil
    }

    /// One series' state against what the target entitles of its group: billing retry as the profile wants
    /// it, the level owed, owed and not entitled, or ended and still entitled.
    private func seriesStateFinding(
        _ original: String,
        _ sub: SubscriptionSeries,
        _ context: Context,
        undecided: inout Undecided
    ) -> Finding? {
        // Owed: any entitlement of the group will do. Not owed: only one this series can explain fails.
        let entitlement = entitlement(ofGroup: sub.group, series: original, context)
        let entitled = context.observed.entitlements.contains { groupOf[$0.productId] == sub.group }
        let series = context.book.txs.values.filter { $0.original == original && $0.genuine && !$0.revoked }
        if sub.near(context.now, boundary: context.boundary) {
            undecided.note(
                "subscription \(original) is within \(context.boundary) ms of an expiry or a change",
                later: true
            )
            return nil
        }
        let shows = entitlement.map(showing) ?? "showed no entitlement in group \(sub.group)"
        if sub.status == .billingRetry {
            guard let rule = options.billingRetryEntitled, (rule ? entitled : entitlement != nil) != rule else {
                return nil
            }
            return .fail(
                "subscription \(original) is in billing retry, where the profile wants entitled = \(rule)",
                context.evidence(Array(series), [.purchase, .acks]),
                shows,
                about: .transaction(sub.transactionId)
            )
        }
        let truthEntitled = sub.owed(at: context.now)
        // The level owed is the current transaction's: an upgrade (also by an offer) takes effect at once,
        // a downgrade only at the next renewal. Judged once the target acknowledged that transaction.
        if truthEntitled, let entitlement, entitlement.productId != sub.product,
            let current = context.book.txs[sub.transactionId], current.acked, !current.revoked
        {
            return .fail(
                "subscription \(original) is owed \(sub.product) since transaction \(sub.transactionId), which the target acknowledged, but the target entitles \(entitlement.productId)",
                context.evidence([current], [.purchase, .acks, .recent]),
                showing(entitlement),
                about: .transaction(sub.transactionId)
            )
        }
        if truthEntitled && !entitled {
            return owedNotEntitledFinding(original, sub, series: series, shows: shows, context, undecided: &undecided)
        } else if !truthEntitled, let entitlement, unverifiedSource(ofSubscription: entitlement, context) == nil {
            return endedStillEntitledFinding(
                original,
                sub,
                series: series,
                shows: shows,
                context,
                undecided: &undecided
            )
        }
        return nil
    }

    /// A series owed now that the target does not entitle, though it acknowledged a period that covers now.
    private func owedNotEntitledFinding(
        _ original: String,
        _ sub: SubscriptionSeries,
        series: [OracleTransaction],
        shows: String,
        _ context: Context,
        undecided: inout Undecided
    ) -> Finding? {
        let covering = series.filter { ($0.expires ?? 0) > context.now + context.boundary }
        // Owed up to the expiry the target acknowledged: a later one may not have reached it yet. A period
        // an upgrade the target acknowledged superseded obliges it to nothing, however long it ran.
        let acknowledged = covering.filter(\.acked)
        let known = context.book.txs.values.filter {
            $0.original == original && $0.genuine && $0.acknowledged(by: context.asked)
        }
        if acknowledged.contains(where: {
            ($0.acknowledgedExpires ?? 0) > context.now + context.boundary && !$0.isSuperseded(among: known)
        }) {
            return .fail(
                "subscription \(original) (\(sub.product)) is active until \(sub.end) and the target acknowledged it, but does not entitle it",
                context.evidence(covering, [.purchase, .acks]),
                shows,
                about: .transaction(sub.transactionId)
            )
        }
        if covering.contains(where: \.indeterminate) {
            undecided.note("the current period of subscription \(original) got no answer")
        } else if !acknowledged.isEmpty {
            undecided.note("the latest expiry of subscription \(original) has not reached the target")
        }
        return nil
    }

    /// A series that ended (by what the target acknowledged, past any expiry grace) whose group the target
    /// still entitles.
    private func endedStillEntitledFinding(
        _ original: String,
        _ sub: SubscriptionSeries,
        series: [OracleTransaction],
        shows: String,
        _ context: Context,
        undecided: inout Undecided
    ) -> Finding? {
        if context.stillRunsAsAcknowledged(series: original) {
            // The data that ended it (a refund, a resubscription ending sooner) has not reached the target.
            undecided.note("the end of subscription \(original) has not reached the target")
            return nil
        }
        switch expiryGrace(of: sub, context) {
        case .within: return nil
        case .nearItsEnd(let reason):
            undecided.note(reason, later: true)
            return nil
        case .outside: break
        }
        return .fail(
            "subscription \(original) (\(sub.product)) ended at \(sub.end) (status \(sub.status)) but the target still entitles group \(sub.group)",
            context.evidence(Array(series), [.acks, .refund, .recent]),
            shows,
            about: .transaction(sub.transactionId)
        )
    }
}
