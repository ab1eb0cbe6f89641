import Checking
import Foundation
import Load
import Primitives
import Profile
import Reporting
import RunControl
import Simulation
import TargetProcesses

extension RunParts {
    /// Closes the recorder and the history, judges the run, and writes its report folder.
    func report(stats: LoadEngineStats, run: RunFacts, folder: ReportFolder) throws(RunError) -> RunOutcome {
        var notes = target.notes + run.notes
        api?.drain(into: history, startMillis: startMillis)
        notes += api?.notes ?? []
        let summary = recorder.finish(
            stats,
            thresholds: thresholds,
            settings: ["seed": String(profile.seed)],
            writesSummary: false
        )
        history.close()
        if let dropped = history.droppedNote { notes.append(dropped) }

        let unchecked = Checker.unchecked(target: profile.target, probeReturnsGrants: run.probeSawGrants)
        let verdict = checker.verdict(unchecked: unchecked)
        notes += runNotes(run, totals: summary.totals)
        let admissions = try PayStormRun.admissionsFile(pipeline.admission, folder: folder)
        if let admissions {
            notes.append(admissions.note)
            if run.harnessLimit == nil { log(admissions.note) }
        }
        // A safety round off the engine's thread may have seen an invariant fail first.
        let firstDetection = scheduler.firstDetection.merging(safetyProbes?.firstDetection ?? [:]) { min($0, $1) }
        var report = ReportBuilder.build(
            profile: profile,
            options: options,
            startedAt: startedAt,
            target: target.description,
            verdict: verdict,
            summary: summary,
            recorder: recorder,
            faults: scheduler.faultCounts.merging(api?.faultCounts ?? [:], uniquingKeysWith: +),
            firstDetection: firstDetection,
            interruptedBy: run.interruptedBy,
            notes: notes,
            acknowledgedOutside2xx: scheduler.acknowledgedOutside2xx,
            harnessLimited: run.harnessLimit,
            latencyThresholds: Set(thresholds.filter(\.metric.isLatency).map(\.expression)),
            admissionsPath: admissions?.path
        )
        if let hook = scheduler.hook { Self.addHook(hook, failure: run.hookFailure, to: &report) }
        do {
            try ReportWriter.writeAll(report, to: folder)
        } catch {
            throw .cannotWrite("\(error)")
        }
        var detections: [String: Double] = [:]
        for (invariant, t) in firstDetection { detections[invariant.rawValue] = t }
        return RunOutcome(report: report, folder: folder.url, firstDetection: detections)
    }

    /// Serves the written report's verdict and violations at the metrics endpoint for `--metrics-linger`
    /// seconds (cut short by a signal; not at all after one), then closes it.
    func lingerMetrics(_ report: RunReport) {
        guard let metrics else { return }
        let seconds = options.interruption.isInterrupted ? 0 : options.metricsLingerSeconds
        if seconds > 0 {
            options.announce(
                "metrics: the final values stay at http://\(metrics.address)/metrics for \(String(format: "%g", seconds)) s"
            )
        }
        metrics.linger(final: MetricsRunState.Final(report), seconds: seconds) { options.interruption.sleep($0) }
    }

    /// The request hook's time as a latency measure (`hook`, and a shard's histogram `all.hook` for `merge`) and
    /// a note, and, when it stopped the run, the reason first and exit 69: what was not sent was not checked, so
    /// the run cannot pass.
    static func addHook(_ hook: RequestHookStage, failure: String?, to report: inout RunReport) {
        if let figures = hook.figures {
            report.shard?.figures?.histograms["all.hook"] = HistogramCodec.encodeBase64(hook.time)
            report.latency.append(
                LatencySummary(
                    kind: figures.kind,
                    measure: figures.measure,
                    count: figures.count,
                    micros: figures.micros
                )
            )
            let ms = { (key: String) in String(format: "%.1f ms", Double(figures.micros[key] ?? 0) / 1000) }
            report.notes.append(
                "the request hook (\(hook.process.label)) answered \(figures.count) requests: p50 \(ms("p50")), "
                    + "p99 \(ms("p99")), max \(ms("max")); latency from the intended time includes it, service time "
                    + "does not"
            )
        }
        guard let failure else { return }
        report.reasons.insert("stopped: \(failure)", at: 0)
        report.notes.insert("the run stopped: \(failure)", at: 0)
        if report.verdict == .pass { report.verdict = .unknown }
        report.exitCode = ExitCode.unreachable.rawValue
    }

    /// The notes of how the run went: minting errors, follow-ups, an interruption, PayStorm's own limit, missed
    /// sends and what the target's answers meant. The limit and the missed sends are also said on the console.
    private func runNotes(_ run: RunFacts, totals: RequestCounts) -> [String] {
        var notes = scheduler.mintFailures.prefix(20).map { "minting error: \($0)" }
        notes += scheduler.followUpNotes
        if let signal = run.interruptedBy {
            notes.append("the run was interrupted (\(signal.name)); figures cover what was sent until then")
        }
        if let harnessLimit = run.harnessLimit {
            let line =
                harnessLimit.sentence + ": latency from then on includes PayStorm's own delay, "
                + "so latency thresholds it breaches are unknown"
            log(line)
            notes.append(line)
        }
        if let missed = PayStormRun.missedNote(totals) {
            log(missed)
            notes.append(missed)
        }
        return notes + answerNotes()
    }

    /// Notes on what the target's answers meant beside the checks: refused credentials, "retry later", the
    /// purchases that left no check to make, and rate-limited safety probes. The first two are also said on the
    /// console.
    private func answerNotes() -> [String] {
        let accounts = profile.target.accounts
        let refused = scheduler.unauthorized.note(
            provisionedOnce: accounts?.provision != nil && accounts?.refreshSeconds == nil
        )
        let told = [refused, scheduler.deferred.note].compactMap { $0 }
        told.forEach(log)
        return told + [checker.heldNote, scheduler.rateLimitedProbes.note].compactMap { $0 }
    }
}

extension PayStormRun {
    /// Missed sends at or above this share of those scheduled are told on the console and in the notes.
    static let missedShareTold = 0.01

    /// What a run that missed many of its sends did not test: a missed delivery obliges the target to nothing,
    /// so the verdict covers only what was sent, whether or not the run was harness-limited (misses in bursts
    /// shorter than its three ticks are not).
    static func missedNote(_ totals: RequestCounts) -> String? {
        guard totals.scheduled > 0, Double(totals.missed) >= missedShareTold * Double(totals.scheduled) else {
            return nil
        }
        let share = String(format: "%.1f%%", 100 * Double(totals.missed) / Double(totals.scheduled))
        return "\(totals.missed) of \(totals.scheduled) deliveries (\(share)) were missed, never sent (PayStorm was "
            + "behind its schedule or at its in-flight cap at their time): they oblige the target to nothing, so "
            + "the verdict covers only what was sent"
    }

    /// Writes `admissions.csv` when the world dropped arrivals at the source (or played a replay's admissions
    /// back), so the run's witnesses can be replayed on the same world.
    /// - Returns: the file's path and a note for the report; nil when every arrival was admitted.
    static func admissionsFile(
        _ admission: ArrivalAdmission?,
        folder: ReportFolder
    ) throws(RunError) -> (path: String, note: String)? {
        guard let admission, !admission.changes.isEmpty else { return nil }
        let url = folder.file(AdmissionsFile.name)
        do {
            try Data(AdmissionsFile.render(admission.changes).utf8).write(to: url, options: .atomic)
        } catch {
            throw .cannotWrite("\(url.path): \(error.localizedDescription)")
        }
        let (arrivals, dropped) = admission.counts
        let note =
            "\(dropped) of \(arrivals) scheduled actions were dropped at the source while PayStorm could not keep "
            + "up (the same seed alone generates a different world: replays pass --admissions \(url.path))"
        return (url.path, note)
    }

}
