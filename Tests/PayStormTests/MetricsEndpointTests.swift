import Checking
import Foundation
import Load
import Primitives
import Reporting
import Testing

@testable import PayStorm

/// `GET /metrics`: the OpenMetrics and Prometheus text expositions of one snapshot, every family in its order,
/// label values escaped, and the format each `Accept` gets. (`Tests/Metrics/run.sh` parses live ones with
/// `prometheus_client`'s parsers, up to the final values.)
struct MetricsEndpointTests {
    static func snapshot() -> LoadSnapshot {
        var load = LoadSnapshots().latest
        load.stats.elapsed = .milliseconds(12_345)
        load.stats.intendedRate = 12.5
        load.stats.inFlight = 3
        load.stats.late = 2
        var webhook = RequestCounts()
        webhook.scheduled = 10
        webhook.sent = 9
        webhook.ok = 7
        webhook.statusClasses = ["2xx": 7, "5xx": 1]
        webhook.errors = ["timeout": 1]
        webhook.missed = 1
        webhook.resent = 2
        // One kind, named so that its label value needs every escape.
        let kind = "web\"hook\\\n"
        load.kinds = [kind: webhook]
        var latency = Histogram()
        for micros: Int64 in [800, 3_000, 2_000_000] { latency.record(micros) }
        var service = Histogram()
        service.record(500)
        load.latencyByKind = [kind: latency]
        load.serviceByKind = [kind: service]
        return load
    }

    @Test func rendersEveryFamilyInOrder() throws {
        let tally = try JSONDecoder().decode(Tally.self, from: Data(#"{"passed":3,"failed":1,"unknown":2}"#.utf8))
        let text = MetricsEndpoint.render(
            load: Self.snapshot(),
            tallies: [.noDoubleGrant: tally],
            violations: 1,
            arrivals: (arrivals: 40, dropped: 15),
            run: MetricsRunState.Snapshot(phase: .play)
        )
        #expect(text == Self.expected)
    }

    /// Without an `Accept` that names OpenMetrics (no header, `*/*`, `text/plain`, or OpenMetrics refused
    /// with q=0) the endpoint answers in the Prometheus text format; Prometheus' own header gets OpenMetrics.
    @Test func negotiatesOpenMetricsOnlyWhenAskedFor() {
        let prometheus =
            "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,"
            + "text/plain;version=0.0.4;q=0.5,*/*;q=0.1"
        #expect(MetricsFormat.negotiated(accept: prometheus) == .openMetrics)
        #expect(MetricsFormat.negotiated(accept: "Application/OpenMetrics-Text; q=0.3") == .openMetrics)
        for accept in [nil, "*/*", "text/plain", "text/plain;version=0.0.4", "application/openmetrics-text;q=0"] {
            #expect(MetricsFormat.negotiated(accept: accept) == .prometheus, "\(accept ?? "none")")
        }
        #expect(MetricsFormat.prometheus.contentType == "text/plain; version=0.0.4; charset=utf-8")
    }

    /// The Prometheus text format names a counter by its `_total` samples in `TYPE` and `HELP` (else the
    /// classic parser reads them as untyped), declares no unit and has no `# EOF`.
    @Test func prometheusTextNamesCountersByTheirSamples() {
        let text = MetricsEndpoint.render(load: Self.snapshot(), tallies: [:], violations: 0, format: .prometheus)
        #expect(text.contains("# HELP paystorm_sends_total Requests that went on a connection, by kind.\n"))
        #expect(text.contains("# TYPE paystorm_sends_total counter\npaystorm_sends_total{"))
        #expect(text.contains("# TYPE paystorm_violations_total counter\npaystorm_violations_total 0\n"))
        #expect(text.contains("# TYPE paystorm_latency_seconds histogram\npaystorm_latency_seconds_bucket{"))
        #expect(text.contains("# TYPE paystorm_in_flight gauge\npaystorm_in_flight 3\n"))
        #expect(!text.contains("# UNIT") && !text.contains("# EOF"))
        #expect(!text.contains("# TYPE paystorm_sends counter"))
    }

    /// Once the report is written the endpoint serves its figures, not the checker's live ones: the verdict,
    /// the violations in all and by invariant, and the phase `finished`.
    @Test func servesTheReportsFiguresOnceFinished() {
        let final = MetricsRunState.Final(
            verdict: .fail,
            violations: 305,
            byInvariant: ["no-double-grant": 300, "revocation-honored": 5]
        )
        let state = MetricsRunState()
        state.enter(.probe)
        state.finish(final)
        let text = MetricsEndpoint.render(load: Self.snapshot(), tallies: [:], violations: 34, run: state.snapshot)
        #expect(text.contains("\npaystorm_violations_total 305\n"))
        #expect(text.contains("\npaystorm_invariant_violations_total{invariant=\"no-double-grant\"} 300\n"))
        #expect(text.contains("\npaystorm_invariant_violations_total{invariant=\"revocation-honored\"} 5\n"))
        #expect(text.contains("\npaystorm_verdict{verdict=\"fail\"} 1\npaystorm_verdict{verdict=\"unknown\"} 0\n"))
        #expect(text.contains("\npaystorm_run_phase{phase=\"probe\"} 0\n"))
        #expect(text.contains("\npaystorm_run_phase{phase=\"finished\"} 1\n"))
    }

    static let expected = #"""
        # TYPE paystorm_elapsed_seconds gauge
        # HELP paystorm_elapsed_seconds Seconds since the run started, at the last tick.
        # UNIT paystorm_elapsed_seconds seconds
        paystorm_elapsed_seconds 12.345
        # TYPE paystorm_intended_rate gauge
        # HELP paystorm_intended_rate The schedule's intended rate now, requests per second.
        paystorm_intended_rate 12.500
        # TYPE paystorm_in_flight gauge
        # HELP paystorm_in_flight Requests in flight.
        paystorm_in_flight 3
        # TYPE paystorm_late counter
        # HELP paystorm_late Requests that started later than the engine allows after their intended time.
        paystorm_late_total 2
        # TYPE paystorm_arrivals counter
        # HELP paystorm_arrivals The schedule's arrivals (one action each) the world reached, admitted or dropped at the source while PayStorm could not keep up.
        paystorm_arrivals_total{state="admitted"} 25
        paystorm_arrivals_total{state="dropped"} 15
        # TYPE paystorm_scheduled counter
        # HELP paystorm_scheduled Requests whose intended time came (sent plus missed), by kind.
        paystorm_scheduled_total{kind="web\"hook\\\n"} 10
        # TYPE paystorm_sends counter
        # HELP paystorm_sends Requests that went on a connection, by kind.
        paystorm_sends_total{kind="web\"hook\\\n"} 9
        # TYPE paystorm_missed counter
        # HELP paystorm_missed Requests not sent because the in-flight cap was reached, by kind.
        paystorm_missed_total{kind="web\"hook\\\n"} 1
        # TYPE paystorm_succeeded counter
        # HELP paystorm_succeeded Results that succeeded as the target contract reads them, by kind.
        paystorm_succeeded_total{kind="web\"hook\\\n"} 7
        # TYPE paystorm_resent counter
        # HELP paystorm_resent Requests sent a second time after a kept-alive connection closed unanswered (the target may have read both copies), by kind.
        paystorm_resent_total{kind="web\"hook\\\n"} 2
        # TYPE paystorm_results counter
        # HELP paystorm_results Results by kind and class: a status class (2xx...) or a transport error (timeout, reset...).
        paystorm_results_total{kind="web\"hook\\\n",class="2xx"} 7
        paystorm_results_total{kind="web\"hook\\\n",class="5xx"} 1
        paystorm_results_total{kind="web\"hook\\\n",class="timeout"} 1
        # TYPE paystorm_latency_seconds histogram
        # HELP paystorm_latency_seconds Latency by kind, from the intended send time (no coordinated omission) and as service time.
        # UNIT paystorm_latency_seconds seconds
        paystorm_latency_seconds_bucket{kind="web\"hook\\\n",measure="intended",le="0.001"} 1
        paystorm_latency_seconds_bucket{kind="web\"hook\\\n",measure="intended",le="0.0025"} 1
        paystorm_latency_seconds_bucket{kind="web\"hook\\\n",measure="intended",le="0.005"} 2
        paystorm_latency_seconds_bucket{kind="web\"hook\\\n",measure="intended",le="0.01"} 2
        paystorm_latency_seconds_bucket{kind="web\"hook\\\n",measure="intended",le="0.025"} 2
        paystorm_latency_seconds_bucket{kind="web\"hook\\\n",measure="intended",le="0.05"} 2
        paystorm_latency_seconds_bucket{kind="web\"hook\\\n",measure="intended",le="0.1"} 2
        paystorm_latency_seconds_bucket{kind="web\"hook\\\n",measure="intended",le="0.25"} 2
        paystorm_latency_seconds_bucket{kind="web\"hook\\\n",measure="intended",le="0.5"} 2
        paystorm_latency_seconds_bucket{kind="web\"hook\\\n",measure="intended",le="1.0"} 2
        paystorm_latency_seconds_bucket{kind="web\"hook\\\n",measure="intended",le="2.5"} 3
        paystorm_latency_seconds_bucket{kind="web\"hook\\\n",measure="intended",le="5.0"} 3
        paystorm_latency_seconds_bucket{kind="web\"hook\\\n",measure="intended",le="10.0"} 3
        paystorm_latency_seconds_bucket{kind="web\"hook\\\n",measure="intended",le="30.0"} 3
        paystorm_latency_seconds_bucket{kind="web\"hook\\\n",measure="intended",le="+Inf"} 3
        paystorm_latency_seconds_count{kind="web\"hook\\\n",measure="intended"} 3
        paystorm_latency_seconds_sum{kind="web\"hook\\\n",measure="intended"} 2.003800
        paystorm_latency_seconds_bucket{kind="web\"hook\\\n",measure="service",le="0.001"} 1
        paystorm_latency_seconds_bucket{kind="web\"hook\\\n",measure="service",le="0.0025"} 1
        paystorm_latency_seconds_bucket{kind="web\"hook\\\n",measure="service",le="0.005"} 1
        paystorm_latency_seconds_bucket{kind="web\"hook\\\n",measure="service",le="0.01"} 1
        paystorm_latency_seconds_bucket{kind="web\"hook\\\n",measure="service",le="0.025"} 1
        paystorm_latency_seconds_bucket{kind="web\"hook\\\n",measure="service",le="0.05"} 1
        paystorm_latency_seconds_bucket{kind="web\"hook\\\n",measure="service",le="0.1"} 1
        paystorm_latency_seconds_bucket{kind="web\"hook\\\n",measure="service",le="0.25"} 1
        paystorm_latency_seconds_bucket{kind="web\"hook\\\n",measure="service",le="0.5"} 1
        paystorm_latency_seconds_bucket{kind="web\"hook\\\n",measure="service",le="1.0"} 1
        paystorm_latency_seconds_bucket{kind="web\"hook\\\n",measure="service",le="2.5"} 1
        paystorm_latency_seconds_bucket{kind="web\"hook\\\n",measure="service",le="5.0"} 1
        paystorm_latency_seconds_bucket{kind="web\"hook\\\n",measure="service",le="10.0"} 1
        paystorm_latency_seconds_bucket{kind="web\"hook\\\n",measure="service",le="30.0"} 1
        paystorm_latency_seconds_bucket{kind="web\"hook\\\n",measure="service",le="+Inf"} 1
        paystorm_latency_seconds_count{kind="web\"hook\\\n",measure="service"} 1
        paystorm_latency_seconds_sum{kind="web\"hook\\\n",measure="service"} 0.000500
        # TYPE paystorm_invariant_checks counter
        # HELP paystorm_invariant_checks Invariant checks by invariant and outcome.
        paystorm_invariant_checks_total{invariant="no-double-grant",outcome="passed"} 3
        paystorm_invariant_checks_total{invariant="no-double-grant",outcome="failed"} 1
        paystorm_invariant_checks_total{invariant="no-double-grant",outcome="unknown"} 2
        paystorm_invariant_checks_total{invariant="no-unlock-without-verified-purchase",outcome="passed"} 0
        paystorm_invariant_checks_total{invariant="no-unlock-without-verified-purchase",outcome="failed"} 0
        paystorm_invariant_checks_total{invariant="no-unlock-without-verified-purchase",outcome="unknown"} 0
        paystorm_invariant_checks_total{invariant="revocation-honored",outcome="passed"} 0
        paystorm_invariant_checks_total{invariant="revocation-honored",outcome="failed"} 0
        paystorm_invariant_checks_total{invariant="revocation-honored",outcome="unknown"} 0
        paystorm_invariant_checks_total{invariant="no-double-refund",outcome="passed"} 0
        paystorm_invariant_checks_total{invariant="no-double-refund",outcome="failed"} 0
        paystorm_invariant_checks_total{invariant="no-double-refund",outcome="unknown"} 0
        paystorm_invariant_checks_total{invariant="no-lost-purchase",outcome="passed"} 0
        paystorm_invariant_checks_total{invariant="no-lost-purchase",outcome="failed"} 0
        paystorm_invariant_checks_total{invariant="no-lost-purchase",outcome="unknown"} 0
        paystorm_invariant_checks_total{invariant="no-lost-notification",outcome="passed"} 0
        paystorm_invariant_checks_total{invariant="no-lost-notification",outcome="failed"} 0
        paystorm_invariant_checks_total{invariant="no-lost-notification",outcome="unknown"} 0
        paystorm_invariant_checks_total{invariant="no-stale-regression",outcome="passed"} 0
        paystorm_invariant_checks_total{invariant="no-stale-regression",outcome="failed"} 0
        paystorm_invariant_checks_total{invariant="no-stale-regression",outcome="unknown"} 0
        paystorm_invariant_checks_total{invariant="subscription-state",outcome="passed"} 0
        paystorm_invariant_checks_total{invariant="subscription-state",outcome="failed"} 0
        paystorm_invariant_checks_total{invariant="subscription-state",outcome="unknown"} 0
        paystorm_invariant_checks_total{invariant="target-recovers",outcome="passed"} 0
        paystorm_invariant_checks_total{invariant="target-recovers",outcome="failed"} 0
        paystorm_invariant_checks_total{invariant="target-recovers",outcome="unknown"} 0
        # TYPE paystorm_invariant_violations counter
        # HELP paystorm_invariant_violations Distinct invariant violations found so far, by invariant.
        paystorm_invariant_violations_total{invariant="no-double-grant"} 1
        paystorm_invariant_violations_total{invariant="no-unlock-without-verified-purchase"} 0
        paystorm_invariant_violations_total{invariant="revocation-honored"} 0
        paystorm_invariant_violations_total{invariant="no-double-refund"} 0
        paystorm_invariant_violations_total{invariant="no-lost-purchase"} 0
        paystorm_invariant_violations_total{invariant="no-lost-notification"} 0
        paystorm_invariant_violations_total{invariant="no-stale-regression"} 0
        paystorm_invariant_violations_total{invariant="subscription-state"} 0
        paystorm_invariant_violations_total{invariant="target-recovers"} 0
        # TYPE paystorm_violations counter
        # HELP paystorm_violations Invariant violations found so far.
        paystorm_violations_total 1
        # TYPE paystorm_run_phase gauge
        # HELP paystorm_run_phase The run's phase: 1 on the current one (finished once the report is written).
        paystorm_run_phase{phase="prepare"} 0
        paystorm_run_phase{phase="play"} 1
        paystorm_run_phase{phase="settle"} 0
        paystorm_run_phase{phase="probe"} 0
        paystorm_run_phase{phase="report"} 0
        paystorm_run_phase{phase="finished"} 0
        # TYPE paystorm_verdict gauge
        # HELP paystorm_verdict The run's verdict as its report states it: 1 on the outcome, all 0 until the report is written.
        paystorm_verdict{verdict="pass"} 0
        paystorm_verdict{verdict="fail"} 0
        paystorm_verdict{verdict="unknown"} 0
        # EOF

        """#
}
