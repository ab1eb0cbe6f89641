public import Foundation

/// Everything one run found, as plain values: the one input of every report writer.
///
/// The orchestrator fills it from the load engine and the checker; the writers
/// never reach back up the pipeline. Its JSON form is `summary.json`, whose
/// shape is versioned by ``schemaVersion``.
public struct RunReport: Codable, Sendable, Hashable {
    /// The version of the `summary.json` schema; bumped on any incompatible change.
    ///
    /// Version 2: `verdict` is the run's verdict (a breached threshold or an interruption also fails it or
    /// leaves it unknown), with `reasons`; the invariants' own verdict moved to `invariantVerdict`, and
    /// `interrupted` says whether the run finished.
    public static let currentSchemaVersion = 2

    /// The schema version this report was written with.
    public var schemaVersion: Int = RunReport.currentSchemaVersion
    /// The PayStorm version that ran.
    public var toolVersion: String
    /// The profile's name (its file name without extension).
    public var profile: String
    /// The seed that replays this run.
    public var seed: UInt64
    /// The namespace of the run's account tokens and transaction IDs (16 hex digits), when it is not the
    /// seed's own: a run against a target that keeps its state draws one, and a replay needs it to find an
    /// account (`paystorm replay --namespace`).
    public var namespace: String?
    /// Wall-clock start of the run.
    public var startedAt: Date
    /// Wall-clock end of the run.
    public var endedAt: Date
    /// What was tested, for example `embedded reference ledger at 127.0.0.1:41234`.
    public var target: String
    /// The run's verdict: `fail` when an invariant was violated or a threshold breached, `unknown` when
    /// nothing failed but the run was interrupted or its invariants could not decide, else `pass`.
    /// It agrees with ``exitCode``: only a `pass` exits 0.
    public var verdict: VerdictOutcome
    /// Why the verdict is not a pass, one line each (empty on a pass).
    public var reasons: [String]
    /// The invariants' own verdict, Jepsen style: thresholds and interruptions do not change it.
    public var invariantVerdict: VerdictOutcome
    /// Whether the run was interrupted (SIGINT/SIGTERM) before it finished; its figures are partial.
    public var interrupted: Bool
    /// The process exit code that goes with the verdict and thresholds.
    public var exitCode: Int32
    /// Request counters over the whole run.
    public var requests: ReportedRequests
    /// Latency distributions, per delivery kind and measure.
    public var latency: [LatencySummary]
    /// Thresholds from the profile and how they fared.
    public var thresholds: [ThresholdResult]
    /// One entry per invariant: passed, failed, unknown or unchecked.
    public var invariants: [InvariantResult]
    /// Every violation, each with its witness (up to the checker's limit of witnesses; ``violationCount``
    /// counts them all).
    public var violations: [Violation]
    /// How many faults of each kind were injected.
    public var faults: [String: Int]
    /// One point a second, for the charts.
    public var timeline: [TimelinePoint]
    /// Notes for the reader, such as invariants that could not be checked and why.
    public var notes: [String]
    /// The shard of a split run this report covers; nil for a whole run and for a merge of shards.
    /// Absent from `summary.json` when nil.
    public var shard: ShardInfo?
    /// When PayStorm itself could not keep up with the schedule (nil when it could): its latency figures from
    /// then on include its own delay, so a latency threshold they breach is unknown, not breached.
    public var harnessLimited: HarnessLimit?

    /// Creates a report.
    public init(
        toolVersion: String,
        profile: String,
        seed: UInt64,
        startedAt: Date,
        endedAt: Date,
        target: String,
        verdict: VerdictOutcome,
        reasons: [String] = [],
        invariantVerdict: VerdictOutcome? = nil,
        interrupted: Bool = false,
        exitCode: Int32,
        requests: ReportedRequests,
        latency: [LatencySummary] = [],
        thresholds: [ThresholdResult] = [],
        invariants: [InvariantResult] = [],
        violations: [Violation] = [],
        faults: [String: Int] = [:],
        timeline: [TimelinePoint] = [],
        notes: [String] = [],
        shard: ShardInfo? = nil,
        harnessLimited: HarnessLimit? = nil
    ) {
        self.toolVersion = toolVersion
        self.profile = profile
        self.seed = seed
        self.startedAt = startedAt
        self.endedAt = endedAt
        self.target = target
        self.verdict = verdict
        self.reasons = reasons
        self.invariantVerdict = invariantVerdict ?? verdict
        self.interrupted = interrupted
        self.exitCode = exitCode
        self.requests = requests
        self.latency = latency
        self.thresholds = thresholds
        self.invariants = invariants
        self.violations = violations
        self.faults = faults
        self.timeline = timeline
        self.notes = notes
        self.shard = shard
        self.harnessLimited = harnessLimited
    }
}

extension RunReport {
    /// The distinct violations of every invariant, witnessed or past the limit of witnesses.
    public var violationCount: Int {
        max(invariants.reduce(0) { $0 + $1.violations }, violations.count)
    }
}

/// A verdict's outcome, Jepsen style (pass, fail or unknown): of the invariants alone, or of the whole run
/// (``RunReport/verdict``).
public enum VerdictOutcome: String, Codable, Sendable, Hashable {
    /// Every checked invariant held (and, for a run, every threshold held and the run finished).
    case pass
    /// At least one invariant was violated (or, for a run, a threshold was breached).
    case fail
    /// Nothing failed, but some check could not decide (or, for a run, it was interrupted).
    case unknown

    /// The run's verdict from its parts, with the reasons it is not a pass.
    ///
    /// A violation or a breached threshold fails the run; an interruption or undecided invariants leave
    /// it unknown; only a finished run whose invariants passed and whose thresholds held passes. The
    /// invariants' own verdict is kept beside it, so a breached threshold never reads as a pass.
    /// - Parameters:
    ///   - invariants: the invariants' verdict and their results.
    ///   - thresholds: the profile's thresholds as evaluated.
    ///   - interrupted: whether the run stopped before it finished.
    ///   - undecided: why the invariants could not decide, when the checker says (for example how many
    ///     final probes failed, and the first error).
    /// - Returns: the verdict and one line per reason (empty on a pass).
    public static func ofRun(
        invariants: (verdict: VerdictOutcome, results: [InvariantResult]),
        thresholds: [ThresholdResult],
        interrupted: Bool,
        undecided: String? = nil
    ) -> (verdict: VerdictOutcome, reasons: [String]) {
        var reasons: [String] = []
        for result in invariants.results where result.status == .failed {
            let count = result.violations == 1 ? "1 violation" : "\(result.violations) violations"
            reasons.append("invariant violated: \(result.name) (\(count))")
        }
        if invariants.verdict == .fail && reasons.isEmpty { reasons.append("an invariant was violated") }
        for threshold in thresholds where threshold.breached {
            reasons.append("threshold breached: \(threshold.expression) (observed \(threshold.observed))")
        }
        let failed = !reasons.isEmpty
        for threshold in thresholds {
            guard let why = threshold.unknown else { continue }
            reasons.append("undecided: threshold \(threshold.expression) (observed \(threshold.observed)): \(why)")
        }
        if interrupted {
            reasons.append("interrupted: the run did not finish, so what it did not reach was not checked")
        }
        if invariants.verdict == .unknown {
            reasons.append("undecided: " + (undecided ?? "too few invariant checks could decide"))
        }
        if failed { return (.fail, reasons) }
        return (reasons.isEmpty ? .pass : .unknown, reasons)
    }
}

/// A latency distribution in microseconds.
public struct LatencySummary: Codable, Sendable, Hashable {
    /// The delivery kind (`webhook`, `device`, `probe`, or `all`).
    public var kind: String
    /// `intended` (from the intended send time), `service` (from the actual send), or `hook` (kind `all`: the
    /// request hook's time per request, from handing it over to reading its answer).
    public var measure: String
    /// How many values were recorded.
    public var count: Int
    /// Microseconds keyed `min`, `mean`, `max` and percentiles from `p50` to `p99.999` (as Load's figures give them).
    public var micros: [String: Int64]

    /// Creates a latency summary.
    public init(kind: String, measure: String, count: Int, micros: [String: Int64]) {
        self.kind = kind
        self.measure = measure
        self.count = count
        self.micros = micros
    }
}

/// One threshold of the profile, evaluated on the run's figures.
public struct ThresholdResult: Codable, Sendable, Hashable {
    /// The expression as written, for example `p99 < 250ms`.
    public var expression: String
    /// The observed value, formatted for people.
    public var observed: String
    /// Whether the threshold held.
    public var passed: Bool
    /// Why a threshold that did not hold is undecided rather than breached (nil when it is not): a latency
    /// threshold over a harness-limited run measured PayStorm's delay as well as the target's.
    public var unknown: String?

    /// Whether the threshold failed and that failure is the target's: it did not hold, and is not unknown.
    public var breached: Bool { !passed && unknown == nil }

    /// What the threshold came to, for people: `held`, `BREACHED` or `unknown`.
    public var status: String { passed ? "held" : breached ? "BREACHED" : "unknown" }

    /// Creates a threshold result.
    public init(expression: String, observed: String, passed: Bool, unknown: String? = nil) {
        self.expression = expression
        self.observed = observed
        self.passed = passed
        self.unknown = passed ? nil : unknown
    }
}

/// One second of the run, for the charts.
public struct TimelinePoint: Codable, Sendable, Hashable {
    /// Seconds since the start.
    public var second: Int
    /// Sends the schedule asked for in this second.
    public var intended: Int
    /// Successful responses in this second.
    public var ok: Int
    /// Failed responses in this second.
    public var errors: Int
    /// p50 latency from the intended time, in microseconds.
    public var p50Micros: Int64
    /// p99 latency from the intended time, in microseconds.
    public var p99Micros: Int64

    /// Creates a timeline point.
    public init(second: Int, intended: Int, ok: Int, errors: Int, p50Micros: Int64, p99Micros: Int64) {
        self.second = second
        self.intended = intended
        self.ok = ok
        self.errors = errors
        self.p50Micros = p50Micros
        self.p99Micros = p99Micros
    }
}
