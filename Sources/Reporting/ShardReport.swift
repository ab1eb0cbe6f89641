/// What one shard of a split run (`paystorm run --shard INDEX/COUNT`) records in `summary.json` so that
/// `paystorm merge` can combine the shards exactly: the figures percentiles cannot be summed from.
public struct ShardInfo: Codable, Sendable, Hashable {
    /// The shard's 0-based index.
    public var index: Int
    /// How many shards the run was split into.
    public var count: Int
    /// The profile file the shard ran, as given on its command line (for the replay line of a merge).
    public var profilePath: String
    /// The exact figures of the shard, for a merge; nil in a merged report.
    public var figures: ShardFigures?

    /// Creates a shard record.
    public init(index: Int, count: Int, profilePath: String, figures: ShardFigures? = nil) {
        self.index = index
        self.count = count
        self.profilePath = profilePath
        self.figures = figures
    }
}

/// The mergeable figures of one shard: counters by kind, whole HDR histograms, and invariant check
/// tallies, which sum across shards without loss.
public struct ShardFigures: Codable, Sendable, Hashable {
    /// Request counters by kind (`webhook`, `device`, `probe`...) and `all`.
    public var counts: [String: ShardCounts]
    /// HDR histograms (µs) keyed `<kind>.intended` and `<kind>.service`, with `all` as a kind, each in
    /// the HdrHistogram compressed V2 encoding, base64.
    public var histograms: [String: String]
    /// Sends released after their intended time.
    public var late: Int
    /// How long the shard's traffic ran, in seconds.
    public var durationSeconds: Double
    /// Checks per invariant: passed, failed and undecided.
    public var tallies: [String: ShardTally]
    /// Why an invariant could not be checked (a reason starting `partly` when the rest was), by invariant.
    public var unchecked: [String: String]
    /// Genuine purchases held for delivery at the final probe, and the genuine purchases of the accounts it
    /// checked, so that a merge judges the held share on the sums; nil in a shard written before they were kept.
    public var heldPurchases: Int?
    public var genuinePurchases: Int?

    /// Creates shard figures.
    public init(
        counts: [String: ShardCounts],
        histograms: [String: String],
        late: Int,
        durationSeconds: Double,
        tallies: [String: ShardTally],
        unchecked: [String: String],
        heldPurchases: Int? = nil,
        genuinePurchases: Int? = nil
    ) {
        self.counts = counts
        self.histograms = histograms
        self.late = late
        self.durationSeconds = durationSeconds
        self.tallies = tallies
        self.unchecked = unchecked
        self.heldPurchases = heldPurchases
        self.genuinePurchases = genuinePurchases
    }
}

/// Request counters of one kind, as the load recorder keeps them.
public struct ShardCounts: Codable, Sendable, Hashable {
    /// Sends the schedule asked for.
    public var scheduled: Int
    /// Requests that went on a connection.
    public var sent: Int
    /// Requests whose timeout ran out before they went on a connection (0 in a shard written before they were
    /// counted apart).
    public var unsent: Int
    /// Successful answers.
    public var ok: Int
    /// Answers by status class (`2xx`, `4xx`...).
    public var statusClasses: [String: Int]
    /// Failures by class.
    public var errors: [String: Int]
    /// Sends skipped at the in-flight cap.
    public var missed: Int

    /// Creates counters.
    public init(
        scheduled: Int,
        sent: Int,
        ok: Int,
        statusClasses: [String: Int],
        errors: [String: Int],
        missed: Int,
        unsent: Int = 0
    ) {
        self.scheduled = scheduled
        self.sent = sent
        self.unsent = unsent
        self.ok = ok
        self.statusClasses = statusClasses
        self.errors = errors
        self.missed = missed
    }

    /// The sum of two shards' counters.
    public static func + (lhs: Self, rhs: Self) -> Self {
        ShardCounts(
            scheduled: lhs.scheduled + rhs.scheduled,
            sent: lhs.sent + rhs.sent,
            ok: lhs.ok + rhs.ok,
            statusClasses: lhs.statusClasses.merging(rhs.statusClasses, uniquingKeysWith: +),
            errors: lhs.errors.merging(rhs.errors, uniquingKeysWith: +),
            missed: lhs.missed + rhs.missed,
            unsent: lhs.unsent + rhs.unsent
        )
    }

    /// Reads counters; a shard written before `unsent` was counted reads as 0 unsent.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        scheduled = try c.decode(Int.self, forKey: .scheduled)
        sent = try c.decode(Int.self, forKey: .sent)
        unsent = try c.decodeIfPresent(Int.self, forKey: .unsent) ?? 0
        ok = try c.decode(Int.self, forKey: .ok)
        statusClasses = try c.decode([String: Int].self, forKey: .statusClasses)
        errors = try c.decode([String: Int].self, forKey: .errors)
        missed = try c.decode(Int.self, forKey: .missed)
    }
}

/// How many checks of one invariant held, failed or could not decide.
public struct ShardTally: Codable, Sendable, Hashable {
    /// Checks that held.
    public var passed: Int
    /// Checks that failed.
    public var failed: Int
    /// Checks that could not decide.
    public var unknown: Int

    /// Creates a tally.
    public init(passed: Int, failed: Int, unknown: Int) {
        self.passed = passed
        self.failed = failed
        self.unknown = unknown
    }
}
