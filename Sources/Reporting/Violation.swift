/// One violation with its witness: the smallest evidence, in sentences.
public struct Violation: Codable, Sendable, Hashable {
    /// The invariant it breaks.
    public var invariant: String
    /// The account (`appAccountToken`) it concerns.
    public var account: String
    /// One line saying what went wrong.
    public var summary: String
    /// The witness, in plain sentences, oldest first.
    public var witness: [String]
    /// Seconds from the start of the run to when the violation was first seen.
    public var detectedAfterSeconds: Double?
    /// The command that replays the run for this account.
    public var replay: String
    /// How many probes saw it, when more than one did (the violation still counts once); absent otherwise.
    public var sightings: Int?

    /// Whom it concerns, for people: `account <token>`, or `the target` for a violation of the target as a whole
    /// (an empty ``account``, as target-recovers has).
    public var concerns: String { account.isEmpty ? "the target" : "account \(account)" }

    /// Creates a violation.
    public init(
        invariant: String,
        account: String,
        summary: String,
        witness: [String],
        detectedAfterSeconds: Double? = nil,
        replay: String,
        sightings: Int? = nil
    ) {
        self.invariant = invariant
        self.account = account
        self.summary = summary
        self.witness = witness
        self.detectedAfterSeconds = detectedAfterSeconds
        self.replay = replay
        self.sightings = sightings
    }
}
