import Foundation
import Load
import PayStorm

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
            66 unreadable body file, 69 target unreachable, 73 cannot write DIR, 130 interrupted.
            """
    ) { arguments in
        var arguments = arguments
        return try LoadCLI.run(&arguments)
    }
}

/// The `load` command's parsing and run, kept apart for tests.
enum LoadCLI {
    static func run(_ arguments: inout Arguments) throws -> ExitCode {
        guard let url = try arguments.option("--url") else { throw CLIError(.usage, "--url is required") }
        let rate = try arguments.double("--rate")
        let durationText = try arguments.option("--duration")
        let scheduleText = try arguments.option("--schedule")
        let arrivalsText = try arguments.option("--arrivals") ?? "uniform"
        let seed = try arguments.int("--seed") ?? 1
        let users = try arguments.int("--users")
        let thinkText = try arguments.option("--think") ?? "0s"
        let headerTexts = try arguments.options("--header")
        let bodyFile = try arguments.option("--body-file")
        let kind = try arguments.option("--kind") ?? "default"
        let connections = try arguments.int("--connections") ?? 64
        let maxInFlight = try arguments.int("--max-in-flight") ?? 4096
        let timeoutText = try arguments.option("--timeout") ?? "30s"
        let connectTimeoutText = try arguments.option("--connect-timeout") ?? "5s"
        let http2 = arguments.flag("--http2")
        let libcurlTransfers = arguments.flag("--libcurl-transfers")
        let caFile = try arguments.option("--ca-file")
        let allowedHosts = try arguments.options("--allow-host")
        let outDirectory = try arguments.option("--out")
        let thresholdTexts = try arguments.options("--threshold")
        let quiet = arguments.flag("--quiet")
        var method = try arguments.option("--method")
        try arguments.finish()

        do {
            // Safety first: never aim at a host the user did not name.
            guard let components = URLComponents(string: url), let scheme = components.scheme,
                scheme == "http" || scheme == "https", let host = components.host, !host.isEmpty
            else { throw CLIError(.usage, "--url '\(url)' is not an http:// or https:// URL") }
            let bareHost = host.trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
            guard ListenAddress.isLoopback(bareHost) || allowedHosts.contains(bareHost) else {
                throw CLIError(
                    .usage,
                    "refusing non-loopback host '\(bareHost)'; pass --allow-host \(bareHost) to allow it"
                )
            }

            let arrivals: Arrivals
            switch arrivalsText {
            case "uniform": arrivals = .uniform
            case "poisson": arrivals = .poisson(seed: UInt64(truncatingIfNeeded: seed))
            default: throw CLIError(.usage, "--arrivals must be uniform or poisson, got '\(arrivalsText)'")
            }
            let mode: LoadMode
            let planned: Duration
            if let users {
                guard users >= 1 else { throw CLIError(.usage, "--users must be at least 1") }
                guard let durationText else { throw CLIError(.usage, "--users needs --duration") }
                guard rate == nil, scheduleText == nil else {
                    throw CLIError(.usage, "--users (closed loop) cannot be combined with --rate or --schedule")
                }
                planned = try parseDuration(durationText)
                mode = .closed(users: users, thinkTime: try parseDuration(thinkText), duration: planned)
            } else if let scheduleText {
                guard rate == nil, durationText == nil else {
                    throw CLIError(.usage, "--schedule replaces --rate and --duration")
                }
                let schedule = try RateSchedule.parse(scheduleText, arrivals: arrivals)
                planned = schedule.duration
                mode = .open(schedule)
            } else {
                guard let rate, let durationText else {
                    throw CLIError(.usage, "give --rate and --duration, --schedule, or --users and --duration")
                }
                let schedule = RateSchedule.constant(rate, for: try parseDuration(durationText)).with(
                    arrivals: arrivals
                )
                try schedule.validate()
                planned = schedule.duration
                mode = .open(schedule)
            }
            guard connections >= 1 else { throw CLIError(.usage, "--connections must be at least 1") }
            guard maxInFlight >= 1 else { throw CLIError(.usage, "--max-in-flight must be at least 1") }

            var headers: [(name: String, value: String)] = []
            for text in headerTexts {
                guard let colon = text.firstIndex(of: ":") else {
                    throw CLIError(.usage, "--header '\(text)' must look like 'Name: value'")
                }
                headers.append(
                    (
                        String(text[..<colon]).trimmingCharacters(in: .whitespaces),
                        String(text[text.index(after: colon)...]).trimmingCharacters(in: .whitespaces)
                    )
                )
            }
            var body: [UInt8] = []
            if let bodyFile {
                guard let data = FileManager.default.contents(atPath: bodyFile) else {
                    throw CLIError(.noInput, "cannot read the body file \(bodyFile)")
                }
                body = Array(data)
                if method == nil { method = "POST" }
            }
            // Every request of this command carries the one --kind label, so that is the only kind a threshold
            // may name.
            let thresholds = try thresholdTexts.map { text throws(LoadConfigurationError) in
                try Threshold.parse(text, kinds: [kind])
            }

            let configuration = LoadEngineConfiguration(
                connectionsPerHost: connections,
                maxInFlight: maxInFlight,
                connectTimeout: try parseDuration(connectTimeoutText),
                totalTimeout: try parseDuration(timeoutText),
                httpVersion: http2 ? .http2 : .http1_1,
                caFile: caFile,
                captureBodies: false,
                libcurlTransfers: libcurlTransfers
            )
            let engine = try LoadEngine(configuration)
            if case .open(let schedule) = mode,
                let warning = schedule.capacityWarning(maxInFlight: maxInFlight, expectedLatency: .seconds(1))
            {
                if !quiet { PayStormCLI.printError("paystorm load: note: \(warning) if responses take 1s") }
            }
            if let failure = engine.probe(url: url) {
                throw CLIError(.unreachable, "target \(url) is unreachable: \(failure.error) (\(failure.detail))")
            }

            let status: StatusMode = quiet ? .quiet : (isatty(2) != 0 ? .live : .plain(every: 5))
            let recorder: LoadRecorder
            do {
                recorder = try LoadRecorder(directory: outDirectory, status: status, plannedDuration: planned)
            } catch let error as OutputFileError {
                throw CLIError(.cannotWrite, error.description)
            } catch {
                throw CLIError(.cannotWrite, "cannot create the output directory \(outDirectory ?? "")")
            }

            // SIGINT/SIGTERM stop the run; the partial outputs are still written.
            let signals = TerminationSignal.handle(on: DispatchQueue(label: "paystorm.load.signals")) { _ in
                engine.stop()
            }
            defer { signals.cancel(restoringDefaults: true) }

            let requestMethod = method ?? "GET"
            let stats = engine.run(mode) { index, _ in
                LoadRequest(id: index, kind: kind, method: requestMethod, url: url, headers: headers, body: body)
            } sink: { result in
                recorder.record(result)
            } tick: { stats in
                recorder.tick(stats)
            }
            if let failure = stats.failure {
                throw CLIError(.internalError, "the load engine could not start: \(failure)")
            }
            let summary = recorder.finish(
                stats,
                thresholds: thresholds,
                settings: [
                    "url": url, "method": requestMethod, "connections": String(connections), "arrivals": arrivalsText,
                    "seed": String(seed),
                    "maxInFlight": String(maxInFlight), "mode": describe(mode),
                    "http": configuration.httpVersion.rawValue,
                ]
            )
            if !quiet { print(render(summary)) }
            if stats.stopped { return .interrupted }
            if summary.totals.sent > 0 && summary.totals.statusClasses.isEmpty,
                let firstError = summary.totals.errors.keys.sorted().first,
                summary.totals.errors.keys.allSatisfy({ $0 == "refused" || $0 == "dns" })
            {
                throw CLIError(.unreachable, "target \(url) became unreachable: every request failed (\(firstError))")
            }
            return summary.passed ? .success : .thresholdBreached
        } catch let error as LoadConfigurationError {
            throw CLIError(.usage, error.message)
        }
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
