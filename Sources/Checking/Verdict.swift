/// One result of checking one invariant on one account.
public struct CheckResult: Sendable, Hashable {
    /// The outcomes.
    public enum Outcome: Sendable, Hashable {
        /// The invariant held.
        case pass
        /// The invariant was broken.
        case fail(Witness)
        /// It could not be decided (near a boundary, an indeterminate delivery, a failed probe).
        case unknown(String)
    }
    /// The invariant.
    public var invariant: Invariant
    /// The account's token.
    public var account: String
    /// The outcome.
    public var outcome: Outcome
}

/// An invariant the run could not check, and why.
public struct Unchecked: Sendable, Hashable, Codable {
    /// The invariant.
    public var invariant: Invariant
    /// Why (no probe, no grants field, no device endpoint...).
    public var reason: String
}

/// Counts of one invariant's results.
public struct Tally: Sendable, Hashable, Codable {
    /// Checks that held.
    public var passed = 0
    /// Distinct violations: a check that failed on what an earlier one already found adds to that violation's
    /// witness, not here.
    public var failed = 0
    /// Checks that could not decide.
    public var unknown = 0
}

/// The verdict of a run.
public struct Verdict: Sendable, Hashable, Codable {
    /// The three outcomes, as in Jepsen.
    public enum Outcome: String, Sendable, Hashable, Codable {
        /// No violation, and enough checks decided.
        case pass
        /// At least one violation.
        case fail
        /// No violation, but too much could not be decided (or nothing could be checked).
        case unknown
    }
    /// The outcome.
    public var outcome: Outcome
    /// Why the outcome is not pass when no invariant failed (nothing acknowledged, too much undecided); nil
    /// otherwise.
    public var reason: String?
    /// The first violations (up to the checker's limit), each with its witness.
    public var violations: [Witness]
    /// All violations found, including those past the limit: each (invariant, account, transaction or product)
    /// once, however many probes saw it.
    public var violationCount: Int
    /// Per invariant, how many checks passed, failed and could not decide.
    public var tallies: [Invariant: Tally]
    /// A few undecided checks, with their reasons.
    public var unknownSamples: [String]
    /// Invariants the run could not check.
    public var unchecked: [Unchecked]
    /// The run's seed.
    public var seed: UInt64
    /// The notifications lost (refused on the App Store's last attempt), by type (`REFUND_REVERSED`,
    /// `RENEWAL_EXTENSION/SUMMARY`), each counted once.
    public var lostNotifications: [String: Int] = [:]
    /// Genuine purchases still held for delivery at the final probe (``Checker/heldAtEnd``), and the genuine
    /// purchases of the accounts finally checked: a merge of shards judges the held share on their sums.
    public var held = 0
    public var purchases = 0
}
