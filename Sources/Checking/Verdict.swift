public import TargetContract

/// The rules a target must never break.
public enum Invariant: String, Sendable, Hashable, Codable, CaseIterable, CodingKeyRepresentable {
    /// Each transaction is granted at most once; balances never exceed the distinct purchases sent.
    case noDoubleGrant = "no-double-grant"
    /// Nothing is granted for pending, declined, forged or unverified input.
    case noUnlockWithoutVerifiedPurchase = "no-unlock-without-verified-purchase"
    /// Refunded or revoked transactions grant nothing at settle, and a refund revokes nothing else.
    case revocationHonored = "revocation-honored"
    /// Each refund is applied once: no transaction is refunded more often than the App Store refunded it (when
    /// the probe lists refunds).
    case noDoubleRefund = "no-double-refund"
    /// Every verified purchase the target acknowledged is granted at settle, and no genuine purchase has every
    /// attempt rejected.
    case noLostPurchase = "no-lost-purchase"
    /// Every genuine notification, of any type, is acknowledged before the App Store gives up on it.
    case noLostNotification = "no-lost-notification"
    /// Older data never overrides newer (expiry never moves back; a refund is not undone by a replay).
    case noStaleRegression = "no-stale-regression"
    /// Active or in grace: entitled; expired or revoked: not.
    case subscriptionState = "subscription-state"
    /// Every planned restart happens and the target accepts connections again; a target unreachable for the
    /// rest of the run fails.
    case targetRecovers = "target-recovers"

    /// The invariants a probe of an account checks (a final probe all of them, a safety probe during the run
    /// some): the others are judged from the deliveries' answers and the restarts.
    public static let probed: [Invariant] = allCases.filter { $0 != .targetRecovers && $0 != .noLostNotification }

    /// The rule in one sentence.
    public var rule: String {
        switch self {
        case .noDoubleGrant: "each transaction is granted at most once"
        case .noUnlockWithoutVerifiedPurchase: "nothing unlocks without a verified purchase"
        case .revocationHonored: "refunded or revoked transactions grant nothing at settle, and nothing else is revoked"
        case .noDoubleRefund: "each refund is applied once"
        case .noLostPurchase:
            "every acknowledged verified purchase is granted at settle, and no genuine purchase is rejected for good"
        case .noLostNotification: "every genuine notification is acknowledged before the App Store gives up on it"
        case .noStaleRegression: "older data never overrides newer"
        case .subscriptionState: "active or grace means entitled; expired or revoked means not"
        case .targetRecovers:
            "every planned restart happens and the target accepts connections again, and it answers at the end"
        }
    }
}

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
