import Primitives
import Testing

@testable import Load

struct ThresholdTests {
    @Test(arguments: [
        ("p99 < 250ms", nil, false, Threshold.Metric.percentile(99), Threshold.Comparison.less, 250_000.0),
        ("webhook.p99.9 <= 1s", "webhook", false, .percentile(99.9), .lessOrEqual, 1_000_000),
        ("service.p50<2ms", nil, true, .percentile(50), .less, 2000),
        ("device.service.max < 3s", "device", true, .max, .less, 3_000_000),
        ("errorRate < 0.1%", nil, false, .errorRate, .less, 0.001),
        ("errorRate <= 0.05", nil, false, .errorRate, .lessOrEqual, 0.05),
        ("missed == 0", nil, false, .missed, .equal, 0),
        ("rate >= 450", nil, false, .rate, .greaterOrEqual, 450),
    ])
    func parsesThresholds(
        text: String,
        kind: String?,
        service: Bool,
        metric: Threshold.Metric,
        comparison: Threshold.Comparison,
        bound: Double
    ) throws {
        let threshold = try Threshold.parse(text)
        #expect(threshold.kind == kind)
        #expect(threshold.service == service)
        #expect(threshold.metric == metric)
        #expect(threshold.comparison == comparison)
        #expect(abs(threshold.bound - bound) < 1e-9)
    }

    @Test(arguments: [
        "p99 250ms", "p99 < 250", "p101 < 1s", "latency < 1s", "missed == many", "service.missed == 0",
        "errorRate < x%",
    ])
    func rejectsBadThresholds(text: String) {
        #expect(throws: LoadConfigurationError.self) { try Threshold.parse(text) }
    }

    @Test(arguments: ["webhok.p99 < 1us", "refund.p99 < 1us", "refund.errorRate < 1%"])
    func rejectsAKindTheCommandDoesNotRecord(text: String) {
        // Before kinds were checked these parsed, were evaluated on empty figures and always held.
        let error = #expect(throws: LoadConfigurationError.self) {
            try Threshold.parse(text, kinds: ["webhook", "device"])
        }
        #expect(error?.message.contains("unknown kind") == true)
        #expect(error?.message.contains("webhook, device") == true, "\(String(describing: error))")
    }

    @Test(arguments: ["webhook.p99 < 1s", "device.service.max < 3s", "all.errorRate < 1%", "p99 < 1s"])
    func acceptsTheKindsTheCommandRecords(text: String) throws {
        _ = try Threshold.parse(text, kinds: ["webhook", "device"])
    }

    @Test(arguments: [
        ("errorRate < 150%", "errorRate is from 0% to 100%, so a bound of 150.0% decides nothing"),
        ("errorRate < -1%", "errorRate is from 0% to 100%"),
        ("errorRate <= 100%", "it always holds: errorRate is from 0% to 100%"),
        ("missed == 0.5", "it never holds: missed is a whole number from 0"),
        ("errors != 1.5", "it always holds"),
        ("requests >= 0", "it always holds"),
        ("p99 < 0ms", "it never holds: p99 is from 0"),
        ("rate > -3", "rate is from 0, so a bound of -3.0 decides nothing"),
    ])
    func refusesAThresholdThatCannotDecide(text: String, reason: String) {
        let error = #expect(throws: LoadConfigurationError.self) { try Threshold.parse(text) }
        #expect(error?.message.hasPrefix("threshold '\(text)': \(reason)") == true, "\(String(describing: error))")
    }

    @Test(arguments: ["errorRate < 100%", "errorRate > 0%", "missed == 0", "errors < 0.5", "requests > 0", "p99 > 0ms"])
    func acceptsABoundOnTheEdgeThatStillDecides(text: String) throws {
        _ = try Threshold.parse(text)
    }

    @Test(arguments: ["p99 <> 500ms", "p99 =< 500ms", "p99 <== 1s", "errors >! 1"])
    func namesAMisspelledOperator(text: String) {
        let error = #expect(throws: LoadConfigurationError.self) { try Threshold.parse(text) }
        #expect(
            error?.message.contains("is not an operator (<, <=, >, >=, ==, !=)") == true,
            "\(String(describing: error))"
        )
        #expect(error?.message.contains("is not a duration") == false)
    }

    @Test func refusesLatePerKind() {
        // `late` is counted for the whole run only, so a per-kind bound would always compare 0.
        #expect(throws: LoadConfigurationError.self) { try Threshold.parse("webhook.late == 0") }
        #expect(throws: Never.self) { try Threshold.parse("late == 0") }
    }

    @Test func evaluatesOnFigures() throws {
        var latency = Histogram()
        for value in Int64(1)...1000 { latency.record(value * 1000) }  // 1 ms … 1 s
        var counts = RequestCounts()
        counts.scheduled = 1000
        counts.sent = 1000
        counts.ok = 990
        counts.missed = 0
        let metrics = ThresholdMetrics(
            latency: ["all": latency],
            service: ["all": latency],
            counts: ["all": counts],
            late: 2,
            durationSeconds: 2
        )
        #expect(try Threshold.parse("p50 < 600ms").evaluate(metrics).passed)
        #expect(!(try Threshold.parse("p99 < 250ms").evaluate(metrics).passed))
        #expect(!(try Threshold.parse("errorRate < 0.1%").evaluate(metrics).passed))
        #expect(try Threshold.parse("errorRate <= 1%").evaluate(metrics).passed)
        #expect(try Threshold.parse("missed == 0").evaluate(metrics).passed)
        #expect(!(try Threshold.parse("late == 0").evaluate(metrics).passed))
        #expect(try Threshold.parse("rate >= 500").evaluate(metrics).passed)
        #expect(try Threshold.parse("webhook.requests == 0").evaluate(metrics).passed)
    }
}
