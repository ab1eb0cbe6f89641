import Capacity
import Foundation
import PayStorm
import ReferenceLedger
import Reporting
import RunControl

extension Command {
    /// `paystorm capacity`: the highest rate a target sustains within its objectives.
    static let capacity = Command(
        name: "capacity",
        summary: "search the highest rate the target sustains within SLOs; fit the Universal Scalability Law",
        help: """
            paystorm capacity: find the sustainable rate of a target

            Usage: paystorm capacity PROFILE --slo "p99 < 250ms" [--slo ...] [OPTIONS]
                   paystorm capacity --from DIR... [--slo ...] [--out DIR]
                   paystorm capacity trend DIR... [--drop SHARE] [--window N] [--out DIR]

            Runs PROFILE once per step, its schedule replaced by a constant rate (same seed, the profile's
            faults if it has any, 1 s settle): from the rate the profile starts at (or --start), multiplying
            by --factor while every SLO holds and PayStorm keeps up, then bisecting between the last good
            and the first bad step to --resolution. Before each step an external target recovers: PayStorm
            probes it (5 webhook POSTs of {} a second) until 5 in a row answer within twice the latency it
            measured before the first step (+25 ms), at most --recovery-timeout. The first --warmup-seconds of
            each step are warm-up and not judged. Each step's report folder goes under DIR/steps/, and DIR
            gets capacity.csv (a row per step), capacity.json and capacity.html (latency and throughput against the rate, knee marked),
            where DIR is Reports/<UTC time>-<profile>-<seed>-capacity/. Concurrency comes from Little's law
            (N = throughput x mean service time), and the Universal Scalability Law is fitted to it.
            SLOs use the threshold grammar ([KIND.][service.]METRIC OP VALUE); without --slo, the profile's
            thresholds. --slo invariants makes correctness an objective too: a step whose run failed an
            invariant is a bad step, so the search finds the highest rate that is both fast enough and right.
            With --from, re-analyses capacity folders or step folders without sending anything.
            'capacity trend' reads many nights' capacity folders (capacity.json) and writes trend.csv (a row
            per night by date: label, knee, USL λ, σ, κ and ceiling, p99 at the knee) and trend.html; it exits
            1 when the latest knee is more than --drop below the median of the --window nights before it. A
            folder without capacity.json, or of an interrupted search, is skipped with a note.

            Options:
              --slo TEXT          an objective, such as "p99 < 250ms", "errorRate < 0.1%" or invariants;
                                  repeatable
              --start RATE        the first step's rate in actions/s (default: the profile's first rate)
              --factor X          the multiplier while stepping up, 1.1 to 10 (default 2)
              --resolution F      stop bisecting when the bad rate is within F of the good one (default 0.05)
              --step-seconds S    each step's length, 2 to 3600 (default 15)
              --warmup-seconds S  the first seconds of a step not judged (default: a third of the step)
              --max-steps N       at most N steps, 1 to 100 (default 16)
              --max-rate RATE     never above RATE actions/s (default: 1000 times the start)
              --recovery-timeout S  before each step, wait at most S seconds, 0 to 3600, for the target to
                                  answer a light probe at its quiet latency again (default 60; 0: no wait)
              --seed N            replace the profile's seed
              --set NAME=VALUE    the value of ${NAME} in the profile; repeatable
              --flaw NAME         switch on a flaw of the embedded ledger; repeatable
              --pki DIR           the test PKI an external target trusts
              --reports DIR       where the capacity folder goes (default Reports)
              --label TEXT        what the search measured (a commit, a build): capacity.json's label, which
                                  names the night in 'capacity trend' (default: the folder's name)
              --from DIR...       re-analyse capacity folders or step folders (with step.json) instead
              --out DIR           with --from: where the capacity files go (default: the one capacity folder);
                                  with trend: where trend.csv and trend.html go (default Reports/trend)
              --quiet             no progress lines, only the summary
              --drop SHARE        trend: the drop below the median that fails, 0 to 1 (default 0.2)
              --window N          trend: how many earlier nights make the median, 1 to 1000 (default 7)

            Exit codes: 0 sustainable rate found (or no SLO broke up to --max-rate or --max-steps), 1 a step's
            run failed an invariant (the rates are still found and written), 3 even the lowest step broke an
            SLO, 4 PayStorm's own ceiling reached before the backend broke an SLO, 64 usage (a bad --slo),
            65 bad profile or not a capacity folder, 66 missing input, 69 target unreachable, 70 internal
            error, 73 cannot write, 129, 130 or 143 stopped by SIGHUP, SIGINT or SIGTERM (the steps done are
            analysed, the outcome is 'interrupted'). 'capacity trend': 0 the latest knee held, 1 it dropped,
            64 usage, 65 no folder holds a search that ran to its end, 73 cannot write.

            """
    ) { arguments in
        var arguments = arguments
        if arguments.first == "trend" {
            _ = arguments.positional()
            return try capacityTrend(&arguments)
        }
        let slos = try arguments.options("--slo")
        do {
            _ = try PayStormCapacity.parseSLOs(slos)
        } catch {
            throw CLIError(.usage, "--slo: \(error)")
        }
        let quiet = arguments.flag("--quiet")
        let reports = try arguments.folder("--reports") ?? "Reports"
        if arguments.flag("--from") {
            let out = try arguments.folder("--out")
            var paths: [String] = []
            while let path = arguments.positional() { paths.append(path) }
            try arguments.finish()
            guard !paths.isEmpty else { throw CLIError(.usage, "--from needs capacity or step folders") }
            do throws(RunError) {
                let outcome = try PayStormCapacity.analyse(paths: paths, slos: slos, out: out, reports: reports)
                return finish(outcome)
            } catch {
                throw CLIError(RunCommandSupport.exitCode(for: error), error.description)
            }
        }
        var options = try capacityOptions(&arguments, slos: slos)
        options.run.reportsDirectory = reports
        let signals = TerminationSignal.interrupting(options.run.interruption)
        defer { signals.cancel() }
        do throws(RunError) {
            let outcome = try PayStormCapacity.execute(options) { line in
                if !quiet { PayStormCLI.printError(line) }
            }
            return finish(outcome)
        } catch {
            throw CLIError(
                options.run.interruption.signal?.exitCode ?? RunCommandSupport.exitCode(for: error),
                error.description
            )
        }
    }

    /// The search's options from the command line (everything but `--slo`, `--quiet`, `--reports`).
    static func capacityOptions(_ arguments: inout Arguments, slos: [String]) throws -> CapacityOptions {
        let start = try arguments.double("--start")
        let factor = try arguments.double("--factor")
        let resolution = try arguments.double("--resolution")
        let stepSeconds = try arguments.double("--step-seconds")
        let warmup = try arguments.double("--warmup-seconds")
        let maxSteps = try arguments.int("--max-steps")
        let maxRate = try arguments.double("--max-rate")
        let recoveryTimeout = try arguments.double("--recovery-timeout")
        let seed = try arguments.seed()
        let flaws = try LedgerFlaw.parse(try arguments.options("--flaw")).map(\.rawValue)
        let pki = try arguments.option("--pki")
        let label = try arguments.option("--label")
        let variables = try profileVariables(&arguments)
        let profile = arguments.positional()
        try arguments.finish()
        guard let profile else { throw CLIError(.usage, "missing PROFILE (or --from DIR...)") }
        guard FileManager.default.isReadableFile(atPath: profile) else {
            throw CLIError(.noInput, "cannot read profile \(profile)")
        }
        var run = RunOptions(profilePath: profile)
        run.flaws = flaws
        run.pkiDirectory = pki
        run.variables = variables
        // Steps are judged from their counts and histograms; a history per step would only fill the disk.
        run.history = false
        if let seed { run.seed = seed }
        var options = CapacityOptions(run: run)
        options.slos = slos
        options.label = label
        func check(_ value: Double?, _ name: String, _ range: ClosedRange<Double>) throws -> Double? {
            guard let value else { return nil }
            guard range.contains(value) else {
                throw CLIError(
                    .usage,
                    "\(name) must be from \(fmt(range.lowerBound)) to \(fmt(range.upperBound)), got \(fmt(value))"
                )
            }
            return value
        }
        options.start = try check(start, "--start", 0.1...10_000_000)
        options.factor = try check(factor, "--factor", 1.1...10) ?? options.factor
        options.resolution = try check(resolution, "--resolution", 0.001...1) ?? options.resolution
        options.stepSeconds = try check(stepSeconds, "--step-seconds", 2...3600) ?? options.stepSeconds
        options.warmupSeconds = try check(warmup, "--warmup-seconds", 0...3599) ?? (options.stepSeconds / 3).rounded()
        guard options.warmupSeconds <= options.stepSeconds - 1 else {
            throw CLIError(
                .usage,
                "--warmup-seconds must leave at least 1 s of the step judged, got \(fmt(options.warmupSeconds))"
            )
        }
        options.maxSteps = Int(try check(maxSteps.map(Double.init), "--max-steps", 1...100) ?? 16)
        options.maxRate = try check(maxRate, "--max-rate", 0.1...10_000_000)
        options.recoveryTimeoutSeconds =
            try check(recoveryTimeout, "--recovery-timeout", 0...3600) ?? options.recoveryTimeoutSeconds
        if let start = options.start, let maxRate = options.maxRate, start > maxRate {
            throw CLIError(.usage, "--start \(fmt(start)) is above --max-rate \(fmt(maxRate)): no step could run at it")
        }
        return options
    }

    private static func fmt(_ value: Double) -> String { String(format: "%g", value) }

    /// Prints the summary and returns the outcome's exit code.
    static func finish(_ outcome: CapacityOutcome) -> ExitCode {
        print(capacitySummary(outcome.report, folder: outcome.folder), terminator: "")
        if let signal = outcome.interruptedBy { return signal.exitCode }
        // As a run ranks them: a violated invariant comes before what the objectives said.
        if outcome.report.invariantsSentence != nil { return .violation }
        switch outcome.report.outcome {
        case .sustainable, .neverBroke: return .success
        case .noneSustainable: return .thresholdBreached
        case .harnessLimited: return .harnessLimited
        case .interrupted: return .interrupted
        }
    }

    /// The console summary: the outcome, the fit, where each SLO breaks, and the report's path.
    static func capacitySummary(_ report: CapacityReport, folder: URL) -> String {
        let rate = CapacityReport.rate
        let good = report.steps.filter(\.isGood).count
        var text = "\ncapacity: \(report.sentence)\n"
        if let ceiling = report.ceilingSentence { text += "  \(ceiling)\n" }
        text += "  steps: \(report.steps.count) (\(good) good)\n"
        if let recovery = CapacityRecovery.summary(of: report.steps) { text += "  \(recovery)\n" }
        if let invariants = report.invariantsSentence { text += "  \(invariants)\n" }
        if let usl = report.usl {
            text += String(
                format: "  USL fit: sigma %.4g, kappa %.4g, lambda %.4g/s, R² %.4f",
                usl.sigma,
                usl.kappa,
                usl.lambda,
                usl.rSquared
            )
            if let n = report.peakConcurrency, let x = report.peakThroughput {
                text += String(format: "; predicted peak at concurrency %.3g: ", n) + "\(rate(x)) deliveries/s"
            } else {
                text += "; no peak predicted (kappa 0)"
            }
            text += "\n"
        } else {
            text += "  USL fit: fewer than three steps PayStorm kept up with\n"
        }
        for slo in report.sloBreaks {
            let at: String
            if let r = slo.rate {
                at =
                    "breaks at \(rate(r)) actions/s (held at \(rate(slo.lastHeld ?? 0)), broke at \(rate(slo.firstBroken ?? 0)))"
            } else if let broken = slo.firstBroken {
                at = "broke already at the lowest step, \(rate(broken)) actions/s"
            } else {
                at = "held at every step PayStorm kept up with"
            }
            text += "  SLO \(slo.expression): \(at)\n"
        }
        text += "report: \(folder.path)/capacity.html\n"
        return text
    }
}
