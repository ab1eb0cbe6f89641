internal import Foundation
public import Primitives

/// A pass/fail rule on the run's figures, parsed from text such as `p99 < 250ms`,
/// `webhook.service.p99.9 <= 1s`, `errorRate < 0.1%`, `missed == 0` or `rate >= 450`.
///
/// Grammar: `[KIND.][service.]METRIC OP VALUE` where METRIC is `pN` (any percentile, e.g. `p99.9`),
/// `min`, `mean`, `max` (durations: `us`/`µs`, `ms`, `s`, `m`), `errorRate` (`0.1%` or `0.001`),
/// `errors`, `missed`, `late`, `requests` (counts) or `rate` (achieved requests per second);
/// OP is one of `<`, `<=`, `>`, `>=`, `==`, `!=`. Latency metrics use the time from the intended
/// send unless `service.` is given.
public struct Threshold: Sendable, Hashable {
    /// What a threshold measures.
    public enum Metric: Sendable, Hashable {
        /// A latency percentile (0...100).
        case percentile(Double)
        /// Smallest, mean or largest latency.
        case min, mean, max
        /// Failed ÷ sent.
        case errorRate
        /// Failed sends (transport errors and non-2xx statuses).
        case errors
        /// Sends skipped at the in-flight cap.
        case missed
        /// Sends released late.
        case late
        /// Requests sent.
        case requests
        /// Achieved requests per second.
        case rate

        /// The metric as written in a threshold.
        var name: String {
            switch self {
            case .percentile(let p): return "p" + (p == p.rounded() ? String(Int(p)) : String(p))
            case .min: return "min"
            case .mean: return "mean"
            case .max: return "max"
            case .errorRate: return "errorRate"
            case .errors: return "errors"
            case .missed: return "missed"
            case .late: return "late"
            case .requests: return "requests"
            case .rate: return "rate"
            }
        }

        /// Whether it measures latency (a percentile, min, mean or max).
        public var isLatency: Bool {
            switch self {
            case .percentile, .min, .mean, .max: return true
            default: return false
            }
        }
    }

    /// A comparison operator.
    public enum Comparison: String, Sendable, Hashable, CaseIterable {
        case less = "<"
        case lessOrEqual = "<="
        case greater = ">"
        case greaterOrEqual = ">="
        case equal = "=="
        case notEqual = "!="

        func holds(_ lhs: Double, _ rhs: Double) -> Bool {
            switch self {
            case .less: return lhs < rhs
            case .lessOrEqual: return lhs <= rhs
            case .greater: return lhs > rhs
            case .greaterOrEqual: return lhs >= rhs
            case .equal: return lhs == rhs
            case .notEqual: return lhs != rhs
            }
        }
    }

    /// The text as given.
    public var expression: String
    /// The kind it applies to (nil: every kind).
    public var kind: String?
    /// Whether a latency metric uses service time.
    public var service: Bool
    /// The metric.
    public var metric: Metric
    /// The operator.
    public var comparison: Comparison
    /// The bound, in microseconds for latency metrics and as a fraction for `errorRate`.
    public var bound: Double

    /// Parses one threshold.
    /// - Parameters:
    ///   - text: the threshold as written.
    ///   - kinds: the kinds the command records (`all`, every kind merged, is always known); nil accepts any
    ///     kind. Give it whenever the kinds are known: a threshold on a kind that never records anything is
    ///     evaluated on empty figures and always holds, so a misspelled kind would hide a failure.
    /// - Throws: ``LoadConfigurationError`` naming what is wrong.
    public static func parse(_ text: String, kinds: [String]? = nil) throws(LoadConfigurationError) -> Threshold {
        let trimmed = text.trimmingWhitespace()
        let operators = ["<=", ">=", "==", "!=", "<", ">"]
        guard let (op, range) = operators.lazy.compactMap({ op in trimmed.range(of: op).map { (op, $0) } }).first
        else { throw LoadConfigurationError("threshold '\(text)' has no operator (<, <=, >, >=, ==, !=)") }
        var name = trimmed[..<range.lowerBound].trimmingWhitespace()
        let valueText = trimmed[range.upperBound...].trimmingWhitespace()
        let operatorCharacters: Set<Character> = ["<", ">", "=", "!"]
        let before = String(name.reversed().prefix { operatorCharacters.contains($0) }.reversed())
        let after = String(valueText.prefix { operatorCharacters.contains($0) })
        if !before.isEmpty || !after.isEmpty {
            let written = before + op + after
            throw LoadConfigurationError("threshold '\(text)': '\(written)' is not an operator (<, <=, >, >=, ==, !=)")
        }
        var kind: String?
        var service = false
        if name.hasPrefix("service.") {
            service = true
            name.removeFirst(8)
        } else if parseMetric(name) == nil, let dot = name.firstIndex(of: ".") {
            kind = String(name[..<dot])
            name = String(name[name.index(after: dot)...])
            if name.hasPrefix("service.") {
                service = true
                name.removeFirst(8)
            }
        }
        guard let metric = parseMetric(name) else {
            throw LoadConfigurationError(
                "threshold '\(text)': unknown metric '\(name)' (pN, min, mean, max, errorRate, errors, missed, late, requests, rate)"
            )
        }
        if let kind, let kinds, kind != "all", !kinds.contains(kind) {
            let known = kinds.isEmpty ? "none" : kinds.joined(separator: ", ")
            throw LoadConfigurationError(
                "threshold '\(text)': unknown kind '\(kind)' (known kinds: \(known); or no kind for all traffic)"
            )
        }
        if kind != nil && kind != "all" && metric == .late {
            // Late sends are counted for the whole run only; per kind the figure would always be 0.
            throw LoadConfigurationError("threshold '\(text)': 'late' is counted for all traffic only; drop the kind")
        }
        if service && !metric.isLatency {
            throw LoadConfigurationError("threshold '\(text)': 'service.' applies only to latency metrics")
        }
        let bound = try parseBound(valueText, of: metric, in: text)
        if let vacuous = vacuity(metric: metric, comparison: Comparison(rawValue: op)!, bound: bound) {
            throw LoadConfigurationError("threshold '\(text)': \(vacuous)")
        }
        return Threshold(
            expression: trimmed,
            kind: kind,
            service: service,
            metric: metric,
            comparison: Comparison(rawValue: op)!,
            bound: bound
        )
    }

    /// The bound of a threshold on `metric`, in the metric's unit (microseconds for a latency, a fraction for
    /// the error rate); `text` is the whole threshold, for the error.
    private static func parseBound(
        _ valueText: String,
        of metric: Metric,
        in text: String
    )
        throws(LoadConfigurationError) -> Double
    {
        if metric.isLatency {
            guard valueText.contains(where: { $0.isLetter }) else {
                throw LoadConfigurationError("threshold '\(text)': '\(valueText)' needs a unit (us, ms, s, m)")
            }
            return Double(try parseDuration(valueText).microseconds)
        }
        if metric == .errorRate {
            if valueText.hasSuffix("%"), let percent = Double(valueText.dropLast().trimmingWhitespace()) {
                return percent / 100
            }
            guard let fraction = Double(valueText) else {
                throw LoadConfigurationError("threshold '\(text)': '\(valueText)' is not a rate (0.1% or 0.001)")
            }
            return fraction
        }
        guard let number = Double(valueText), number.isFinite else {
            throw LoadConfigurationError("threshold '\(text)': '\(valueText)' is not a number")
        }
        return number
    }

    /// Why a threshold could never fail, or never hold, whatever the run does (its bound outside what the
    /// metric can be, or on its edge), or nil when it can do both.
    static func vacuity(metric: Metric, comparison: Comparison, bound: Double) -> String? {
        let isCount = [.errors, .missed, .late, .requests].contains(metric)
        let highest = metric == .errorRate ? 1.0 : .infinity
        let range = metric == .errorRate ? "from 0% to 100%" : isCount ? "a whole number from 0" : "from 0"
        guard bound.isFinite, bound >= 0, bound <= highest else {
            let shown = metric == .errorRate ? "\(bound * 100)%" : "\(bound)"
            return "\(metric.name) is \(range), so a bound of \(shown) decides nothing"
        }
        let always: Bool?
        switch comparison {
        case .greaterOrEqual where bound == 0, .lessOrEqual where bound == highest: always = true
        case .less where bound == 0, .greater where bound == highest: always = false
        case .equal where isCount && bound != bound.rounded(): always = false
        case .notEqual where isCount && bound != bound.rounded(): always = true
        default: always = nil
        }
        guard let always else { return nil }
        return "it \(always ? "always holds" : "never holds"): \(metric.name) is \(range)"
    }

    private static func parseMetric(_ name: String) -> Metric? {
        switch name {
        case "min": return .min
        case "mean": return .mean
        case "max": return .max
        case "errorRate", "error_rate": return .errorRate
        case "errors": return .errors
        case "missed": return .missed
        case "late": return .late
        case "requests": return .requests
        case "rate": return .rate
        default:
            guard name.hasPrefix("p"), let value = Double(name.dropFirst()), (0...100).contains(value) else {
                return nil
            }
            return .percentile(value)
        }
    }

    /// Evaluates the threshold on a run's figures (missing kinds count as empty).
    public func evaluate(_ metrics: ThresholdMetrics) -> ThresholdOutcome {
        let key = kind ?? "all"
        let counts = metrics.counts[key] ?? RequestCounts()
        let histogram = (service ? metrics.service[key] : metrics.latency[key]) ?? Histogram()
        let observed: Double
        switch metric {
        case .percentile(let p): observed = Double(histogram.value(atPercentile: p))
        case .min: observed = histogram.isEmpty ? 0 : Double(histogram.minValue)
        case .mean: observed = histogram.mean
        case .max: observed = Double(histogram.maxValue)
        case .errorRate: observed = counts.errorRate
        case .errors: observed = Double(counts.failed)
        case .missed: observed = Double(counts.missed)
        case .late: observed = Double(kind == nil ? metrics.late : 0)
        case .requests: observed = Double(counts.sent)
        case .rate: observed = metrics.durationSeconds > 0 ? Double(counts.sent) / metrics.durationSeconds : 0
        }
        let text: String
        switch metric {
        case .percentile, .min, .mean, .max: text = formatMicros(Int64(observed.rounded()))
        case .errorRate: text = String(format: "%.3f%%", observed * 100)
        case .rate: text = String(format: "%.1f/s", observed)
        default: text = String(Int(observed))
        }
        return ThresholdOutcome(
            expression: expression,
            observed: text,
            observedValue: observed,
            passed: comparison.holds(observed, bound)
        )
    }
}

/// The outcome of one threshold.
public struct ThresholdOutcome: Codable, Sendable, Hashable {
    /// The expression as written.
    public var expression: String
    /// The observed value, formatted for people.
    public var observed: String
    /// The observed value (µs for latency, a fraction for errorRate).
    public var observedValue: Double
    /// Whether the threshold held.
    public var passed: Bool
}

/// The figures thresholds are evaluated on: histograms and counters keyed by kind, with `all`
/// for every kind merged (so merged shards can be evaluated the same way).
public struct ThresholdMetrics: Sendable {
    /// Latency from the intended time, µs, by kind and `all`.
    public var latency: [String: Histogram]
    /// Service time, µs, by kind and `all`.
    public var service: [String: Histogram]
    /// Counters by kind and `all`.
    public var counts: [String: RequestCounts]
    /// Late sends over the run.
    public var late: Int
    /// The run's length in seconds.
    public var durationSeconds: Double

    /// Creates figures.
    public init(
        latency: [String: Histogram],
        service: [String: Histogram],
        counts: [String: RequestCounts],
        late: Int,
        durationSeconds: Double
    ) {
        self.latency = latency
        self.service = service
        self.counts = counts
        self.late = late
        self.durationSeconds = durationSeconds
    }

    init(recorder: LoadRecorder, stats: LoadEngineStats) {
        var latency = recorder.latencyByKind
        latency["all"] = recorder.latency
        var service = recorder.serviceByKind
        service["all"] = recorder.service
        var counts = recorder.kinds
        counts["all"] = recorder.totals
        self.init(
            latency: latency,
            service: service,
            counts: counts,
            late: stats.late,
            durationSeconds: stats.elapsed.seconds
        )
    }
}
