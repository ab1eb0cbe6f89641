public import Primitives

/// A run's request counters as `summary.json` writes them under `requests`: the run's `RequestCounts` (Primitives) with
/// every failure counted by class in `errors`, and the sends released late.
///
/// The JSON keeps the names it has always had: the scheduled count is written `intended`, and neither
/// `statusClasses` nor `bodyBytes` is written.
public struct ReportedRequests: Codable, Sendable, Hashable {
    /// The counters. `errors` holds every failure by class, a status outside 2xx included (`http4xx`,
    /// `http5xx`, ...); `statusClasses` and `bodyBytes` are not kept.
    public var counts: RequestCounts
    /// Sends released after their intended time.
    public var late: Int

    /// Creates the report's counters from counters whose `errors` already hold every failure.
    public init(_ counts: RequestCounts, late: Int = 0) {
        self.counts = counts
        self.late = late
    }

    /// The report's view of a run's counters: a status outside 2xx is a failure of class `http` + the status
    /// class, except the answers the run's roles count as successes (`acknowledgedOutside2xx`, by status
    /// class: a 409 "already had it"). Sends skipped at the in-flight cap are counted in `missed`, not as errors.
    public init(run totals: RequestCounts, late: Int, acknowledging acknowledgedOutside2xx: [String: Int]) {
        var counts = totals
        for (status, count) in totals.statusClasses where status != "2xx" {
            let failed = count - acknowledgedOutside2xx[status, default: 0]
            if failed > 0 { counts.errors["http" + status] = failed }
        }
        counts.errors["missed"] = nil
        counts.statusClasses = [:]
        counts.bodyBytes = 0
        self.init(counts, late: late)
    }

    /// All failures, whatever their class.
    public var errorCount: Int { counts.errors.values.reduce(0, +) }

    /// The failure classes a reader looks for first, always listed by ``errorsByClass`` (zeros included), in
    /// this order.
    public static let mainErrorClasses = ["timeout", "reset", "refused", "http4xx", "http5xx"]

    /// Every failure by class: the ``mainErrorClasses`` (zeros included), then the others that occurred (`dns`,
    /// `tls`, `hung-up`, `other`, `unsent`, another status class) by name. Their counts add up to
    /// ``errorCount``.
    public var errorsByClass: [(name: String, count: Int)] {
        let others = counts.errors.filter { !Self.mainErrorClasses.contains($0.key) && $0.value > 0 }
        return Self.mainErrorClasses.map { ($0, counts.errors[$0] ?? 0) }
            + others.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
    }

    /// The sum of two runs' counters (two shards').
    public static func + (lhs: Self, rhs: Self) -> Self {
        ReportedRequests(lhs.counts + rhs.counts, late: lhs.late + rhs.late)
    }

    private enum CodingKeys: String, CodingKey {
        case intended, sent, unsent, ok, errors, missed, late, resent
    }

    /// Reads the counters; a report written before `resent` or `unsent` were counted reads them as 0, so
    /// `merge` still reads older shards.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        counts = RequestCounts(
            scheduled: try c.decode(Int.self, forKey: .intended),
            sent: try c.decode(Int.self, forKey: .sent),
            ok: try c.decode(Int.self, forKey: .ok),
            errors: try c.decode([String: Int].self, forKey: .errors),
            missed: try c.decode(Int.self, forKey: .missed),
            unsent: try c.decodeIfPresent(Int.self, forKey: .unsent) ?? 0,
            resent: try c.decodeIfPresent(Int.self, forKey: .resent) ?? 0
        )
        late = try c.decode(Int.self, forKey: .late)
    }

    /// Writes the counters under the report's names.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(counts.scheduled, forKey: .intended)
        try c.encode(counts.sent, forKey: .sent)
        try c.encode(counts.unsent, forKey: .unsent)
        try c.encode(counts.ok, forKey: .ok)
        try c.encode(counts.errors, forKey: .errors)
        try c.encode(counts.missed, forKey: .missed)
        try c.encode(late, forKey: .late)
        try c.encode(counts.resent, forKey: .resent)
    }
}
