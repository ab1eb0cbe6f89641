public import Primitives

// The figures a load run records: latency percentiles, request counters, timeseries rows and the summary.

/// Latency percentiles of one kind and one measure, in microseconds.
public struct LatencyFigures: Codable, Sendable, Hashable {
    /// The delivery kind, or `all`.
    public var kind: String
    /// `intended` (from the intended send time) or `service` (from the first byte on the wire).
    public var measure: String
    /// How many values were recorded.
    public var count: Int
    /// Microseconds keyed `min`, `mean`, `p50`, `p75`, `p90`, `p95`, `p99`, `p99.9`, `p99.99`, `p99.999`, `max`
    /// (the rare percentiles draw the report's percentile plot).
    public var micros: [String: Int64]

    /// Figures of a histogram.
    public init(kind: String, measure: String, histogram: Histogram) {
        self.kind = kind
        self.measure = measure
        count = Int(histogram.totalCount)
        var micros: [String: Int64] = [:]
        if !histogram.isEmpty {
            micros["min"] = histogram.minValue
            micros["mean"] = Int64(histogram.mean.rounded())
            for (key, percentile) in LatencyFigures.percentiles {
                micros[key] = histogram.value(atPercentile: percentile)
            }
            micros["max"] = histogram.maxValue
        }
        self.micros = micros
    }

    static let percentiles: [(String, Double)] = [
        ("p50", 50), ("p75", 75), ("p90", 90), ("p95", 95), ("p99", 99), ("p99.9", 99.9), ("p99.99", 99.99),
        ("p99.999", 99.999),
    ]
}

extension RequestCounts {
    /// Status class names, preallocated so that counting a result allocates nothing.
    static let classKeys = (0...9).map { "\($0)xx" }

    /// Counts one result; `succeeded` says whether it counts as a success.
    mutating func add(_ result: LoadResult, succeeded: Bool) {
        scheduled += 1
        if result.error == .missed {
            missed += 1
            return
        }
        if result.error == .unsent {
            unsent += 1
            errors[LoadErrorClass.unsent.rawValue, default: 0] += 1
            return
        }
        sent += 1
        bodyBytes += result.bodyBytes
        if result.resent { resent += 1 }
        if let error = result.error {
            errors[error.rawValue, default: 0] += 1
        } else {
            statusClasses[RequestCounts.classKeys[min(max(result.status / 100, 0), 9)], default: 0] += 1
            if succeeded { ok += 1 }
        }
    }
}

/// One second of a run, as written to `timeseries.csv`.
public struct TimeseriesRow: Codable, Sendable, Hashable {
    /// Seconds since the start (the row covers `[second - 1, second)`).
    public var second: Int
    /// The schedule's intended rate at the end of the second (requests per second).
    public var intendedRate: Double
    /// Requests whose intended time came in the second.
    public var scheduled: Int
    /// Requests handed to the transport in the second (one whose timeout then runs out before it goes on a
    /// connection is also counted in `unsent`, in the second it fails).
    public var sent: Int
    /// Results that succeeded in the second (see `RequestCounts.ok`).
    public var ok: Int
    /// Results with a status that is not a success in the second (by default: not 2xx).
    public var non2xx: Int
    /// Results without a response in the second, by error class (missed included).
    public var errors: [String: Int]
    /// Requests that started late in the second.
    public var late: Int
    /// Requests in flight at the end of the second.
    public var inFlight: Int
    /// Latency from the intended time of results in the second, in microseconds.
    public var p50Micros: Int64
    /// 90th percentile, µs.
    public var p90Micros: Int64
    /// 99th percentile, µs.
    public var p99Micros: Int64
    /// Maximum, µs.
    public var maxMicros: Int64
    /// 99th percentile of service time, µs.
    public var serviceP99Micros: Int64
    /// Results of the second answered 4xx that did not succeed (part of ``non2xx``).
    public var failed4xx = 0
    /// Results of the second answered 5xx that did not succeed (part of ``non2xx``).
    public var failed5xx = 0

    /// Results of the second that were sent and did not succeed: non-2xx statuses plus transport
    /// errors (missed sends excluded). Counted from results, like ``ok``, and never as `sent - ok`:
    /// sends and their results fall in different seconds, so that difference goes negative.
    public var failed: Int { non2xx + errors.reduce(0) { $0 + ($1.key == "missed" ? 0 : $1.value) } }

    /// The error classes that have a CSV column, in column order.
    static let errorClasses = ["timeout", "reset", "refused", "dns", "tls", "hung-up", "other", "missed"]

    /// The CSV header, documented in the Load module's `Docs.docc` and ``csvLine``. `unsent`, `http_4xx` and
    /// `http_5xx` come last, so readers of the columns before them by position still read them.
    public static let csvHeader =
        "second,intended_rate,scheduled,sent,ok,non_2xx,timeout,reset,refused,dns,tls,hung_up,other,missed,late,"
        + "in_flight,p50_us,p90_us,p99_us,max_us,service_p99_us,unsent,http_4xx,http_5xx"

    /// The row as one CSV line (no newline), columns as in ``csvHeader``.
    public var csvLine: String {
        let classes = Self.errorClasses.map { String(errors[$0] ?? 0) }
        return
            ([String(second), formatRate(intendedRate), String(scheduled), String(sent), String(ok), String(non2xx)]
            + classes
            + [
                String(late), String(inFlight), String(p50Micros), String(p90Micros), String(p99Micros),
                String(maxMicros), String(serviceP99Micros), String(errors[LoadErrorClass.unsent.rawValue] ?? 0),
                String(failed4xx), String(failed5xx),
            ]).joined(separator: ",")
    }
}

/// The end-of-run summary, written as `summary.json`.
public struct LoadSummary: Codable, Sendable, Hashable {
    /// The schema name and version; bumped on any incompatible change.
    public var schema = LoadSummary.currentSchema
    /// `paystorm.load.summary/1`.
    public static let currentSchema = "paystorm.load.summary/1"
    /// Wall-clock start, ISO 8601.
    public var startedAt: String
    /// Run length in seconds.
    public var durationSeconds: Double
    /// Average intended rate (scheduled ÷ duration).
    public var intendedRate: Double
    /// Achieved rate (sent ÷ duration).
    public var achievedRate: Double
    /// Counters over every kind.
    public var totals: RequestCounts
    /// Counters per kind.
    public var kinds: [String: RequestCounts]
    /// Sends released later than the engine's `lateAfter`.
    public var late: Int
    /// Whether the run was stopped early.
    public var stopped: Bool
    /// Latency figures: `all` and each kind, measures `intended` and `service`.
    public var latency: [LatencyFigures]
    /// Threshold outcomes (empty when none were given).
    public var thresholds: [ThresholdOutcome]
    /// Whether every threshold held.
    public var passed: Bool
    /// Free-form facts about the run (target, schedule, connections, seed …).
    public var settings: [String: String]
}

/// Where the live status goes.
public enum StatusMode: Sendable, Equatable {
    /// One line rewritten in place (`\r`), for a terminal.
    case live
    /// One plain line every `every` seconds, for logs and CI.
    case plain(every: Int)
    /// Nothing.
    case quiet
}
