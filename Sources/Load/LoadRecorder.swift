public import Foundation
public import Primitives

/// Turns results and ticks into metrics and the streamed files: per-kind HDR histograms (latency
/// from the intended time and service time), `timeseries.csv`, `latency.hlog`, the live status
/// line, and `summary.json` at the end.
///
/// Not thread-safe by design: it is the engine's single result consumer (call it from `sink` and
/// `tick`).
public final class LoadRecorder {
    /// Counters over every kind.
    public private(set) var totals = RequestCounts()
    /// Counters per kind.
    public var kinds: [String: RequestCounts] { state.mapValues(\.counts) }
    /// Latency from the intended time, every kind merged.
    public private(set) var latency = Histogram()
    /// Service time, every kind merged.
    public private(set) var service = Histogram()
    /// Latency from the intended time per kind.
    public var latencyByKind: [String: Histogram] { state.mapValues(\.latency) }
    /// Service time per kind.
    public var serviceByKind: [String: Histogram] { state.mapValues(\.service) }
    /// One row per tick.
    public var timeseries: [TimeseriesRow] { rows.rows }
    private var rows = TimeseriesStore()

    /// Everything kept per kind, in one place so that a result costs one dictionary lookup.
    private final class KindState {
        var counts = RequestCounts()
        var latency = Histogram()
        var service = Histogram()
        var intervalLatency = Histogram()
        var intervalService = Histogram()
    }

    private var state: [String: KindState] = [:]
    /// The kind recorded last, and its state: runs of results mostly share a kind, so most need no lookup.
    private var lastKind: (name: String, state: KindState)?
    private var intervalAll = Histogram()
    private var intervalServiceAll = Histogram()
    private var intervalCounts = RequestCounts()
    /// The interval's results answered 4xx and 5xx that did not succeed.
    private var intervalFailed = (http4xx: 0, http5xx: 0)
    private var lastStats = LoadEngineStats()
    private var lastTickSeconds = 0.0
    private let startTime: Date
    private let directory: String?
    private let timeseriesFile: OutputFile?
    private let hlog: HistogramLogWriter?
    private let status: StatusMode
    private let plannedDuration: Duration?
    private let printStatus: (String) -> Void
    private let snapshots: LoadSnapshots?

    /// Creates a recorder.
    /// - Parameters:
    ///   - directory: where `timeseries.csv`, `latency.hlog` and `summary.json` go (nil: no files).
    ///   - startTime: the run's wall-clock start.
    ///   - status: the live status mode.
    ///   - plannedDuration: the schedule's length, for "remaining" in the status line.
    ///   - printStatus: writes status text (default: standard error).
    ///   - snapshots: where to publish a ``LoadSnapshot`` at every tick (nil: nowhere, nothing copied).
    /// - Throws: ``OutputFileError`` when the files cannot be created.
    public init(
        directory: String?,
        startTime: Date = Date(),
        status: StatusMode = .quiet,
        plannedDuration: Duration? = nil,
        printStatus: @escaping (String) -> Void = { FileHandle.standardError.write(Data($0.utf8)) },
        snapshots: LoadSnapshots? = nil
    ) throws {
        self.snapshots = snapshots
        self.directory = directory
        self.startTime = startTime
        self.status = status
        self.plannedDuration = plannedDuration
        self.printStatus = printStatus
        if let directory {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            let csv = try OutputFile(path: directory + "/timeseries.csv")
            csv.write(TimeseriesRow.csvHeader + "\n")
            csv.flush()
            timeseriesFile = csv
            hlog = try HistogramLogWriter(path: directory + "/latency.hlog", startTime: startTime)
        } else {
            timeseriesFile = nil
            hlog = nil
        }
    }

    /// Records one result (constant time apart from a first-seen kind).
    /// - Parameters:
    ///   - result: the result.
    ///   - succeeded: whether it counts as a success (error rates, thresholds, `ok`); nil means "a 2xx
    ///     status". A caller that classifies answers itself (a 409 meaning "already had it") passes its verdict.
    public func record(_ result: LoadResult, succeeded: Bool? = nil) {
        let succeeded = succeeded ?? result.isSuccess
        totals.add(result, succeeded: succeeded)
        let kind = kindState(result.kind)
        kind.counts.add(result, succeeded: succeeded)
        intervalCounts.add(result, succeeded: succeeded)
        if result.error == nil && !succeeded {
            if result.status / 100 == 4 { intervalFailed.http4xx += 1 }
            if result.status / 100 == 5 { intervalFailed.http5xx += 1 }
        }
        guard result.error != .missed else { return }
        let latencyMicros = result.latency.microseconds
        latency.record(latencyMicros)
        intervalAll.record(latencyMicros)
        kind.latency.record(latencyMicros)
        kind.intervalLatency.record(latencyMicros)
        // An unsent request waited for its whole timeout (its latency) but was never served.
        guard result.error != .unsent else { return }
        let serviceMicros = result.serviceTime.microseconds
        service.record(serviceMicros)
        intervalServiceAll.record(serviceMicros)
        kind.service.record(serviceMicros)
        kind.intervalService.record(serviceMicros)
    }

    /// The state of `kind`, made when it is first seen.
    private func kindState(_ kind: String) -> KindState {
        if let lastKind, lastKind.name == kind { return lastKind.state }
        let found: KindState
        if let known = state[kind] {
            found = known
        } else {
            found = KindState()
            state[kind] = found
        }
        lastKind = (kind, found)
        return found
    }

    /// Records `count` requests of one kind missed together, as many missed results would, in constant time
    /// (an overloaded run sheds tens of thousands a second).
    /// - Parameters:
    ///   - kind: the requests' kind.
    ///   - count: how many were missed.
    public func recordMissed(kind: String, count: Int) {
        guard count > 0 else { return }
        totals.addMissed(count)
        kindState(kind).counts.addMissed(count)
        intervalCounts.addMissed(count)
    }

    /// Closes one interval: appends a timeseries row, writes the interval histograms to the log,
    /// and prints the status.
    public func tick(_ stats: LoadEngineStats) {
        let now = stats.elapsed.seconds
        let second = Int(now.rounded())
        // Skip an empty sliver (the engine's final tick right after a regular one).
        guard intervalCounts.scheduled > 0 || stats != lastStats && now - lastTickSeconds > 0.001 else { return }
        var errors = intervalCounts.errors
        errors["missed"] = intervalCounts.missed
        let row = TimeseriesRow(
            second: max(second, (rows.lastSecond ?? 0) + 1),
            intendedRate: stats.intendedRate,
            scheduled: stats.scheduled - lastStats.scheduled,
            sent: stats.sent - lastStats.sent,
            ok: intervalCounts.ok,
            non2xx: intervalCounts.statusClasses.values.reduce(0, +) - intervalCounts.ok,
            errors: errors,
            late: stats.late - lastStats.late,
            inFlight: stats.inFlight,
            p50Micros: intervalAll.value(atPercentile: 50),
            p90Micros: intervalAll.value(atPercentile: 90),
            p99Micros: intervalAll.value(atPercentile: 99),
            maxMicros: intervalAll.maxValue,
            serviceP99Micros: intervalServiceAll.value(atPercentile: 99),
            failed4xx: intervalFailed.http4xx,
            failed5xx: intervalFailed.http5xx
        )
        rows.append(row)
        if let timeseriesFile {
            timeseriesFile.write(row.csvLine + "\n")
            timeseriesFile.flush()
        }
        writeIntervalHistograms(until: now)
        for kind in state.values {
            if !kind.intervalLatency.isEmpty { kind.intervalLatency.reset() }
            if !kind.intervalService.isEmpty { kind.intervalService.reset() }
        }
        intervalAll.reset()
        intervalServiceAll.reset()
        intervalCounts = RequestCounts()
        intervalFailed = (0, 0)
        lastStats = stats
        lastTickSeconds = now
        publishSnapshot(stats)
        printStatusLine(stats, row: row)
    }

    /// Publishes the counters and histograms so far, with `stats`, to the live snapshots (if any).
    private func publishSnapshot(_ stats: LoadEngineStats) {
        snapshots?.publish(
            LoadSnapshot(
                stats: stats,
                totals: totals,
                kinds: kinds,
                latencyByKind: latencyByKind,
                serviceByKind: serviceByKind
            )
        )
    }

    /// Writes each kind's interval histograms (from the last tick until `now`) to `latency.hlog`.
    private func writeIntervalHistograms(until now: Double) {
        guard let hlog else { return }
        for name in state.keys.sorted() {
            let kind = state[name]!
            for (suffix, histogram) in [("latency", kind.intervalLatency), ("service", kind.intervalService)]
            where !histogram.isEmpty {
                hlog.write(
                    HistogramLogEntry(
                        tag: "\(name).\(suffix)",
                        start: lastTickSeconds,
                        length: now - lastTickSeconds,
                        histogram: histogram
                    )
                )
            }
        }
        hlog.flush()
    }

    private func printStatusLine(_ stats: LoadEngineStats, row: TimeseriesRow) {
        let every: Int
        switch status {
        case .quiet: return
        case .live: every = 1
        case .plain(let seconds): every = max(seconds, 1)
        }
        guard row.second % every == 0 else { return }
        let elapsed = stats.elapsed.seconds
        let achieved = elapsed > 0 ? Double(stats.sent) / elapsed : 0
        var line = String(
            format: "%5.0fs  rate %@/s -> %@/s  p50 %@  p99 %@  errors %d  missed %d  late %d  in-flight %d",
            elapsed,
            formatRate(stats.intendedRate.rounded()),
            formatRate(achieved.rounded()),
            formatMicros(latency.value(atPercentile: 50)),
            formatMicros(latency.value(atPercentile: 99)),
            totals.failed,
            stats.missed,
            stats.late,
            stats.inFlight
        )
        if stats.draining {
            // After the schedule only the requests in flight remain, each bounded by the timeout.
            line += "  draining \(stats.inFlight) in flight"
        } else if let plannedDuration {
            let remaining = plannedDuration.seconds - elapsed
            line += remaining >= 0.5 ? String(format: "  remaining %.0fs", remaining) : "  past the schedule"
        }
        if status == .live {
            printStatus("\r\u{1B}[2K" + line)
        } else {
            printStatus(line + "\n")
        }
    }

    /// Ends the run: writes the final files and returns the summary (thresholds evaluated).
    /// - Parameters:
    ///   - stats: the engine's final counters.
    ///   - thresholds: the thresholds to evaluate.
    ///   - settings: facts about the run to keep in the summary.
    ///   - writesSummary: whether to write `summary.json`; false when a caller writes its own report there
    ///     (`paystorm run`), so the file has one author.
    /// - Returns: the summary, also written to `summary.json` when there is a directory and `writesSummary`.
    @discardableResult
    public func finish(
        _ stats: LoadEngineStats,
        thresholds: [Threshold] = [],
        settings: [String: String] = [:],
        writesSummary: Bool = true
    ) -> LoadSummary {
        if status == .live { printStatus("\n") }
        // The last word for a live endpoint: what came after the last tick (the final probe's requests).
        publishSnapshot(stats)
        timeseriesFile?.close()
        hlog?.close()
        var figures = [
            LatencyFigures(kind: "all", measure: "intended", histogram: latency),
            LatencyFigures(kind: "all", measure: "service", histogram: service),
        ]
        for name in state.keys.sorted() {
            figures.append(LatencyFigures(kind: name, measure: "intended", histogram: state[name]!.latency))
            figures.append(LatencyFigures(kind: name, measure: "service", histogram: state[name]!.service))
        }
        let duration = max(stats.elapsed.seconds, 1e-9)
        let metrics = ThresholdMetrics(recorder: self, stats: stats)
        let outcomes = thresholds.map { $0.evaluate(metrics) }
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let summary = LoadSummary(
            startedAt: formatter.string(from: startTime),
            durationSeconds: (duration * 1000).rounded() / 1000,
            intendedRate: (Double(stats.scheduled) / duration * 10).rounded() / 10,
            achievedRate: (Double(totals.sent) / duration * 10).rounded() / 10,
            totals: totals,
            kinds: kinds,
            late: stats.late,
            stopped: stats.stopped,
            latency: figures,
            thresholds: outcomes,
            passed: outcomes.allSatisfy(\.passed),
            settings: settings
        )
        if let directory, writesSummary {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            if let data = try? encoder.encode(summary) {
                _ = FileManager.default.createFile(
                    atPath: directory + "/summary.json",
                    contents: data + Data("\n".utf8)
                )
            }
        }
        return summary
    }
}

/// `1.25ms`, `830µs`, `2.10s`.
func formatMicros(_ micros: Int64) -> String {
    if micros < 1000 { return "\(micros)µs" }
    if micros < 1_000_000 { return String(format: "%.2fms", Double(micros) / 1000) }
    return String(format: "%.2fs", Double(micros) / 1_000_000)
}
