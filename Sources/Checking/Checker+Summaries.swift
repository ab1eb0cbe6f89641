import Chaos
import Simulation

// A mass renewal extension's `RENEWAL_EXTENSION`/`SUMMARY` names no account and grants nothing, but the App Store
// needs a 2xx for it like for any notification: one the target refuses on its last attempt is lost to the backend
// (reported under "no lost purchase", whose rule covers a genuine notification never acknowledged).

/// What became of one attempt of a summary.
enum SummaryFate: Sendable {
    case acknowledged
    /// Rejected, and the App Store will not try again.
    case refused
    /// Rejected with a retry to come, or no answer: the next attempt decides.
    case undecided
}

extension Checker {
    /// The fate of an attempt, or nil when the delivery is not a genuine summary.
    func summaryFate(_ delivery: PlannedDelivery, outcome: DeliveryOutcome, at t: Double) -> SummaryFate? {
        guard !delivery.isForged, delivery.action.lifecycle == .renewalExtensionSummary else { return nil }
        if outcome.isAcknowledged { return .acknowledged }
        guard case .rejected = outcome.refusingDeferral else { return .undecided }
        return isTriedAgain(delivery, after: outcome, at: t) ? .undecided : .refused
    }

    /// A summary the target refused on the App Store's last attempt and never acknowledged on another.
    func refusedSummaryFinding(_ c: Context) -> Finding? {
        let refused = c.book.refusedSummaries.filter { !c.book.acknowledgedSummaries.contains($0.key) }
        guard let (event, entry) = refused.min(by: { $0.value.at < $1.value.at }) else { return nil }
        return .fail(
            "the target refused RENEWAL_EXTENSION/SUMMARY, a genuine notification it must acknowledge though it "
                + "grants nothing, on the App Store's last attempt",
            [entry],
            "came after the App Store had stopped retrying it",
            about: .notification(event)
        )
    }
}

extension Book {
    /// Notes an attempt of the summary of `event`.
    mutating func note(summary event: UInt64, fate: SummaryFate, at t: Double, delivery: UInt64, phrase: String) {
        switch fate {
        case .acknowledged: acknowledgedSummaries.insert(event)
        case .refused:
            refusedSummaries[event] = WitnessEntry(
                at: t,
                delivery: delivery,
                transactionId: nil,
                sentence: "delivery \(delivery): " + phrase
            )
        case .undecided: break
        }
    }
}
