import Checking
import Foundation
import Load
import Profile
import Reporting

/// Maps what the load engine and the checker found onto the plain ``RunReport`` every writer reads.
enum ReportBuilder {
    static func build(
        profile: Profile,
        options: RunOptions,
        startedAt: Date,
        target: String,
        verdict: Checking.Verdict,
        summary: LoadSummary,
        recorder: LoadRecorder,
        faults: [String: Int],
        firstDetection: [Invariant: Double],
        interrupted: Bool,
        notes: [String]
    ) -> RunReport {
        let breached = summary.thresholds.contains { !$0.passed }
        let outcome: Reporting.Verdict =
            switch verdict.outcome {
            case .pass: .pass
            case .fail: .fail
            case .unknown: .unknown
            }
        let exitCode: Int32 =
            interrupted
            ? PayStormRun.exitInterrupted
            : outcome == .fail
                ? PayStormRun.exitViolation
                : breached
                    ? PayStormRun.exitThreshold : outcome == .unknown ? PayStormRun.exitUnknown : PayStormRun.exitPass

        var errors = summary.totals.errors
        for (status, count) in summary.totals.statusClasses where status != "2xx" { errors["http" + status] = count }
        errors["missed"] = nil
        let requests = RequestTotals(
            intended: summary.totals.scheduled,
            sent: summary.totals.sent,
            ok: summary.totals.ok,
            errors: errors,
            missed: summary.totals.missed,
            late: summary.late
        )
        let latency = summary.latency.map {
            LatencySummary(kind: $0.kind, measure: $0.measure, count: $0.count, micros: $0.micros)
        }
        let thresholds = summary.thresholds.map {
            ThresholdResult(expression: $0.expression, observed: $0.observed, passed: $0.passed)
        }
        var invariants: [InvariantResult] = []
        for invariant in Invariant.allCases {
            if let unchecked = verdict.unchecked.first(where: { $0.invariant == invariant }) {
                invariants.append(
                    InvariantResult(name: invariant.rawValue, status: .unchecked, reason: unchecked.reason)
                )
                continue
            }
            let tally = verdict.tallies[invariant]
            let (passed, failed, unknown) = (tally?.passed ?? 0, tally?.failed ?? 0, tally?.unknown ?? 0)
            if failed > 0 {
                invariants.append(InvariantResult(name: invariant.rawValue, status: .failed, violations: failed))
            } else if passed > 0 {
                let note = unknown > 0 ? "\(passed) checks held, \(unknown) undecided" : "\(passed) checks held"
                invariants.append(InvariantResult(name: invariant.rawValue, status: .passed, reason: note))
            } else if unknown > 0 {
                invariants.append(
                    InvariantResult(name: invariant.rawValue, status: .unknown, reason: "\(unknown) checks undecided")
                )
            } else {
                invariants.append(
                    InvariantResult(
                        name: invariant.rawValue,
                        status: .unchecked,
                        reason: "nothing in this run to check it on"
                    )
                )
            }
        }
        let replayBase =
            "paystorm replay \(options.profilePath) --seed \(profile.seed)"
            + options.flaws.map { " --flaw \($0)" }.joined()
        let violations = verdict.violations.map { witness in
            Violation(
                invariant: witness.invariant.rawValue,
                account: witness.account,
                summary: witness.summary,
                witness: witness.entries.map { String(format: "t=%.3fs ", $0.at) + $0.sentence }
                    + ["the probe at t=\(String(format: "%.3f", witness.at))s answered: \(describe(witness.observed))"],
                detectedAfterSeconds: witness.at,
                replay: replayBase + " --account \(witness.account)"
            )
        }
        let timeline = recorder.timeseries.map { row in
            TimelinePoint(
                second: row.second,
                intended: row.scheduled,
                ok: row.ok,
                errors: row.failed,
                p50Micros: row.p50Micros,
                p99Micros: row.p99Micros
            )
        }
        var allNotes = notes
        if verdict.violationCount > verdict.violations.count {
            allNotes.append(
                "\(verdict.violationCount) violations in all; the first \(verdict.violations.count) have witnesses"
            )
        }
        allNotes += verdict.unknownSamples.prefix(5).map { "undecided: \($0)" }
        for (invariant, t) in firstDetection.sorted(by: { $0.value < $1.value }) {
            allNotes.append(String(format: "%@ first failed %.1f s into the run", invariant.rawValue, t))
        }
        return RunReport(
            toolVersion: "paystorm \(PayStormVersion.current)",
            profile: profile.name,
            seed: profile.seed,
            startedAt: startedAt,
            endedAt: Date(),
            target: target,
            verdict: outcome,
            exitCode: exitCode,
            requests: requests,
            latency: latency,
            thresholds: thresholds,
            invariants: invariants,
            violations: violations,
            faults: faults,
            timeline: timeline,
            notes: allNotes
        )
    }

    /// The probe's answer in one short phrase.
    static func describe(_ state: AccountState) -> String {
        var parts: [String] = []
        let entitled = state.entitlements.map { e in e.productId + (e.transactionId.map { " (\($0))" } ?? "") }
        parts.append(entitled.isEmpty ? "no entitlements" : "entitlements " + entitled.joined(separator: ", "))
        let balances = state.balances.filter { $0.value != 0 }.sorted { $0.key < $1.key }
        if !balances.isEmpty {
            parts.append("balances " + balances.map { "\($0.key)=\($0.value)" }.joined(separator: ", "))
        }
        if let grants = state.grants?.filter({ $0.count > 1 }), !grants.isEmpty {
            parts.append("grant counts " + grants.map { "\($0.transactionId)×\($0.count)" }.joined(separator: ", "))
        }
        return parts.joined(separator: "; ")
    }
}

/// The version written into every report.
public enum PayStormVersion {
    /// The current version.
    public static let current = "0.1.0"
}
