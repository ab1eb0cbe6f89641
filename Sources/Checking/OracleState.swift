/// The oracle's whole state, behind the checker's lock: every account's books, the tallies, witnesses and
/// violations found so far.
struct OracleState: Sendable {
    var books = AccountBooks()
    var tallies: [Invariant: Tally] = [:]
    var witnesses: [Witness] = []
    /// Distinct violations found (see `ViolationKey`), and for each the index of its witness in `witnesses`
    /// (nil past `Checker.Options.maxWitnesses`).
    var violationCount = 0
    var violations: [ViolationKey: Int?] = [:]
    /// Genuine notifications (by event) refused so far while the App Store still retries them, and those lost
    /// (refused on its last attempt), by type (see `Checker+LostNotifications.swift`).
    var refusedNotifications: [UInt64: RefusedAttempts] = [:]
    var lostNotifications: [String: Int] = [:]
    /// When the target last answered, and what found it unreachable since (target-recovers' witness).
    var reach = Reach()
    var unknownSamples: [String] = []
    var interesting: Set<String> = []
    /// Genuine deliveries (purchases, refunds, reversals, renewals) whose outcome came in, and how many of them
    /// the target acknowledged or rejected: a run that acknowledged none cannot pass.
    var genuineDispatched = 0
    var genuineAcknowledged = 0
    var genuineRejected = 0
    /// Final probes answered or failed, the failures, and the first failure's reason (the verdict quotes it).
    var finalProbes = 0
    var finalProbeFailures = 0
    var firstFinalProbeFailure: String?
    /// Purchases held for delivery at each account's final check (``Checker/heldAtEnd``), where there are any,
    /// and the genuine transactions those accounts' books held then (kept or folded).
    var heldAtEnd: [String: Int] = [:]
    var bookedAtEnd: [String: Int] = [:]
    var phrases: [String] = []
    var phraseIndex: [String: UInt32] = [:]
    /// Phrases by what they depend on (see `PhraseKey`).
    var phraseCache: [PhraseKey: CachedPhrase] = [:]

    /// Interns a phrase; past `LogEntry.phraseLimit` (100,000) distinct phrases, new ones share a placeholder.
    mutating func intern(_ phrase: String) -> UInt32 {
        if let index = phraseIndex[phrase] { return index }
        guard phrases.count < LogEntry.phraseLimit else { return UInt32.max }
        let index = UInt32(phrases.count)
        phrases.append(phrase)
        phraseIndex[phrase] = index
        return index
    }

    mutating func mark(_ account: String) {
        if interesting.count < 10_000 { interesting.insert(account) }
    }

    mutating func sampleUnknown(_ text: String) {
        if unknownSamples.count < 100 { unknownSamples.append(text) }
    }
}
