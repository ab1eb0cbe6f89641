import Checking
import Foundation
import HTTPServer
import Load
import Primitives
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

/// `GET /metrics` during a run, in the OpenMetrics text format, for Prometheus and Grafana to watch a soak.
///
/// It runs on the HTTP server's own threads and reads only snapshots (the recorder's, published once a
/// second, and the checker's tallies under its lock), so a scrape never touches the engine's thread.
final class MetricsEndpoint: Sendable {
    private let server: HTTPServer

    /// The bound address, `HOST:PORT`.
    var address: String { server.address }

    /// The OpenMetrics media type.
    static let contentType = "application/openmetrics-text; version=1.0.0; charset=utf-8"

    /// Starts serving.
    /// - Throws: `RunError.unreachable` naming the address when it cannot be bound.
    init(
        listen: MetricsListen,
        snapshots: LoadSnapshots,
        checker: Checker,
        admission: ArrivalAdmission? = nil
    ) throws(RunError) {
        do {
            // One thread: a scraper asks every few seconds, and the run needs the cores.
            server = try HTTPServer(host: listen.host, port: listen.port, threads: 1, maxBodyBytes: 4096) { request in
                guard request.path == "/metrics" else {
                    return HTTPResponse(status: 404, body: Array("only GET /metrics is served\n".utf8))
                }
                guard request.method == "GET" || request.method == "HEAD" else {
                    return HTTPResponse(status: 405, headers: ["Allow": "GET, HEAD"])
                }
                let (tallies, violations) = checker.liveTallies()
                let text = MetricsEndpoint.render(
                    load: snapshots.latest,
                    tallies: tallies,
                    violations: violations,
                    arrivals: admission?.counts ?? (0, 0)
                )
                return HTTPResponse(
                    status: 200,
                    headers: ["Content-Type": MetricsEndpoint.contentType],
                    body: Array(text.utf8)
                )
            }
        } catch {
            throw .unreachable("--metrics-listen: \(error)")
        }
    }

    /// Stops serving.
    func shutdown() { server.shutdown() }

    /// Histogram bucket bounds: microseconds and their `le` text, which OpenMetrics wants canonical (`1.0`,
    /// not `1`), as the specification asks.
    static let buckets: [(micros: Int64, le: String)] = [
        (1000, "0.001"), (2500, "0.0025"), (5000, "0.005"), (10000, "0.01"), (25000, "0.025"), (50000, "0.05"),
        (100_000, "0.1"), (250_000, "0.25"), (500_000, "0.5"), (1_000_000, "1.0"), (2_500_000, "2.5"),
        (5_000_000, "5.0"), (10_000_000, "10.0"), (30_000_000, "30.0"),
    ]

    /// The exposition: counters since the start of the run, gauges as of the recorder's last tick; `arrivals`
    /// are the schedule's arrivals the world has reached and those it dropped at the source.
    static func render(
        load: LoadSnapshot,
        tallies: [Invariant: Tally],
        violations: Int,
        arrivals: (arrivals: UInt64, dropped: UInt64) = (0, 0)
    ) -> String {
        var out = OpenMetricsText()
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
        writeInvariants(tallies, violations: violations, to: &out)
        out.text += "# EOF\n"
        return out.text
    }

    /// The engine's gauges (elapsed time, intended rate, in flight) and its count of late sends.
    private static func writeEngine(_ stats: LoadEngineStats, to out: inout OpenMetricsText) {
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
    private static func writeRequests(_ load: LoadSnapshot, to out: inout OpenMetricsText) {
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
    private static func writeLatency(_ load: LoadSnapshot, to out: inout OpenMetricsText) {
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

    /// The checker's tallies, every invariant and outcome (zeros included), and the violations so far.
    private static func writeInvariants(_ tallies: [Invariant: Tally], violations: Int, to out: inout OpenMetricsText) {
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
        out.family("paystorm_violations", "counter", "Invariant violations found so far.")
        out.sample("paystorm_violations_total", [], String(violations))
    }
}

/// OpenMetrics text as it is written: a family's `TYPE`, `HELP` and `UNIT` lines, then its samples.
struct OpenMetricsText {
    var text = ""

    mutating func family(_ name: String, _ type: String, _ help: String, unit: String? = nil) {
        text += "# TYPE \(name) \(type)\n# HELP \(name) \(help)\n"
        if let unit { text += "# UNIT \(name) \(unit)\n" }
    }

    mutating func sample(_ name: String, _ labels: [(String, String)], _ value: String) {
        text += name
        if !labels.isEmpty {
            text += "{" + labels.map { "\($0.0)=\"\(Self.escape($0.1))\"" }.joined(separator: ",") + "}"
        }
        text += " \(value)\n"
    }

    /// A label value with its backslashes, quotes and line feeds escaped, as the format asks.
    private static func escape(_ value: String) -> String {
        value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            .replacingOccurrences(of: "\n", with: "\\n")
    }
}
