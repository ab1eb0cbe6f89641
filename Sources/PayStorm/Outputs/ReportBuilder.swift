import Checking
import Foundation
import Load
import Primitives
import Profile
package import Reporting
package import RunControl

/// Maps what the load engine and the checker found onto the plain ``RunReport`` every writer reads.
package enum ReportBuilder {
    static func build(
        profile: Profile,
        options: RunOptions,
        startedAt: Date,
        target: String,
        verdict: Verdict,
        summary: LoadSummary,
        recorder: LoadRecorder,
        faults: [String: Int],
        firstDetection: [Invariant: Double],
        interruptedBy signal: StopSignal?,
        notes: [String],
        acknowledgedOutside2xx: [String: Int] = [:],
        harnessLimited: HarnessLimit? = nil,
        latencyThresholds: Set<String> = [],
        admissionsPath: String? = nil
    ) -> RunReport {
        let thresholds = thresholdResults(summary, harnessLimited: harnessLimited, latency: latencyThresholds)
        let invariants = Invariant.allCases.map { invariantResult($0, verdict: verdict) }
        let invariantVerdict = outcome(of: verdict)
        let (runVerdict, reasons, exitCode) = judge(
            invariants: (invariantVerdict, invariants),
            thresholds: thresholds,
            interruptedBy: signal,
            undecided: verdict.reason
        )
        var report = RunReport(
            toolVersion: "paystorm \(PayStormVersion.current)",
            profile: profile.name,
            seed: profile.seed,
            startedAt: startedAt,
            endedAt: Date(),
            target: target,
            verdict: runVerdict,
            reasons: reasons,
            invariantVerdict: invariantVerdict,
            interrupted: signal != nil,
            exitCode: exitCode,
            requests: ReportedRequests(run: summary.totals, late: summary.late, acknowledging: acknowledgedOutside2xx),
            latency: summary.latency.map {
                LatencySummary(kind: $0.kind, measure: $0.measure, count: $0.count, micros: $0.micros)
            },
            thresholds: thresholds,
            invariants: invariants,
            violations: violations(verdict, profile: profile, options: options, admissionsPath: admissionsPath),
            faults: faults,
            timeline: timeline(recorder),
            notes: runNotes(notes, verdict: verdict, firstDetection: firstDetection),
            shard: shardInfo(
                profile: profile,
                options: options,
                summary: summary,
                recorder: recorder,
                verdict: verdict
            ),
            harnessLimited: harnessLimited
        )
        if profile.namespace != 0 { report.namespace = RunNamespace.text(profile.namespace) }
        return report
    }

    /// The invariants' verdict as the report says it.
    static func outcome(of verdict: Verdict) -> VerdictOutcome {
        switch verdict.outcome {
        case .pass: .pass
        case .fail: .fail
        case .unknown: .unknown
        }
    }

    /// What a shard's report records for `paystorm merge`; nil for a run that is not a shard.
    static func shardInfo(
        profile: Profile,
        options: RunOptions,
        summary: LoadSummary,
        recorder: LoadRecorder,
        verdict: Verdict
    ) -> ShardInfo? {
        options.shard.map {
            ShardInfo(
                index: $0.index,
                count: $0.count,
                profilePath: options.profilePath,
                figures: shardFigures(summary: summary, recorder: recorder, verdict: verdict),
                run: ShardRun.of(profile: profile, options: options)
            )
        }
    }

    /// The thresholds' outcomes; a latency threshold over a harness-limited run is undecided, because latency
    /// measured while PayStorm was behind includes its own delay.
    static func thresholdResults(
        _ summary: LoadSummary,
        harnessLimited: HarnessLimit?,
        latency latencyThresholds: Set<String>
    ) -> [ThresholdResult] {
        let undecidedLatency = harnessLimited.map { "measured over a run that was \($0.sentence)" }
        return summary.thresholds.map {
            ThresholdResult(
                expression: $0.expression,
                observed: $0.observed,
                passed: $0.passed,
                unknown: latencyThresholds.contains($0.expression) ? undecidedLatency : nil
            )
        }
    }

    /// The witnessed violations, each with the command line that replays its account: the options that shape
    /// the world (seed, a schedule and settle in place of the profile's, as a capacity step runs, rate scale, the
    /// admissions of a thinned run) and the target (flaws, variables, and the test PKI an external target trusts:
    /// without it the replay is refused, or minted under a root the target rejects).
    static func violations(
        _ verdict: Verdict,
        profile: Profile,
        options: RunOptions,
        admissionsPath: String? = nil
    ) -> [Violation] {
        let replayBase =
            "paystorm replay \(shellQuoted(options.profilePath)) --seed \(profile.seed)"
            + (profile.namespace == 0 ? "" : " --namespace \(RunNamespace.text(profile.namespace))")
            + (options.schedule.map(scheduleOptions) ?? "")
            + (options.settleSeconds.map { " --settle \(plainNumber($0))" } ?? "")
            + (options.rateScale == 1 ? "" : " --rate-scale \(options.rateScale)")
            + (admissionsPath.map { " --admissions \(shellQuoted($0))" } ?? "")
            + (options.pkiDirectory.map { " --pki \(shellQuoted($0))" } ?? "")
            + options.flaws.map { " --flaw \($0)" }.joined()
            + options.variables.sorted { $0.key < $1.key }.map { " --set \(shellQuoted("\($0.key)=\($0.value)"))" }
            .joined()
        let minted = profile.mintedTokensByDictated
        return verdict.violations.map { witness in
            // A replay names the account by the token its provisioning is given, which dictates the same again.
            let replayed = minted[AccountDirectory.normalized(witness.account)] ?? witness.account
            return Violation(
                invariant: witness.invariant.rawValue,
                account: witness.account,
                summary: witness.summary,
                witness: witness.entries.map { String(format: "t=%.3fs ", $0.at) + $0.sentence }
                    + [witness.proof] + (witness.seenAgain.map { [$0] } ?? []),
                detectedAfterSeconds: witness.at,
                replay: replayBase + (witness.account.isEmpty ? "" : " --account \(replayed)"),
                sightings: witness.sightings > 1 ? witness.sightings : nil
            )
        }
    }

    /// `--rate R --duration S` for a schedule of one constant segment, the one shape a command line gives
    /// (``RunOptions/schedule``; `PayStormRun.load` refuses any other).
    private static func scheduleOptions(_ schedule: [RateSegment]) -> String {
        guard schedule.count == 1, case .constant(let rate) = schedule[0].shape else { return "" }
        return " --rate \(plainNumber(rate)) --duration \(plainNumber(schedule[0].seconds))"
    }

    /// A number as a command line reads it back exactly: `20` rather than `20.0`.
    private static func plainNumber(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : "\(value)"
    }

    /// The per-second timeline the HTML report plots.
    static func timeline(_ recorder: LoadRecorder) -> [TimelinePoint] {
        recorder.timeseries.map { row in
            TimelinePoint(
                second: row.second,
                intended: row.scheduled,
                ok: row.ok,
                errors: row.failed,
                p50Micros: row.p50Micros,
                p99Micros: row.p99Micros
            )
        }
    }

    /// The run's notes, then what the verdict could not show in full and when each invariant first failed.
    static func runNotes(
        _ notes: [String],
        verdict: Verdict,
        firstDetection: [Invariant: Double]
    ) -> [String] {
        var allNotes = notes
        if verdict.violationCount > verdict.violations.count {
            allNotes.append(
                "\(verdict.violationCount) violations in all; the first \(verdict.violations.count) have witnesses"
            )
        }
        if !verdict.lostNotifications.isEmpty {
            let types = verdict.lostNotifications.sorted { ($1.value, $0.key) < ($0.value, $1.key) }
            allNotes.append(
                "notifications lost (refused on the App Store's last attempt), by type: "
                    + types.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
            )
        }
        allNotes += verdict.unknownSamples.prefix(5).map { "undecided: \($0)" }
        for (invariant, t) in firstDetection.sorted(by: { $0.value < $1.value }) {
            allNotes.append(String(format: "%@ first failed %.1f s into the run", invariant.rawValue, t))
        }
        return allNotes
    }

    /// The verdict, its reasons and the exit code of a run or a merge of shards, from the invariants' verdict,
    /// the thresholds and the signal that interrupted the run, if one did.
    package static func judge(
        invariants: (verdict: VerdictOutcome, results: [InvariantResult]),
        thresholds: [ThresholdResult],
        interruptedBy signal: StopSignal?,
        undecided: String?
    ) -> (verdict: VerdictOutcome, reasons: [String], exitCode: Int32) {
        let (verdict, reasons) = VerdictOutcome.ofRun(
            invariants: invariants,
            thresholds: thresholds,
            interrupted: signal != nil,
            undecided: undecided
        )
        let exitCode = exitCode(
            interruptedBy: signal,
            invariantVerdict: invariants.verdict,
            thresholds: thresholds,
            runVerdict: verdict
        )
        return (verdict, reasons, exitCode)
    }

    /// The exit code of a run or a merge of shards; it ranks what happened (README): interrupted (129, 130 or
    /// 143 by the signal), violation, breach, unknown, pass.
    private static func exitCode(
        interruptedBy signal: StopSignal?,
        invariantVerdict: VerdictOutcome,
        thresholds: [ThresholdResult],
        runVerdict: VerdictOutcome
    ) -> Int32 {
        if let signal {
            signal.exitCode.rawValue
        } else if invariantVerdict == .fail {
            ExitCode.violation.rawValue
        } else if thresholds.contains(where: \.breached) {
            ExitCode.thresholdBreached.rawValue
        } else if runVerdict == .unknown {
            ExitCode.unknown.rawValue
        } else {
            ExitCode.success.rawValue
        }
    }

    /// What a shard keeps for `paystorm merge`: whole histograms and counters, which percentiles and
    /// rates cannot be recomputed from.
    static func shardFigures(summary: LoadSummary, recorder: LoadRecorder, verdict: Verdict) -> ShardFigures {
        var counts = summary.kinds
        counts["all"] = summary.totals
        var histograms: [String: String] = [:]
        var latency = recorder.latencyByKind
        latency["all"] = recorder.latency
        var service = recorder.serviceByKind
        service["all"] = recorder.service
        for (kind, histogram) in latency { histograms[kind + ".intended"] = HistogramCodec.encodeBase64(histogram) }
        for (kind, histogram) in service { histograms[kind + ".service"] = HistogramCodec.encodeBase64(histogram) }
        var tallies: [String: ShardTally] = [:]
        for (invariant, tally) in verdict.tallies {
            tallies[invariant.rawValue] = ShardTally(passed: tally.passed, failed: tally.failed, unknown: tally.unknown)
        }
        return ShardFigures(
            counts: counts,
            histograms: histograms,
            late: summary.late,
            durationSeconds: summary.durationSeconds,
            tallies: tallies,
            unchecked: Dictionary(verdict.unchecked.map { ($0.invariant.rawValue, $0.reason) }) { first, _ in first },
            heldPurchases: verdict.held,
            genuinePurchases: verdict.purchases
        )
    }

    /// One invariant's outcome from its tally and what the run could not check.
    static func invariantResult(_ invariant: Invariant, verdict: Verdict) -> InvariantResult {
        let tally = verdict.tallies[invariant]
        // The checker words a limitation that leaves part of the invariant checkable "partly: ...".
        let unchecked = verdict.unchecked.first { $0.invariant == invariant }.map {
            (reason: $0.reason, partly: $0.reason.hasPrefix("partly"))
        }
        return InvariantResult(
            name: invariant.rawValue,
            passed: tally?.passed ?? 0,
            failed: tally?.failed ?? 0,
            unknown: tally?.unknown ?? 0,
            unchecked: unchecked,
            tooUndecided: Checker.isTooUndecided(
                passed: tally?.passed ?? 0,
                unknown: tally?.unknown ?? 0,
                above: Checker.Options().maxUnknownFraction
            )
        )
    }
}

/// `value` as one POSIX shell word: unchanged when it is plain, else in single quotes, so a replay line can be
/// pasted whatever the `--set` values hold.
func shellQuoted(_ value: String) -> String {
    let plain = value.allSatisfy { $0.isLetter || $0.isNumber || "-_=.,:/@%+".contains($0) }
    if plain && !value.isEmpty { return value }
    return "'" + value.replacingOccurrences(of: "'", with: "'\\''") + "'"
}
