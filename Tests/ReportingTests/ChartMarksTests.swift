import Foundation
import Testing

@testable import Reporting

/// What report.html's charts show besides the run's series: its violations on the time charts, and the
/// percentile plot.
struct ChartMarksTests {
    static func violation(_ invariant: String, at seconds: Double) -> Violation {
        Violation(
            invariant: invariant,
            account: "6f1c1a52-0000-4000-8000-000000000001",
            summary: "a violation",
            witness: [],
            detectedAfterSeconds: seconds,
            replay: "paystorm replay --seed 42"
        )
    }

    /// The charts of a page, each `<svg>…</svg>`, in order.
    static func charts(_ html: String) -> [String] {
        html.components(separatedBy: "<svg ").dropFirst().map { $0.components(separatedBy: "</svg>")[0] }
    }

    @Test func violationsAreMarkedOnBothTimeChartsWhereTheyWereSeenNamingTheirInvariants() throws {
        var report = ReportWriterTests.sampleReport()
        report.timeline = (0..<10).map {
            TimelinePoint(second: $0, intended: 10, ok: 10, errors: 0, p50Micros: 1000, p99Micros: 3000)
        }
        report.violations = [
            Self.violation("no-double-grant", at: 4.2), Self.violation("no-double-grant", at: 4.6),
            Self.violation("no-lost-purchase", at: 4.4), Self.violation("revocation-honored", at: 8),
        ]
        let html = HTMLReport.render(report)
        let charts = Self.charts(html)
        #expect(charts.count == 3)
        for chart in charts.prefix(2) {
            let marks = chart.components(separatedBy: "<g class=\"marker\">").dropFirst()
            #expect(marks.count == 2, "\(chart)")
            let first = try #require(marks.first)
            #expect(
                first.contains(
                    "<title>3 violations first seen at t=4.2–4.6 s: no-double-grant (2), no-lost-purchase</title>"
                )
            )
            // 4.2 s of a 9 s axis from x = 60 to 890.
            #expect(first.contains("x1=\"\(String(format: "%.1f", 60 + 830 * 4.2 / 9))\""), "\(first)")
            #expect(first.contains(">3</text>"))
            #expect(
                marks.last?.contains("<title>1 violation first seen at t=8.0 s: revocation-honored</title>") == true
            )
        }
        #expect(!charts[2].contains("class=\"marker\""))
        #expect(html.contains("<p>Dashed lines: violations, at the time a probe first saw them"))
    }

    @Test func aThousandViolationsShareAtMostAHundredLinesAndEachIsCounted() {
        var report = ReportWriterTests.sampleReport()
        report.timeline = (0..<1000).map {
            TimelinePoint(second: $0, intended: 10, ok: 10, errors: 0, p50Micros: 1000, p99Micros: 3000)
        }
        report.violations = (0..<1000).map { Self.violation("no-double-grant", at: Double($0) + 0.5) }
        report.invariants = [InvariantResult(name: "no-double-grant", status: .failed, violations: 1200)]
        let marks = ViolationMarks(report, bucketSeconds: 2)
        #expect(marks.markers.count == 100)
        #expect(marks.markers.map { Int($0.label) ?? 0 }.reduce(0, +) == 1000)
        #expect(marks.caption.contains("200 more without a witness or a time are not marked."))
        report.violations = []
        #expect(ViolationMarks(report, bucketSeconds: 2).markers.isEmpty)
        #expect(!HTMLReport.render(report).contains("Dashed lines"))
    }

    @Test func percentilesSitOnALogarithmicAxisAndEachCurveEndsAtItsMaximum() {
        let summary = LatencySummary(
            kind: "webhook",
            measure: "intended",
            count: 5000,
            micros: [
                "min": 100, "p50": 1000, "p75": 1500, "p90": 2000, "p95": 2500, "p99": 4000, "p99.9": 9000,
                "p99.99": 12000, "p99.999": 12000, "max": 12000,
            ]
        )
        let points = PercentilePlot.points(summary)
        let expected: [(Double, Double)] = [
            (0, 0.1), (log10(2), 1), (log10(4), 1.5), (1, 2), (log10(20), 2.5), (2, 4), (3, 9), (log10(5000), 12),
        ]
        #expect(points.count == expected.count)
        for (point, want) in zip(points, expected) {
            #expect(abs(point.x - want.0) < 1e-9 && abs(point.y - want.1) < 1e-9, "\(points)")
        }
        #expect((0...5).map(PercentilePlot.label) == ["0%", "90%", "99%", "99.9%", "99.99%", "99.999%"])
    }

    @Test func thePercentilePlotDrawsEachKindFromTheIntendedTimeInline() throws {
        var report = ReportWriterTests.sampleReport()
        let micros: [String: Int64] = ["min": 500, "p50": 1000, "p90": 3000, "p99": 8000, "max": 20000]
        report.latency = [
            LatencySummary(kind: "all", measure: "intended", count: 300, micros: micros),
            LatencySummary(kind: "all", measure: "service", count: 300, micros: micros),
            LatencySummary(kind: "device", measure: "intended", count: 100, micros: micros),
            LatencySummary(kind: "webhook", measure: "intended", count: 200, micros: micros),
            LatencySummary(kind: "probe", measure: "intended", count: 0, micros: [:]),
        ]
        let html = HTMLReport.render(report)
        #expect(html.contains("<h2>Latency by percentile</h2>"))
        let plot = try #require(Self.charts(html).last)
        #expect(plot.components(separatedBy: "<polyline").count == 4)
        for kind in ["all", "device", "webhook"] { #expect(plot.contains(">\(kind)</text>")) }
        #expect(!plot.contains(">probe</text>"))
        for tick in ["0%", "90%", "99%", "99.9%"] { #expect(plot.contains(">\(tick)</text>"), "\(tick)") }
        #expect(!html.contains("<img") && !html.contains("<script"))
        report.latency = []
        #expect(!HTMLReport.render(report).contains("Latency by percentile"))
    }
}
