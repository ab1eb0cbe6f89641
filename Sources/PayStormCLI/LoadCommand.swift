import Foundation
import Load
import PayStorm
import Primitives
import RunControl

extension Command {
    /// `paystorm load`: a vegeta-like open-loop attack on one URL.
    static let load = Command(
        name: "load",
        summary: "send requests to one URL at a scheduled rate and report latency",
        help: """
            paystorm load: send requests to one URL at a scheduled rate (open loop) and report
            latency from the intended send time and service time.

            Usage: paystorm load --url URL (--rate R --duration D | --schedule S | --users N --duration D)
                                 [OPTIONS]

            Rate:
              --rate R              constant requests per second (with --duration)
              --duration D          run length: 500ms, 10s, 2m, 1h
              --schedule S          segments joined by ',': R@D (constant), R1->R2@D (ramp),
                                    sine(MEAN,AMPLITUDE,PERIOD)@D; e.g. 10->500@1m,500@5m
              --arrivals A          uniform (default) or poisson
              --seed N              seed for poisson arrivals (default 1)
              --users N             closed loop instead: N virtual users (with --duration)
              --think D             closed loop think time between a response and the next send (default 0s)

            Request:
              --method M            HTTP method (default GET, or POST with a body)
              --header 'K: V'       a request header (repeatable)
              --body-file F         the request body
              --kind K              label for the metrics (default "default")

            Transport:
              --connections N       keep-alive connections to the host (default 64)
              --max-in-flight N     requests in flight at most; sends due beyond it are missed (default 4096)
              --timeout D           total time per request (default 30s)
              --connect-timeout D   connect and TLS time (default 5s)
              --http2               speak HTTP/2 (through libcurl's own transfers)
              --libcurl-transfers   HTTP/1.1 through libcurl's own transfers instead of PayStorm's
                                    framing over libcurl's connections (slower; for comparison)
              --ca-file F           trust this PEM CA bundle for https://
              --allow-host HOST     allow a non-loopback target host (repeatable)

            Output:
              --out DIR             write timeseries.csv, latency.hlog and summary.json to DIR
              --threshold T         e.g. 'p99 < 250ms', 'errorRate < 0.1%', 'missed == 0' (repeatable)
              --quiet               no status lines

            Exit codes: 0 done (every threshold held), 3 a threshold was breached, 64 bad usage,
            66 unreadable body file, 69 target unreachable, 70 libcurl refused an option (or a PayStorm bug),
            73 cannot write DIR, 129, 130 or 143 stopped by SIGHUP, SIGINT or SIGTERM.
            """
    ) { arguments in
        var arguments = arguments
        return try LoadCLI.run(&arguments)
    }
}

/// The `load` command, kept apart for tests: the options are read (``LoadOptions``) and checked (``LoadPlan``),
/// the plan is executed on a load engine, and its summary reported with the exit code.
enum LoadCLI {
    static func run(_ arguments: inout Arguments) throws -> ExitCode {
        let options = try LoadOptions(parsing: &arguments)
        do {
            let plan = try LoadPlan(options)
            let engine = try LoadEngine(plan.configuration)
            let interruption = Interruption()
            let (stats, summary) = try execute(plan, on: engine, interruption: interruption)
            if let signal = interruption.signal {
                if !plan.quiet { print(render(summary)) }
                return signal.exitCode
            }
            return try report(plan, stats: stats, summary: summary)
        } catch let error as LoadConfigurationError {
            throw CLIError(.usage, error.message)
        }
    }

    /// Probes the target, then runs the plan with the recorder's outputs and status lines, stopping early on
    /// SIGINT, SIGTERM or SIGHUP (`interruption` then says which).
    /// - Throws: ``CLIError`` when the target is unreachable, the output cannot be written or the engine cannot
    ///   start.
    static func execute(
        _ plan: LoadPlan,
        on engine: LoadEngine,
        interruption: Interruption
    ) throws -> (LoadEngineStats, LoadSummary) {
        if case .open(let schedule) = plan.mode,
            let warning = schedule.capacityWarning(
                maxInFlight: plan.configuration.maxInFlight,
                expectedLatency: .seconds(1)
            )
        {
            if !plan.quiet { PayStormCLI.printError("paystorm load: note: \(warning) if responses take 1s") }
        }
        if let failure = engine.probe(url: plan.url) {
            throw CLIError(.unreachable, "target \(plan.url) is unreachable: \(failure.error) (\(failure.detail))")
        }
        let recorder = try makeRecorder(plan)

        // A signal stops the run; the partial outputs are still written, and the exit code names the signal.
        let signals = TerminationSignal.interrupting(interruption)
        defer { signals.cancel(restoringDefaults: true) }
        let stopping = interruption.onInterrupt { engine.cancel() }
        defer { stopping.cancel() }
        let stats = engine.run(plan.mode) { index, _ in
            plan.request(id: index)
        } sink: { result in
            recorder.record(result)
        } tick: { stats in
            recorder.tick(stats)
        }
        if let failure = stats.failure {
            throw CLIError(.internalError, "the load engine failed: \(failure)")
        }
        return (stats, recorder.finish(stats, thresholds: plan.thresholds, settings: plan.settings))
    }

    /// The recorder of the run's outputs (when `--out` is given) and status lines.
    static func makeRecorder(_ plan: LoadPlan) throws -> LoadRecorder {
        let status: StatusMode = plan.quiet ? .quiet : (isatty(2) != 0 ? .live : .plain(every: 5))
        do {
            return try LoadRecorder(directory: plan.outDirectory, status: status, plannedDuration: plan.planned)
        } catch let error as OutputFileError {
            throw CLIError(.cannotWrite, error.description)
        } catch {
            throw CLIError(.cannotWrite, "cannot create the output directory \(plan.outDirectory ?? "")")
        }
    }

    /// Prints the summary and decides the exit code of a run no signal stopped: unreachable (every request refused), or
    /// whether every threshold held.
    static func report(_ plan: LoadPlan, stats: LoadEngineStats, summary: LoadSummary) throws -> ExitCode {
        if !plan.quiet { print(render(summary)) }
        if summary.totals.sent > 0 && summary.totals.statusClasses.isEmpty,
            let firstError = summary.totals.errors.keys.sorted().first,
            summary.totals.errors.keys.allSatisfy({ $0 == "refused" || $0 == "dns" })
        {
            throw CLIError(.unreachable, "target \(plan.url) became unreachable: every request failed (\(firstError))")
        }
        return summary.passed ? .success : .thresholdBreached
    }

    static func describe(_ mode: LoadMode) -> String {
        switch mode {
        case .open(let schedule):
            return "open, \(schedule.segments.count) segment(s), \(schedule.duration), peak \(schedule.peakRate)/s"
        case .closed(let users, let think, let duration):
            return "closed, \(users) users, think \(think), \(duration)"
        }
    }

    /// The human summary printed at the end.
    static func render(_ summary: LoadSummary) -> String {
        var lines: [String] = []
        let totals = summary.totals
        lines.append(
            String(
                format: "requests  %d scheduled, %d sent, %d ok, %d failed, %d missed, %d late in %.2fs",
                totals.scheduled,
                totals.sent,
                totals.ok,
                totals.failed,
                totals.missed,
                summary.late,
                summary.durationSeconds
            )
                + (totals.unsent > 0 ? "; \(totals.unsent) unsent (timed out waiting for a connection)" : "")
        )
        lines.append(
            String(format: "rate      intended %.1f/s, achieved %.1f/s", summary.intendedRate, summary.achievedRate)
        )
        if !totals.statusClasses.isEmpty || !totals.errors.isEmpty {
            let parts =
                totals.statusClasses.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }
                + totals.errors.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }
            lines.append("outcomes  " + parts.joined(separator: ", "))
        }
        for figures in summary.latency where figures.count > 0 {
            let keys = ["p50", "p90", "p99", "p99.9", "max"]
            let text = keys.map { key in "\(key) \(formatMicrosCLI(figures.micros[key] ?? 0))" }.joined(separator: "  ")
            lines.append("\(figures.kind).\(figures.measure)".padding(toLength: 24, withPad: " ", startingAt: 0) + text)
        }
        for outcome in summary.thresholds {
            lines.append(
                "threshold \(outcome.passed ? "ok  " : "FAIL") \(outcome.expression) (observed \(outcome.observed))"
            )
        }
        return lines.joined(separator: "\n")
    }

    static func formatMicrosCLI(_ micros: Int64) -> String {
        if micros < 1000 { return "\(micros)µs" }
        if micros < 1_000_000 { return String(format: "%.2fms", Double(micros) / 1000) }
        return String(format: "%.2fs", Double(micros) / 1_000_000)
    }
}
