import Checking
import Foundation
import Load
public import PayStorm
import Primitives
import Reporting
public import RunControl

/// `paystorm merge`: the shards of a split run (`paystorm run --shard I/N`) combined into one report, as
/// if one process had run them.
///
/// Counters are summed, HDR histograms added (so percentiles are exact, not averaged), invariant checks
/// summed and violations united; the profile's thresholds are judged on the merged figures, and the
/// verdict and exit code follow the rules of a run.
///
/// ```swift
/// let outcome = try PayStormMerge.execute(directories: shardFolders, out: "Reports/merged")
/// print(outcome.report.exitCode)
/// ```
public enum PayStormMerge {
    /// Merges shard report folders into `out`.
    /// - Parameters:
    ///   - directories: one report folder per shard, each with the `summary.json` of a `--shard` run.
    ///   - out: the folder the merged report is written into (created when missing).
    /// - Returns: the merged report and its folder.
    /// - Throws: `RunError.noInput` for an unreadable summary or missing shards,
    ///   `RunError.badInput` for a folder that is not a shard, shards of different runs, a
    ///   shard given twice or an `out` that is one of the shards, `RunError.cannotWrite` when `out` cannot be written.
    public static func execute(directories: [String], out: String) throws(RunError) -> RunOutcome {
        let shards = try readShards(directories)
        // Writing into a shard's own folder would replace the summary that shard is merged from.
        let target = URL(fileURLWithPath: out).standardizedFileURL.resolvingSymlinksInPath().path
        for directory in directories
        where URL(fileURLWithPath: directory).standardizedFileURL.resolvingSymlinksInPath().path == target {
            throw .badInput("--out \(out) is the shard folder \(directory); merge into another folder")
        }
        let report = try merge(shards)
        let folder: ReportFolder
        do {
            folder = try ReportFolder(exactly: URL(fileURLWithPath: out))
            try ReportWriter.writeAll(report, to: folder)
        } catch {
            throw .cannotWrite("\(error)")
        }
        var firstDetection: [String: Double] = [:]
        for violation in report.violations {
            guard let t = violation.detectedAfterSeconds else { continue }
            firstDetection[violation.invariant] = min(firstDetection[violation.invariant] ?? t, t)
        }
        return RunOutcome(report: report, folder: folder.url, firstDetection: firstDetection)
    }

    /// One shard's report and the folder it came from.
    struct ShardReport {
        var directory: String
        var report: RunReport
        var info: ShardInfo
        var figures: ShardFigures
    }

    /// The JSON path of the first negative number among a shard's figures (every one is a count or a
    /// duration), or nil: summed, a negative count would quietly cancel another shard's.
    static func negativeFigure(_ figures: ShardFigures) -> String? {
        guard let data = try? JSONEncoder().encode(figures),
            let tree = try? JSONDecoder().decode(JSONValue.self, from: data)
        else { return nil }
        func find(_ node: JSONValue, _ path: String) -> String? {
            switch node {
            case .object(let object):
                for key in object.keys.sorted() {
                    if let found = find(object[key]!, path.isEmpty ? key : path + "." + key) { return found }
                }
            case .array(let array):
                for (index, item) in array.enumerated() {
                    if let found = find(item, "\(path)[\(index)]") { return found }
                }
            case .number:
                if let value = node.doubleValue, value < 0 { return path }
            case .null, .bool, .string:
                break
            }
            return nil
        }
        return find(tree, "")
    }

    static func readShards(_ directories: [String]) throws(RunError) -> [ShardReport] {
        guard !directories.isEmpty else { throw .noInput("merge needs at least one shard report folder") }
        var shards: [ShardReport] = []
        for directory in directories {
            let path = URL(fileURLWithPath: directory).appendingPathComponent("summary.json").path
            guard let data = FileManager.default.contents(atPath: path) else {
                throw .noInput("cannot read \(path)")
            }
            let decoder = JSONDecoder()
            decoder.dateDecodingStrategy = .iso8601
            let report: RunReport
            do {
                report = try decoder.decode(RunReport.self, from: data)
            } catch {
                throw .badInput("\(path): not a PayStorm summary.json (\(error))")
            }
            guard let info = report.shard, let figures = info.figures else {
                throw .badInput("\(path): not a shard's report (it has no 'shard'; run with --shard I/N)")
            }
            if let negative = negativeFigure(figures) {
                throw .badInput("\(path): shard.figures.\(negative) is negative; counts and seconds never are")
            }
            shards.append(ShardReport(directory: directory, report: report, info: info, figures: figures))
        }
        let first = shards[0]
        var byIndex: [Int: String] = [:]
        for shard in shards {
            for (field, mine, theirs) in [
                ("profile", shard.report.profile, first.report.profile),
                ("seed", String(shard.report.seed), String(first.report.seed)),
                ("shard count", String(shard.info.count), String(first.info.count)),
            ] where mine != theirs {
                throw .badInput(
                    "\(shard.directory): \(field) \(mine) differs from \(theirs) in \(first.directory); "
                        + "only shards of one run merge"
                )
            }
            if let other = byIndex[shard.info.index] {
                throw .badInput("\(shard.directory): shard \(shard.info.index) is also in \(other)")
            }
            byIndex[shard.info.index] = shard.directory
        }
        try checkOneRun(shards)
        let missing = (0..<first.info.count).filter { byIndex[$0] == nil }
        guard missing.isEmpty else {
            throw .noInput(
                "missing shard\(missing.count == 1 ? "" : "s") "
                    + missing.map(String.init).joined(separator: ", ") + " of \(first.info.count)"
            )
        }
        return shards.sorted { $0.info.index < $1.info.index }
    }

    /// One report from the shards: figures summed, thresholds judged again on them, invariant checks summed,
    /// and the verdict and exit code by the rules of a run.
    static func merge(_ shards: [ShardReport]) throws(RunError) -> RunReport {
        let first = shards[0].report
        let figures = try MergedFigures(shards)
        let harnessLimited = mergedHarnessLimit(shards)
        let thresholds = try judgeThresholds(of: shards, on: figures, harnessLimited: harnessLimited)
        let invariants = mergedInvariants(shards, tallies: figures.tallies)
        let limit = Checker.Options().maxUnknownFraction
        let heldReason = Checker.heldReason(held: figures.held, purchases: figures.purchases, above: limit)
        var invariantVerdict = mergedInvariantVerdict(shards.map(\.report.invariantVerdict), tallies: figures.tallies)
        if invariantVerdict == .pass && heldReason != nil { invariantVerdict = .unknown }
        // The first interrupted shard's signal, as its exit code says (130 for a report that names none).
        let interrupted = shards.first { $0.report.interrupted }.map {
            StopSignal(exitCode: $0.report.exitCode) ?? .interrupt
        }
        let undecided =
            heldReason
            ?? shards.lazy.flatMap(\.report.reasons).first { $0.hasPrefix("undecided: ") }
            .map { String($0.dropFirst("undecided: ".count)) }
            ?? undecidedInvariant(figures.tallies)
        let (verdict, reasons, exitCode) = ReportBuilder.judge(
            invariants: (invariantVerdict, invariants),
            thresholds: thresholds,
            interruptedBy: interrupted,
            undecided: undecided
        )
        var report = RunReport(
            toolVersion: "paystorm \(PayStormVersion.current)",
            profile: first.profile,
            seed: first.seed,
            startedAt: shards.map(\.report.startedAt).min() ?? first.startedAt,
            endedAt: shards.map(\.report.endedAt).max() ?? first.endedAt,
            target: first.target,
            verdict: verdict,
            reasons: reasons,
            invariantVerdict: invariantVerdict,
            interrupted: interrupted != nil,
            exitCode: exitCode,
            requests: figures.requests,
            latency: figures.latencySummaries,
            thresholds: thresholds,
            invariants: invariants,
            violations: shards.flatMap(\.report.violations),
            faults: shards.map(\.report.faults).reduce(into: [:]) { $0.merge($1, uniquingKeysWith: +) },
            timeline: mergedTimeline(shards.map(\.report.timeline)),
            notes: mergedNotes(shards),
            harnessLimited: harnessLimited
        )
        // Shards pinned to one namespace (--namespace) name it once; shards that each drew their own (the
        // Kubernetes Job's pods, against a target that keeps its state) leave it to each witness's replay line.
        if Set(shards.map(\.report.namespace)).count == 1 { report.namespace = first.namespace }
        return report
    }

    /// Where the merged run fell behind its schedule: from the first shard that did, at the shards' sending
    /// rates added (each shard limited from then on is its own ceiling), and the schedule's arrivals dropped at
    /// the source summed; nil when no shard fell behind.
    static func mergedHarnessLimit(_ shards: [ShardReport]) -> HarnessLimit? {
        let limited = shards.compactMap { shard in shard.report.harnessLimited.map { (shard.info.index, $0) } }
        guard let first = limited.min(by: { $0.1.fromSeconds < $1.1.fromSeconds }) else { return nil }
        let indices = limited.map { String($0.0) }.joined(separator: ", ")
        let actions = limited.compactMap(\.1.actions)
        return HarnessLimit(
            fromSeconds: first.1.fromSeconds,
            deliveriesPerSecond: limited.map(\.1.deliveriesPerSecond).reduce(0, +),
            reason: first.1.reason + " in shard\(limited.count == 1 ? "" : "s") \(indices)",
            actions: actions.isEmpty
                ? nil
                : HarnessLimit.DroppedActions(
                    scheduled: actions.map(\.scheduled).reduce(0, +),
                    dropped: actions.map(\.dropped).reduce(0, +)
                )
        )
    }

    /// The shards' figures combined: counters summed, histograms added.
    struct MergedFigures {
        var counts: [String: RequestCounts] = [:]
        var latency: [String: Histogram] = [:]
        var service: [String: Histogram] = [:]
        /// The request hook's time, by kind (`all`), in the shards that had a hook.
        var hook: [String: Histogram] = [:]
        var tallies: [String: ShardTally] = [:]
        /// Purchases held at the final probe and genuine purchases, summed over the shards that kept them.
        var held = 0
        var purchases = 0
        var late: Int
        /// The shards run side by side, so the merged run lasts as long as its longest shard.
        var durationSeconds: Double
        var requests: ReportedRequests

        /// - Throws: `RunError.badInput` naming the shard and the key of a histogram that does not decode.
        init(_ shards: [ShardReport]) throws(RunError) {
            late = shards.map(\.figures.late).reduce(0, +)
            durationSeconds = shards.map(\.figures.durationSeconds).max() ?? 0
            requests = shards.map(\.report.requests).reduce(ReportedRequests(RequestCounts()), +)
            for shard in shards {
                counts.merge(shard.figures.counts, uniquingKeysWith: +)
                held += shard.figures.heldPurchases ?? 0
                purchases += shard.figures.genuinePurchases ?? 0
                try addHistograms(of: shard)
                for (name, tally) in shard.figures.tallies {
                    let sum = tallies[name] ?? ShardTally(passed: 0, failed: 0, unknown: 0)
                    tallies[name] = ShardTally(
                        passed: sum.passed + tally.passed,
                        failed: sum.failed + tally.failed,
                        unknown: sum.unknown + tally.unknown
                    )
                }
            }
        }

        /// Adds a shard's histograms, keyed `KIND.intended`, `KIND.service` and `KIND.hook`, to the kind's sums.
        private mutating func addHistograms(of shard: ShardReport) throws(RunError) {
            for (key, text) in shard.figures.histograms {
                let histogram: Histogram
                do {
                    histogram = try HistogramCodec.decodeBase64(text)
                } catch {
                    throw .badInput("\(shard.directory)/summary.json: shard.figures.histograms.\(key): \(error)")
                }
                guard let dot = key.lastIndex(of: ".") else { continue }
                let kind = String(key[..<dot])
                switch key[dot...] {
                case ".service": service[kind, default: Histogram()].add(histogram)
                case ".hook": hook[kind, default: Histogram()].add(histogram)
                default: latency[kind, default: Histogram()].add(histogram)
                }
            }
        }

        /// What thresholds are judged on.
        var metrics: ThresholdMetrics {
            ThresholdMetrics(
                latency: latency,
                service: service,
                counts: counts,
                late: late,
                durationSeconds: durationSeconds
            )
        }

        /// The percentiles of each kind (`all` first), from the intended time and as service time, then the
        /// request hook's time (measure `hook`), as a run lists them.
        var latencySummaries: [LatencySummary] {
            var entries: [(kind: String, measure: String, histogram: Histogram)] = []
            for kind in ["all"] + latency.keys.filter({ $0 != "all" }).sorted() {
                entries.append((kind, "intended", latency[kind] ?? Histogram()))
                entries.append((kind, "service", service[kind] ?? Histogram()))
            }
            for kind in hook.keys.sorted() { entries.append((kind, "hook", hook[kind]!)) }
            return entries.map { entry in
                let figures = LatencyFigures(kind: entry.kind, measure: entry.measure, histogram: entry.histogram)
                return LatencySummary(
                    kind: entry.kind,
                    measure: entry.measure,
                    count: figures.count,
                    micros: figures.micros
                )
            }
        }
    }

    /// Where the report comes from, then each shard's own notes under its index.
    static func mergedNotes(_ shards: [ShardReport]) -> [String] {
        let first = shards[0].report
        let count = shards.count
        var notes = ["merged from \(count) shard\(count == 1 ? "" : "s") of \(first.profile), seed \(first.seed)"]
        notes.append("per-second percentiles in the timeline are the highest of the shards' for that second")
        for shard in shards {
            notes += shard.report.notes.map { "shard \(shard.info.index): \($0)" }
        }
        return notes
    }

    /// The shards' timelines second by second: counts summed, percentiles the highest of the shards'.
    static func mergedTimeline(_ timelines: [[TimelinePoint]]) -> [TimelinePoint] {
        var bySecond: [Int: TimelinePoint] = [:]
        for point in timelines.joined() {
            guard var merged = bySecond[point.second] else {
                bySecond[point.second] = point
                continue
            }
            merged.intended += point.intended
            merged.ok += point.ok
            merged.errors += point.errors
            merged.p50Micros = max(merged.p50Micros, point.p50Micros)
            merged.p99Micros = max(merged.p99Micros, point.p99Micros)
            bySecond[point.second] = merged
        }
        return bySecond.keys.sorted().map { bySecond[$0]! }
    }
}
