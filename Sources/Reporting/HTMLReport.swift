import Foundation
import Primitives

/// `report.html`: one self-contained page (inline CSS and SVG, no scripts, no
/// network) with the verdict, the charts and every witness.
public enum HTMLReport {
    /// Renders the page for a report.
    public static func render(_ report: RunReport) -> String {
        head(report) + reasons(report) + charts(report) + PercentilePlot.html(report.latency)
            + latencyTable(report.latency) + errorsTable(report.requests)
            + invariantsTable(report.invariants) + thresholdsTable(report.thresholds) + faultsTable(report.faults)
            + violations(report.violations) + notes(report.notes) + "</body></html>\n"
    }

    /// The document's head and style, the verdict, and the table of the run's facts.
    private static func head(_ report: RunReport) -> String {
        let e = Markup.escape
        return """
            <!DOCTYPE html>
            <html lang="en"><head><meta charset="utf-8">
            <title>PayStorm \(e(report.profile)) seed \(report.seed): \(report.verdict.rawValue)</title>
            <style>
            body{font:14px/1.45 system-ui,sans-serif;margin:2em auto;max-width:72em;color:#222}
            h1 .pass{color:#1a7f37}h1 .fail{color:#cf222e}h1 .unknown{color:#9a6700}
            table{border-collapse:collapse;margin:.5em 0 1.5em}td,th{border:1px solid #ccc;padding:.25em .6em;text-align:left}
            th{background:#f4f4f4}td.num{text-align:right;font-variant-numeric:tabular-nums}
            .witness li{margin:.15em 0}code{background:#f4f4f4;padding:0 .3em}
            svg text{font:11px sans-serif;fill:#444}
            </style></head><body>
            <h1>PayStorm: <span class="\(report.verdict.rawValue)">\(report.verdict.rawValue.uppercased())</span></h1>
            <table>
            <tr><th>profile</th><td>\(e(report.profile))</td><th>seed</th><td><code>\(report.seed)</code>\(report.namespace.map { ", namespace <code>\(e($0))</code>" } ?? "")</td></tr>
            <tr><th>target</th><td>\(e(report.target))</td><th>exit code</th><td>\(report.exitCode)</td></tr>
            <tr><th>started</th><td>\(e(iso(report.startedAt)))</td><th>duration</th><td>\(String(format: "%.1f s", report.endedAt.timeIntervalSince(report.startedAt)))</td></tr>
            <tr><th>sent / intended</th><td>\(report.requests.counts.sent) / \(report.requests.counts.scheduled)</td><th>ok / errors / missed / late</th><td>\(report.requests.counts.ok) / \(report.requests.errorCount) / \(report.requests.counts.missed) / \(report.requests.late)</td></tr>
            <tr><th>invariants</th><td>\(report.invariantVerdict.rawValue)</td><th>interrupted</th><td>\(report.interrupted ? "yes" : "no")</td></tr>
            <tr><th>PayStorm</th><td colspan="3">\(e(report.toolVersion))</td></tr>
            </table>

            """
    }

    /// Why the verdict is what it is, when there is a reason.
    private static func reasons(_ report: RunReport) -> String {
        guard !report.reasons.isEmpty else { return "" }
        return "<ul class=\"reasons\">" + report.reasons.map { "<li>\(Markup.escape($0))</li>" }.joined() + "</ul>\n"
    }

    /// Throughput and latency over the run's seconds; a run longer than ``chartPoints`` seconds is drawn in buckets
    /// of several seconds (see ``ChartPoint/buckets(_:seconds:)``), said under each heading. Violations are marked
    /// on both at the time they were first seen.
    private static func charts(_ report: RunReport) -> String {
        let timeline = report.timeline
        let span = (timeline.map(\.second).max() ?? 0) + 1
        let width = max(1, (span + chartPoints - 1) / chartPoints)
        let points = ChartPoint.buckets(timeline, seconds: width)
        let caption =
            width > 1
            ? "<p>Each point is \(width) s: per-second rates averaged over it, latency its worst second's.</p>\n" : ""
        let marks = ViolationMarks(report, bucketSeconds: width)
        return "<h2>Throughput</h2>\n" + caption
            + chart(
                points,
                series: [
                    ("intended/s", "#8c959f", \.intended), ("ok/s", "#1a7f37", \.ok), ("errors/s", "#cf222e", \.errors),
                ],
                unit: "",
                markers: marks.markers
            ) + marks.caption
            + "<h2>Latency from the intended send time</h2>\n" + caption
            + chart(
                points,
                series: [("p50 ms", "#0969da", \.p50), ("p99 ms", "#bf3989", \.p99)],
                unit: " ms",
                markers: marks.markers
            )
    }

    /// The most points a chart draws: one a second up to this many seconds (about one per pixel of its width);
    /// a 12-hour soak's 43,200 seconds would otherwise make megabytes of polyline that no eye can read.
    static let chartPoints = 720

    /// Percentiles in milliseconds, one row per kind and measure.
    private static func latencyTable(_ latency: [LatencySummary]) -> String {
        let e = Markup.escape
        var html = "<h2>Latency</h2>\n<table><tr><th>kind</th><th>measure</th><th>count</th>"
        let keys = ["p50", "p90", "p99", "p99.9", "max"]
        html += keys.map { "<th>\($0) (ms)</th>" }.joined() + "</tr>\n"
        for l in latency {
            html += "<tr><td>\(e(l.kind))</td><td>\(e(l.measure))</td><td class=\"num\">\(l.count)</td>"
            html +=
                keys.map { key in
                    "<td class=\"num\">\(l.micros[key].map { String(format: "%.3f", Double($0) / 1000) } ?? "")</td>"
                }.joined() + "</tr>\n"
        }
        return html + "</table>\n"
    }

    private static func invariantsTable(_ invariants: [InvariantResult]) -> String {
        let e = Markup.escape
        var html =
            "<h2>Invariants</h2>\n<table><tr><th>invariant</th><th>status</th><th>violations</th><th>note</th></tr>\n"
        for i in invariants {
            html +=
                "<tr><td>\(e(i.name))</td><td>\(i.status.rawValue)</td><td class=\"num\">\(i.violations)</td><td>\(e(i.reason ?? ""))</td></tr>\n"
        }
        return html + "</table>\n"
    }

    private static func thresholdsTable(_ thresholds: [ThresholdResult]) -> String {
        guard !thresholds.isEmpty else { return "" }
        let e = Markup.escape
        var html = "<h2>Thresholds</h2>\n<table><tr><th>threshold</th><th>observed</th><th>result</th></tr>\n"
        for t in thresholds {
            html += "<tr><td><code>\(e(t.expression))</code></td><td>\(e(t.observed))</td><td>\(t.status)</td></tr>\n"
        }
        return html + "</table>\n"
    }

    private static func faultsTable(_ faults: [String: Int]) -> String {
        guard !faults.isEmpty else { return "" }
        var html = "<h2>Faults injected</h2>\n<table><tr><th>fault</th><th>count</th></tr>\n"
        for (name, count) in faults.sorted(by: { $0.key < $1.key }) {
            html += "<tr><td>\(Markup.escape(name))</td><td class=\"num\">\(count)</td></tr>\n"
        }
        return html + "</table>\n"
    }

    /// Each violation with its witness and replay line; past 200 the page points to `violations.jsonl`, so it
    /// stays readable.
    private static func violations(_ violations: [Violation]) -> String {
        let e = Markup.escape
        var html = "<h2>Violations (\(violations.count))</h2>\n"
        for v in violations.prefix(200) {
            html +=
                "<h3>\(e(v.invariant)): \(v.account.isEmpty ? "the target" : "account <code>\(e(v.account))</code>")</h3>\n"
                + "<p>\(e(v.summary))</p>\n<ol class=\"witness\">"
            html +=
                v.witness.map { "<li>\(e($0))</li>" }.joined() + "</ol>\n<p>replay: <code>\(e(v.replay))</code></p>\n"
        }
        if violations.count > 200 {
            html += "<p>\(violations.count - 200) more in <code>violations.jsonl</code>.</p>\n"
        }
        return html
    }

    private static func notes(_ notes: [String]) -> String {
        guard !notes.isEmpty else { return "" }
        return "<h2>Notes</h2>\n<ul>" + notes.map { "<li>\(Markup.escape($0))</li>" }.joined() + "</ul>\n"
    }

    private static func iso(_ date: Date) -> String {
        ISO8601DateFormatter().string(from: date)
    }

    /// A line chart in inline SVG: one polyline per series over the chart points' seconds.
    static func chart(
        _ points: [ChartPoint],
        series: [(name: String, color: String, value: KeyPath<ChartPoint, Double>)],
        unit: String,
        markers: [SVGChart.Marker] = []
    ) -> String {
        SVGChart.render(
            series.map { s in
                SVGChart.Series(name: s.name, color: s.color, points: points.map { ($0.second, $0[keyPath: s.value]) })
            },
            unit: unit,
            xLabel: { "\(Int($0)) s" },
            markers: markers
        )
    }
}

/// One point of the run report's charts: a second of the timeline, or a bucket of several seconds.
struct ChartPoint {
    /// The first second it covers.
    var second: Double
    /// Sends the schedule asked for, per second.
    var intended: Double
    /// Successful responses per second.
    var ok: Double
    /// Failed responses per second.
    var errors: Double
    /// p50 latency from the intended time, ms.
    var p50: Double
    /// p99 latency from the intended time, ms.
    var p99: Double

    /// The timeline in buckets of `seconds`: rates are the bucket's per-second means (in fractions: 3 errors in
    /// a 60-second bucket draw as 0.05/s, never as none), and each latency is the bucket's worst second, so a
    /// one-second stall is never averaged away. A second missing from the timeline counts as one with nothing.
    static func buckets(_ timeline: [TimelinePoint], seconds: Int) -> [ChartPoint] {
        var buckets: [Int: ChartPoint] = [:]
        for point in timeline {
            let start = point.second / seconds * seconds
            var bucket =
                buckets[start] ?? ChartPoint(second: Double(start), intended: 0, ok: 0, errors: 0, p50: 0, p99: 0)
            // Totals first (whole numbers, exact in a Double), divided once below.
            bucket.intended += Double(point.intended)
            bucket.ok += Double(point.ok)
            bucket.errors += Double(point.errors)
            bucket.p50 = max(bucket.p50, Double(point.p50Micros) / 1000)
            bucket.p99 = max(bucket.p99, Double(point.p99Micros) / 1000)
            buckets[start] = bucket
        }
        return buckets.values.sorted { $0.second < $1.second }.map { total in
            var mean = total
            mean.intended /= Double(seconds)
            mean.ok /= Double(seconds)
            mean.errors /= Double(seconds)
            return mean
        }
    }
}
