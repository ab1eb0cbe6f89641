/// The safety probes due during the run: at most one waiting per account, none after the run's traffic ends (its
/// schedule and the retries and redeliveries that follow it; the final probe reads every account then), and none
/// before a time the target's `Retry-After` asked to be left alone until.
struct SafetyProbeSchedule {
    /// The end of the run's traffic, in seconds.
    let endOfSchedule: Double
    private var due = TimeHeap<String>()
    private var waiting: Set<String> = []
    /// Until when the target asked not to be probed, in seconds.
    private(set) var heldUntil = 0.0
    /// Safety probes the target answered 429, for the report's note.
    private(set) var rateLimited = RateLimitedSafetyProbes()

    init(endOfSchedule: Double) { self.endOfSchedule = endOfSchedule }

    /// When the next probe is due; nil when none is.
    var firstTime: Double? { due.firstTime }

    /// Schedules a probe of `account` at `time`, or when a hold ends if that is later.
    /// - Returns: false when one is waiting already or it would come after the schedule.
    mutating func schedule(_ account: String, at time: Double) -> Bool {
        let time = max(time, heldUntil)
        guard time <= endOfSchedule, !waiting.contains(account) else { return false }
        waiting.insert(account)
        due.push(account, at: time)
        return true
    }

    /// The account whose probe is due first, taken off the schedule.
    mutating func pop() -> String? {
        guard let account = due.pop() else { return nil }
        waiting.remove(account)
        return account
    }

    /// Counts a probe of `account` the target answered 429 at `now`. With a `Retry-After` every probe waits that
    /// long, and this account is probed again then: a client that limits itself the way the target asks.
    mutating func rateLimited(_ account: String, retryAfter: Int?, at now: Double) {
        var again = false
        if let retryAfter {
            heldUntil = max(heldUntil, now + Double(max(1, retryAfter)))
            var held: [String] = []
            while let first = due.firstTime, first < heldUntil, let account = pop() { held.append(account) }
            for account in held { _ = schedule(account, at: heldUntil) }
            again = schedule(account, at: heldUntil)
        }
        rateLimited.record(sentAgain: again)
    }
}

/// Safety probes during the run that the target answered 429: it limits its API's rate. They read nothing, so
/// they decide nothing (counted as undecided checks, a rate limit alone made runs end unknown).
struct RateLimitedSafetyProbes {
    /// Safety probes answered 429.
    private(set) var count = 0
    /// Those sent again when their `Retry-After` asked (while the schedule still ran).
    private(set) var sentAgain = 0

    mutating func record(sentAgain again: Bool) {
        count += 1
        if again { sentAgain += 1 }
    }

    /// One line for the report's notes, or nil when no safety probe was limited.
    var note: String? {
        guard count > 0 else { return nil }
        let what =
            count == 1
            ? "1 safety probe during the run was answered 429 (the target limits its rate): it read nothing, so it "
                + "decided nothing and counts as no check"
            : "\(count) safety probes during the run were answered 429 (the target limits its rate): they read "
                + "nothing, so they decided nothing and count as no check"
        let again =
            switch sentAgain {
            case 0: ""
            case 1 where count == 1: "; it was sent again when the target's Retry-After asked"
            default: "; \(sentAgain) of them were sent again when the target's Retry-After asked"
            }
        return what + again
            + "; a longer target.probe.intervalSeconds probes within the limit (0: only the final probe, which backs off)"
    }
}

/// A probe that did not answer usably.
struct ProbeFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
