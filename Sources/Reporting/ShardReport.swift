public import Primitives

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
    /// What the shard ran (profile digest, rate scale, schedule), so that a merge refuses shards of different
    /// runs; nil in a shard written before it was recorded, which a merge refuses.
    public var run: ShardRun?

    /// Creates a shard record.
    public init(index: Int, count: Int, profilePath: String, figures: ShardFigures? = nil, run: ShardRun? = nil) {
        self.index = index
        self.count = count
        self.profilePath = profilePath
        self.figures = figures
        self.run = run
    }
}

/// The mergeable figures of one shard: counters by kind, whole HDR histograms, and invariant check
/// tallies, which sum across shards without loss.
public struct ShardFigures: Codable, Sendable, Hashable {
    /// Request counters by kind (`webhook`, `device`, `probe`...) and `all`.
    public var counts: [String: RequestCounts]
    /// HDR histograms (µs) keyed `<kind>.intended` and `<kind>.service`, with `all` as a kind, and `all.hook`
    /// (the request hook's time) when the run had one, each in the HdrHistogram compressed V2 encoding, base64.
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
        counts: [String: RequestCounts],
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

extension ShardFigures {
    private enum CodingKeys: String, CodingKey {
        case counts, histograms, late, durationSeconds, tallies, unchecked, heldPurchases, genuinePurchases
    }

    /// Reads shard figures (counters without `bodyBytes` and `resent`, which a shard does not keep).
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        counts = try c.decode([String: RequestCounts].self, forKey: .counts)
        histograms = try c.decode([String: String].self, forKey: .histograms)
        late = try c.decode(Int.self, forKey: .late)
        durationSeconds = try c.decode(Double.self, forKey: .durationSeconds)
        tallies = try c.decode([String: ShardTally].self, forKey: .tallies)
        unchecked = try c.decode([String: String].self, forKey: .unchecked)
        heldPurchases = try c.decodeIfPresent(Int.self, forKey: .heldPurchases)
        genuinePurchases = try c.decodeIfPresent(Int.self, forKey: .genuinePurchases)
    }

    /// Writes shard figures; each kind's counters are those a merge sums.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(counts.mapValues(ShardCountsEncoding.init), forKey: .counts)
        try c.encode(histograms, forKey: .histograms)
        try c.encode(late, forKey: .late)
        try c.encode(durationSeconds, forKey: .durationSeconds)
        try c.encode(tallies, forKey: .tallies)
        try c.encode(unchecked, forKey: .unchecked)
        try c.encodeIfPresent(heldPurchases, forKey: .heldPurchases)
        try c.encodeIfPresent(genuinePurchases, forKey: .genuinePurchases)
    }
}

/// One kind's counters as a shard writes them: every counter but `bodyBytes` and `resent`.
private struct ShardCountsEncoding: Encodable {
    let counts: RequestCounts

    private enum CodingKeys: String, CodingKey {
        case scheduled, sent, unsent, ok, statusClasses, errors, missed
    }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(counts.scheduled, forKey: .scheduled)
        try c.encode(counts.sent, forKey: .sent)
        try c.encode(counts.unsent, forKey: .unsent)
        try c.encode(counts.ok, forKey: .ok)
        try c.encode(counts.statusClasses, forKey: .statusClasses)
        try c.encode(counts.errors, forKey: .errors)
        try c.encode(counts.missed, forKey: .missed)
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
