public import Foundation
public import Load
import Primitives
public import Reporting

/// What `paystorm capacity` asked of one step, written as `step.json` in the step's report folder so that
/// `paystorm capacity --from` can judge the folder again without sending anything.
public struct CapacityStepPlan: Codable, Sendable, Hashable {
    /// The step's place in the search, from 1.
    public var index: Int
    /// The constant rate, actions per second.
    public var rate: Double
    /// The schedule's length, seconds.
    public var seconds: Double
    /// The first seconds not judged.
    public var warmupSeconds: Double
    /// CPU cores PayStorm's process used over the judged window, when measured.
    public var harnessCPU: Double?
    /// How long the search let the target recover before the step, when it did.
    public var recovery: CapacityRecovery?

    /// Creates a plan.
    public init(
        index: Int,
        rate: Double,
        seconds: Double,
        warmupSeconds: Double,
        harnessCPU: Double? = nil,
        recovery: CapacityRecovery? = nil
    ) {
        self.index = index
        self.rate = rate
        self.seconds = seconds
        self.warmupSeconds = warmupSeconds
        self.harnessCPU = harnessCPU
        self.recovery = recovery
    }

    /// The file name in a step's folder.
    public static let fileName = "step.json"
}

/// An error reading a step's report folder: one line naming the file and what is wrong.
public struct CapacityStepError: Error, Sendable, CustomStringConvertible {
    /// The line.
    public var description: String
    /// Whether the file is missing (exit 66) rather than malformed (exit 65).
    public var missing: Bool
}

/// Judges one step from its report folder: `step.json`, `summary.json` (its harness-limited span),
/// `timeseries.csv` (counts per second) and `latency.hlog` (histograms per second), over the judged window
/// from the end of the warm-up to the end of the step's schedule. Results that come in after the schedule
/// ended are left out, so every step is judged over the same kind of window.
public enum CapacityStepReader {
    /// Reads and judges one step folder.
    /// - Parameters:
    ///   - folder: the step's report folder.
    ///   - name: how the capacity report refers to it.
    ///   - slos: the objectives, parsed.
    ///   - invariants: whether a failed invariant breaks the step (`SLOObservation.invariantsExpression`).
    /// - Returns: the step, and the profile name and seed its run recorded.
    /// - Throws: ``CapacityStepError`` naming the file.
    public static func read(
        _ folder: URL,
        name: String,
        slos: [Threshold],
        invariants: Bool = false
    ) throws(CapacityStepError) -> (step: CapacityStep, profile: String, seed: UInt64) {
        let plan: CapacityStepPlan = try decode(folder.appendingPathComponent(CapacityStepPlan.fileName))
        let summary: StepSummary = try decode(folder.appendingPathComponent("summary.json"))
        let rows = try timeseries(folder.appendingPathComponent("timeseries.csv"))
        let log = try histogramLog(folder.appendingPathComponent("latency.hlog").path)
        let (from, to) = (plan.warmupSeconds, plan.seconds)
        let window = rows.filter { $0.second > from && $0.second <= to + 0.001 }
        let length = max(Double(window.count), 1)
        let errors = errorCounts(window)
        let ok = window.reduce(0) { $0 + $1.ok }
        let failed = errors.values.reduce(0, +)
        let (latency, service) = histograms(log, from: from, to: to)
        var counts = RequestCounts()
        counts.scheduled = window.reduce(0) { $0 + $1.scheduled }
        // Judged on the window's results: what came back, successes and failures (a missed send included).
        counts.sent = ok + failed
        counts.ok = ok
        counts.errors = errors
        counts.missed = errors["missed"] ?? 0
        let late = window.reduce(0) { $0 + $1.late }
        let metrics = ThresholdMetrics(
            latency: latency,
            service: service,
            counts: ["all": counts],
            late: late,
            durationSeconds: length
        )
        let limited = summary.harnessLimited.flatMap { $0.fromSeconds < to ? $0.sentence : nil }
        var step = CapacityStep(
            index: plan.index,
            rate: plan.rate,
            seconds: plan.seconds,
            warmupSeconds: plan.warmupSeconds,
            folder: name,
            offered: Double(counts.scheduled) / length,
            achieved: Double(ok) / length,
            latency: percentiles(latency["all"]!),
            service: percentiles(service["all"]!),
            meanServiceMicros: service["all"]!.mean,
            errors: errors,
            late: late,
            missed: counts.missed,
            inFlight: window.map(\.inFlight).max() ?? 0,
            harnessCPU: plan.harnessCPU,
            harnessLimited: limited,
            slos: observations(slos, metrics),
            failedInvariants: summary.failedInvariants,
            recovery: plan.recovery
        )
        if invariants {
            let undecided = summary.invariants?.filter { $0.status != "passed" && $0.status != "failed" }.count ?? 0
            step.slos.append(.invariants(failed: step.failedInvariants ?? [:], undecided: undecided))
        }
        return (step, summary.profile, summary.seed)
    }

    /// The step's `latency.hlog`.
    private static func histogramLog(_ path: String) throws(CapacityStepError) -> HistogramLogReader.Log {
        do {
            return try HistogramLogReader.read(path: path)
        } catch {
            throw CapacityStepError(description: "\(path): \(error)", missing: !exists(path))
        }
    }

    /// The errors of the judged window, by kind.
    private static func errorCounts(_ window: [Row]) -> [String: Int] {
        var errors: [String: Int] = [:]
        for row in window {
            for (name, count) in row.errors where count > 0 { errors[name, default: 0] += count }
        }
        return errors
    }

    /// Each objective evaluated on the judged window's figures.
    private static func observations(_ slos: [Threshold], _ metrics: ThresholdMetrics) -> [SLOObservation] {
        slos.map { slo in
            let outcome = slo.evaluate(metrics)
            return SLOObservation(
                expression: slo.expression,
                observed: outcome.observedValue,
                observedText: outcome.observed,
                bound: slo.bound,
                held: outcome.passed
            )
        }
    }

    /// Latency and service time of the results that came in during the judged window (each interval by its
    /// midpoint), by kind and `all`.
    private static func histograms(
        _ log: HistogramLogReader.Log,
        from: Double,
        to: Double
    ) -> (latency: [String: Histogram], service: [String: Histogram]) {
        var latency: [String: Histogram] = ["all": Histogram()]
        var service: [String: Histogram] = ["all": Histogram()]
        for entry in log.entries {
            let middle = entry.start + entry.length / 2
            guard middle > from && middle <= to, let tag = entry.tag, let dot = tag.lastIndex(of: ".") else { continue }
            let kind = String(tag[..<dot])
            switch tag[tag.index(after: dot)...] {
            case "latency":
                latency["all"]!.add(entry.histogram)
                latency[kind, default: Histogram()].add(entry.histogram)
            case "service":
                service["all"]!.add(entry.histogram)
                service[kind, default: Histogram()].add(entry.histogram)
            default: continue
            }
        }
        return (latency, service)
    }

    private static func percentiles(_ histogram: Histogram) -> StepPercentiles {
        StepPercentiles(
            p50: histogram.value(atPercentile: 50),
            p90: histogram.value(atPercentile: 90),
            p99: histogram.value(atPercentile: 99),
            p999: histogram.value(atPercentile: 99.9)
        )
    }

    /// The part of `summary.json` a step needs.
    private struct StepSummary: Decodable {
        struct Invariant: Decodable {
            var name: String
            var status: String
            var violations: Int?
        }
        var profile: String
        var seed: UInt64
        var harnessLimited: HarnessLimit?
        var invariants: [Invariant]?

        /// The failed invariants with their violations (nil when the summary lists no invariants).
        var failedInvariants: [String: Int]? {
            invariants.map { all in
                Dictionary(
                    all.filter { $0.status == "failed" }.map { ($0.name, $0.violations ?? 0) },
                    uniquingKeysWith: +
                )
            }
        }
    }

    private struct Row {
        var second: Double
        var scheduled: Int
        var ok: Int
        var errors: [String: Int]
        var late: Int
        var inFlight: Int
    }

    private static func exists(_ path: String) -> Bool { FileManager.default.fileExists(atPath: path) }

    private static func decode<T: Decodable>(_ url: URL) throws(CapacityStepError) -> T {
        guard let data = FileManager.default.contents(atPath: url.path) else {
            throw CapacityStepError(description: "cannot read \(url.path)", missing: true)
        }
        do {
            return try JSONDecoder().decode(T.self, from: data)
        } catch {
            throw CapacityStepError(description: "\(url.path): not a capacity step's file: \(error)", missing: false)
        }
    }

    /// The rows of `timeseries.csv`, columns found by name (documented in the Load module).
    private static func timeseries(_ url: URL) throws(CapacityStepError) -> [Row] {
        guard let data = FileManager.default.contents(atPath: url.path) else {
            throw CapacityStepError(description: "cannot read \(url.path)", missing: true)
        }
        let lines = String(decoding: data, as: UTF8.self).split(separator: "\n")
        guard let header = lines.first?.split(separator: ",").map(String.init) else {
            throw CapacityStepError(description: "\(url.path): empty", missing: false)
        }
        let required = ["second", "scheduled", "ok", "non_2xx", "late", "in_flight"]
        let errorColumns = ["non_2xx", "timeout", "reset", "refused", "dns", "tls", "hung_up", "other", "missed"]
        var index: [String: Int] = [:]
        for (i, name) in header.enumerated() { index[name] = i }
        if let absent = required.first(where: { index[$0] == nil }) {
            throw CapacityStepError(description: "\(url.path): no column '\(absent)'", missing: false)
        }
        var rows: [Row] = []
        for (number, line) in lines.dropFirst().enumerated() {
            let fields = line.split(separator: ",", omittingEmptySubsequences: false)
            func value(_ name: String) -> Double? {
                index[name].flatMap { $0 < fields.count ? Double(fields[$0]) : nil }
            }
            guard let second = value("second") else {
                throw CapacityStepError(
                    description: "\(url.path):\(number + 2): not a number in 'second'",
                    missing: false
                )
            }
            var errors: [String: Int] = [:]
            for name in errorColumns { errors[name] = Int(value(name) ?? 0) }
            rows.append(
                Row(
                    second: second,
                    scheduled: Int(value("scheduled") ?? 0),
                    ok: Int(value("ok") ?? 0),
                    errors: errors,
                    late: Int(value("late") ?? 0),
                    inFlight: Int(value("in_flight") ?? 0)
                )
            )
        }
        return rows
    }
}
