import Chaos
import Load

/// The run's deliveries the target answered "retry later" (a role's `responses.retryLater`: 429 from the device
/// roles by default): it limits its rate or is busy, and said nothing about the purchase.
///
/// They count as errors in the error rate and its thresholds, which is right for capacity (the request was not
/// served), but a soak against a rate-limited staging backend then breaches an error threshold while every
/// invariant holds: the report says how many of its errors were deferrals, and what became of their purchases.
struct DeferredTally {
    /// Deferred answers by request kind (`device`, `webhook`...).
    private(set) var counts: [String: Int] = [:]
    /// The statuses that deferred them.
    private(set) var statuses: Set<Int> = []

    /// Counts `result` when its role read it as "retry later".
    mutating func record(_ result: LoadResult, outcome: DeliveryOutcome) {
        guard case .deferred(let status) = outcome else { return }
        counts[result.kind, default: 0] += 1
        statuses.insert(status)
    }

    /// One line for the report and the console, or nil when nothing was deferred.
    var note: String? {
        let total = counts.values.reduce(0, +)
        guard total > 0 else { return nil }
        let kinds = counts.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: ", ")
        let codes = statuses.sorted().map(String.init).joined(separator: ", ")
        return "\(total) deliver\(total == 1 ? "y was" : "ies were") answered \"retry later\" (HTTP \(codes): "
            + "\(kinds)): the target limits its rate or is busy. They count as errors in the error rate and its "
            + "thresholds, not as refusals: a device keeps such a transaction unfinished and delivers it again at its "
            + "next launch (a purchase whose last device delivery was deferred is held on the device, never lost), "
            + "and the App Store retries a webhook on its schedule"
    }
}
