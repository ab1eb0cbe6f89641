// Request counters: what the load engine counts, what a shard keeps for a merge, what a merge sums.

/// Request counters of a run or of one kind: written in the load command's `summary.json`, kept per kind in a
/// shard's figures, summed by a merge.
public struct RequestCounts: Codable, Sendable, Hashable {
    /// Requests whose intended time came (sent, unsent and missed).
    public var scheduled = 0
    /// Requests that went on a connection (the target may have read them).
    public var sent = 0
    /// Requests handed to the transport whose timeout ran out before they went on a connection (error class
    /// `unsent`): failures the target never saw, not counted in ``sent``.
    public var unsent = 0
    /// Results that succeeded: a 2xx status unless the caller classified them.
    public var ok = 0
    /// Results by status class: `1xx` … `5xx`.
    public var statusClasses: [String: Int] = [:]
    /// Results without a response, by error class (`timeout`, `reset`, `refused`, `dns`, `tls`, `other`).
    public var errors: [String: Int] = [:]
    /// Sends skipped because the in-flight cap was reached.
    public var missed = 0
    /// Response body bytes received.
    public var bodyBytes = 0
    /// Sent requests the transport sent a second time after a kept-alive connection closed unanswered: the
    /// target may have read each twice.
    public var resent = 0

    /// Creates empty counters.
    public init() {}

    /// Creates counters.
    public init(
        scheduled: Int,
        sent: Int,
        ok: Int,
        statusClasses: [String: Int] = [:],
        errors: [String: Int] = [:],
        missed: Int = 0,
        unsent: Int = 0,
        bodyBytes: Int = 0,
        resent: Int = 0
    ) {
        self.scheduled = scheduled
        self.sent = sent
        self.unsent = unsent
        self.ok = ok
        self.statusClasses = statusClasses
        self.errors = errors
        self.missed = missed
        self.bodyBytes = bodyBytes
        self.resent = resent
    }

    /// Reads counters; ones written before `unsent`, `bodyBytes` or `resent` were counted (or a shard's, which
    /// keeps neither `bodyBytes` nor `resent`) read those as 0.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        scheduled = try c.decode(Int.self, forKey: .scheduled)
        sent = try c.decode(Int.self, forKey: .sent)
        unsent = try c.decodeIfPresent(Int.self, forKey: .unsent) ?? 0
        ok = try c.decode(Int.self, forKey: .ok)
        statusClasses = try c.decode([String: Int].self, forKey: .statusClasses)
        errors = try c.decode([String: Int].self, forKey: .errors)
        missed = try c.decode(Int.self, forKey: .missed)
        bodyBytes = try c.decodeIfPresent(Int.self, forKey: .bodyBytes) ?? 0
        resent = try c.decodeIfPresent(Int.self, forKey: .resent) ?? 0
    }

    /// Requests that failed: sent ones with a transport error or a status that is not a success, and unsent ones
    /// (a target too slow to free a connection in time fails them as surely).
    public var failed: Int { sent - ok + unsent }

    /// `failed / (sent + unsent)` (0 when nothing was handed to the transport).
    public var errorRate: Double { sent + unsent == 0 ? 0 : Double(failed) / Double(sent + unsent) }

    /// Counts `count` sends skipped at the in-flight cap.
    public mutating func addMissed(_ count: Int) {
        scheduled += count
        missed += count
    }

    /// The sum of two sets of counters (two shards', two intervals').
    public static func + (lhs: Self, rhs: Self) -> Self {
        RequestCounts(
            scheduled: lhs.scheduled + rhs.scheduled,
            sent: lhs.sent + rhs.sent,
            ok: lhs.ok + rhs.ok,
            statusClasses: lhs.statusClasses.merging(rhs.statusClasses, uniquingKeysWith: +),
            errors: lhs.errors.merging(rhs.errors, uniquingKeysWith: +),
            missed: lhs.missed + rhs.missed,
            unsent: lhs.unsent + rhs.unsent,
            bodyBytes: lhs.bodyBytes + rhs.bodyBytes,
            resent: lhs.resent + rhs.resent
        )
    }
}
