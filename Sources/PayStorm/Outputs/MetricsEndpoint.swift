import Checking
import Foundation
import HTTPServer
import Load
import Primitives
import Reporting
import RunControl
import Simulation

/// Where `paystorm run --metrics-listen` serves its live metrics.
public struct MetricsListen: Sendable, Equatable {
    /// A numeric address to bind.
    public var host: String
    /// The port, or 0 for any free one.
    public var port: UInt16
    /// Whether the host is on loopback; any other host must be in the profile's `target.allowedHosts`.
    public var loopback: Bool

    /// Creates a listen address.
    public init(host: String, port: UInt16, loopback: Bool) {
        self.host = host
        self.port = port
        self.loopback = loopback
    }
}

/// `GET /metrics` during a run, for Prometheus and Grafana to watch a soak: OpenMetrics when the scraper's
/// `Accept` asks for it, the Prometheus text format otherwise.
///
/// It runs on the HTTP server's own threads and reads only snapshots (the recorder's, published once a
/// second and once more when it finishes, the checker's tallies under its lock, and the run's phase and
/// final figures), so a scrape never touches the engine's thread. Once the report is written the run keeps
/// serving its final values for a bounded linger, then closes the endpoint.
final class MetricsEndpoint: Sendable {
    private let server: HTTPServer
    /// The run's phase and, once its report is written, its final figures.
    let run: MetricsRunState

    /// The bound address, `HOST:PORT`.
    var address: String { server.address }

    /// Starts serving.
    /// - Throws: `RunError.unreachable` naming the address when it cannot be bound.
    init(
        listen: MetricsListen,
        snapshots: LoadSnapshots,
        checker: Checker,
        admission: ArrivalAdmission? = nil
    ) throws(RunError) {
        let run = MetricsRunState()
        self.run = run
        do {
            // One thread: a scraper asks every few seconds, and the run needs the cores.
            server = try HTTPServer(host: listen.host, port: listen.port, threads: 1, maxBodyBytes: 4096) { request in
                guard request.path == "/metrics" else {
                    return HTTPResponse(status: 404, body: Array("only GET /metrics is served\n".utf8))
                }
                guard request.method == "GET" || request.method == "HEAD" else {
                    return HTTPResponse(status: 405, headers: ["Allow": "GET, HEAD"])
                }
                let format = MetricsFormat.negotiated(accept: request.headers["accept"])
                let (tallies, violations) = checker.liveTallies()
                let text = MetricsEndpoint.render(
                    load: snapshots.latest,
                    tallies: tallies,
                    violations: violations,
                    arrivals: admission?.counts ?? (0, 0),
                    run: run.snapshot,
                    format: format
                )
                return HTTPResponse(
                    status: 200,
                    headers: ["Content-Type": format.contentType, "Vary": "Accept"],
                    body: Array(text.utf8)
                )
            }
        } catch {
            throw .unreachable("--metrics-listen: \(error)")
        }
    }

    /// Stops serving.
    func shutdown() { server.shutdown() }

    /// Serves the run's final figures (those of its written report) for `seconds`, or until `sleep` is
    /// interrupted, then stops serving: a scraper that asks every `seconds` or more often reads them once.
    func linger(final: MetricsRunState.Final, seconds: Double, sleep: (Double) -> Bool) {
        run.finish(final)
        if seconds > 0 { _ = sleep(seconds) }
        shutdown()
    }

    /// Histogram bucket bounds: microseconds and their `le` text, which OpenMetrics wants canonical (`1.0`,
    /// not `1`), as the specification asks.
    static let buckets: [(micros: Int64, le: String)] = [
        (1000, "0.001"), (2500, "0.0025"), (5000, "0.005"), (10000, "0.01"), (25000, "0.025"), (50000, "0.05"),
        (100_000, "0.1"), (250_000, "0.25"), (500_000, "0.5"), (1_000_000, "1.0"), (2_500_000, "2.5"),
        (5_000_000, "5.0"), (10_000_000, "10.0"), (30_000_000, "30.0"),
    ]

    /// The exposition: counters since the start of the run, gauges as of the recorder's last tick; `arrivals`
    /// are the schedule's arrivals the world has reached and those it dropped at the source; `run` is the run's
    /// phase and, once it is over, the verdict and violations its report states.
    static func render(
        load: LoadSnapshot,
        tallies: [Invariant: Tally],
        violations: Int,
        arrivals: (arrivals: UInt64, dropped: UInt64) = (0, 0),
        run: MetricsRunState.Snapshot = MetricsRunState.Snapshot(),
        format: MetricsFormat = .openMetrics
    ) -> String {
        var out = MetricsText(format)
        writeEngine(load.stats, to: &out)
        out.family(
            "paystorm_arrivals",
            "counter",
            "The schedule's arrivals (one action each) the world reached, admitted or dropped at the source while "
                + "PayStorm could not keep up."
        )
        out.sample("paystorm_arrivals_total", [("state", "admitted")], String(arrivals.arrivals - arrivals.dropped))
        out.sample("paystorm_arrivals_total", [("state", "dropped")], String(arrivals.dropped))
        writeRequests(load, to: &out)
        writeLatency(load, to: &out)
        writeInvariants(tallies, violations: violations, final: run.final, to: &out)
        writeRun(run, to: &out)
        out.end()
        return out.text
    }

    /// The engine's gauges (elapsed time, intended rate, in flight) and its count of late sends.
    private static func writeEngine(_ stats: LoadEngineStats, to out: inout MetricsText) {
        out.family(
            "paystorm_elapsed_seconds",
            "gauge",
            "Seconds since the run started, at the last tick.",
            unit: "seconds"
        )
        out.sample("paystorm_elapsed_seconds", [], String(format: "%.3f", stats.elapsed.seconds))
        out.family("paystorm_intended_rate", "gauge", "The schedule's intended rate now, requests per second.")
        out.sample("paystorm_intended_rate", [], String(format: "%.3f", stats.intendedRate))
        out.family("paystorm_in_flight", "gauge", "Requests in flight.")
        out.sample("paystorm_in_flight", [], String(stats.inFlight))
        out.family(
            "paystorm_late",
            "counter",
            "Requests that started later than the engine allows after their intended time."
        )
        out.sample("paystorm_late_total", [], String(stats.late))
    }

    /// The request counters by kind, and the results by kind and class.
    private static func writeRequests(_ load: LoadSnapshot, to out: inout MetricsText) {
        let kinds = load.kinds.sorted { $0.key < $1.key }
        let counters: [(String, String, KeyPath<RequestCounts, Int>)] = [
            ("paystorm_scheduled", "Requests whose intended time came (sent plus missed), by kind.", \.scheduled),
            ("paystorm_sends", "Requests that went on a connection, by kind.", \.sent),
            ("paystorm_missed", "Requests not sent because the in-flight cap was reached, by kind.", \.missed),
            ("paystorm_succeeded", "Results that succeeded as the target contract reads them, by kind.", \.ok),
            (
                "paystorm_resent",
                "Requests sent a second time after a kept-alive connection closed unanswered (the target may have "
                    + "read both copies), by kind.",
                \.resent
            ),
        ]
        for (name, help, counter) in counters {
            out.family(name, "counter", help)
            for (kind, counts) in kinds {
                out.sample("\(name)_total", [("kind", kind)], String(counts[keyPath: counter]))
            }
        }
        out.family(
            "paystorm_results",
            "counter",
            "Results by kind and class: a status class (2xx...) or a transport error (timeout, reset...)."
        )
        for (kind, counts) in kinds {
            for (name, value) in counts.statusClasses.merging(counts.errors, uniquingKeysWith: +).sorted(by: {
                $0.key < $1.key
            }) {
                out.sample("paystorm_results_total", [("kind", kind), ("class", name)], String(value))
            }
        }
    }

    /// One histogram per kind and measure, in the fixed ``buckets``.
    private static func writeLatency(_ load: LoadSnapshot, to out: inout MetricsText) {
        out.family(
            "paystorm_latency_seconds",
            "histogram",
            "Latency by kind, from the intended send time (no coordinated omission) and as service time.",
            unit: "seconds"
        )
        for kind in load.kinds.keys.sorted() {
            for (measure, histograms) in [("intended", load.latencyByKind), ("service", load.serviceByKind)] {
                let histogram = histograms[kind] ?? Histogram()
                let cumulative = histogram.cumulativeCounts(atOrBelow: buckets.map(\.micros))
                for (bucket, count) in zip(buckets, cumulative) {
                    out.sample(
                        "paystorm_latency_seconds_bucket",
                        [("kind", kind), ("measure", measure), ("le", bucket.le)],
                        String(count)
                    )
                }
                let labels = [("kind", kind), ("measure", measure)]
                out.sample("paystorm_latency_seconds_bucket", labels + [("le", "+Inf")], String(histogram.totalCount))
                out.sample("paystorm_latency_seconds_count", labels, String(histogram.totalCount))
                out.sample("paystorm_latency_seconds_sum", labels, String(format: "%.6f", histogram.sum / 1_000_000))
            }
        }
    }

    /// The checker's tallies, every invariant and outcome (zeros included), and the violations so far, by
    /// invariant and in all: the report's counts once there is one (`final`).
    private static func writeInvariants(
        _ tallies: [Invariant: Tally],
        violations: Int,
        final: MetricsRunState.Final?,
        to out: inout MetricsText
    ) {
        out.family("paystorm_invariant_checks", "counter", "Invariant checks by invariant and outcome.")
        for invariant in Invariant.allCases {
            let tally = tallies[invariant]
            let outcomes = [
                ("passed", tally?.passed ?? 0), ("failed", tally?.failed ?? 0), ("unknown", tally?.unknown ?? 0),
            ]
            for (outcome, value) in outcomes {
                out.sample(
                    "paystorm_invariant_checks_total",
                    [("invariant", invariant.rawValue), ("outcome", outcome)],
                    String(value)
                )
            }
        }
        out.family(
            "paystorm_invariant_violations",
            "counter",
            "Distinct invariant violations found so far, by invariant."
        )
        for invariant in Invariant.allCases {
            let count = final?.byInvariant[invariant.rawValue] ?? tallies[invariant]?.failed ?? 0
            out.sample("paystorm_invariant_violations_total", [("invariant", invariant.rawValue)], String(count))
        }
        out.family("paystorm_violations", "counter", "Invariant violations found so far.")
        out.sample("paystorm_violations_total", [], String(final?.violations ?? violations))
    }

    /// The run's phase (1 on the current one) and its verdict (1 on the outcome once the report is written, all
    /// 0 before).
    private static func writeRun(_ run: MetricsRunState.Snapshot, to out: inout MetricsText) {
        out.family(
            "paystorm_run_phase",
            "gauge",
            "The run's phase: 1 on the current one (finished once the report is written)."
        )
        for phase in MetricsRunState.Phase.allCases {
            out.sample("paystorm_run_phase", [("phase", phase.rawValue)], run.phase == phase ? "1" : "0")
        }
        out.family(
            "paystorm_verdict",
            "gauge",
            "The run's verdict as its report states it: 1 on the outcome, all 0 until the report is written."
        )
        for verdict in [VerdictOutcome.pass, .fail, .unknown] {
            out.sample("paystorm_verdict", [("verdict", verdict.rawValue)], run.final?.verdict == verdict ? "1" : "0")
        }
    }
}
