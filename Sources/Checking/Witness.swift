public import TargetContract

/// One line of evidence: something that happened, in a plain sentence, with the IDs to find it in the history.
public struct WitnessEntry: Sendable, Hashable, Codable {
    /// Seconds since the start of the run.
    public var at: Double
    /// The delivery, if the entry is about one.
    public var delivery: UInt64?
    /// The transaction, if any.
    public var transactionId: String?
    /// The sentence.
    public var sentence: String
}

/// The smallest evidence of one violation.
public struct Witness: Sendable, Hashable, Codable {
    /// The invariant broken.
    public var invariant: Invariant
    /// The account's `appAccountToken`; empty for a violation of the target as a whole (target-recovers).
    public var account: String
    /// When the probe that saw it ran, in seconds since the start of the run.
    public var at: Double
    /// What was wrong, in one sentence.
    public var summary: String
    /// The few history entries that prove it, oldest first: every one a real event (a dispatch, an answer, a
    /// refund), chosen per invariant (both acknowledged copies of a double grant, the refund that revoked too
    /// much, the stale delivery that regressed the state).
    public var entries: [WitnessEntry]
    /// What the probe showed that proves the violation, in one sentence (the entitlement, balance or grant that
    /// should not be there, or the one missing).
    public var proof: String
    /// What the probe returned.
    public var observed: AccountState
    /// The run's seed (`paystorm replay --seed`).
    public var seed: UInt64
    /// How many probes saw this violation: the one at ``at`` and each later one that saw it again (a violation
    /// counts once, however often it is seen).
    public var sightings = 1
    /// When the latest probe that saw it again ran; nil when only one probe saw it.
    public var lastSeenAt: Double?

    /// The sentence that says how often it was seen after ``at``; nil when only once.
    public var seenAgain: String? {
        guard sightings > 1, let lastSeenAt else { return nil }
        let later = sightings - 1
        return "seen again by \(later) later probe\(later == 1 ? "" : "s"), the last at t=\(format(lastSeenAt))s"
    }

    /// The witness as plain text: the rule, the summary, each entry on its own line, and the seed.
    public var prose: String {
        let concerns = account.isEmpty ? "The target" : "Account \(account)"
        var lines = ["\(invariant.rawValue): \(invariant.rule).", "\(concerns): \(summary)"]
        for entry in entries { lines.append("  t=\(format(entry.at))s \(entry.sentence)") }
        lines.append("  " + proof)
        if let seenAgain { lines.append("  " + seenAgain) }
        lines.append("Replay with seed \(seed).")
        return lines.joined(separator: "\n")
    }
}

func format(_ seconds: Double) -> String {
    let millis = Int((seconds * 1000).rounded())
    let fraction = String(abs(millis) % 1000)
    return "\(millis / 1000).\(String(repeating: "0", count: 3 - fraction.count))\(fraction)"
}
