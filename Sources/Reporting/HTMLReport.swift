import Foundation

/// `report.html`: one self-contained page (inline CSS and SVG, no scripts, no
/// network) with the verdict, the charts and every witness.
public enum HTMLReport {
    /// Renders the page for a report.
    public static func render(_ report: RunReport) -> String {
        head(report) + reasons(report) + charts(report.timeline) + latencyTable(report.latency)
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
            <tr><th>profile</th><td>\(e(report.profile))</td><th>seed</th><td><code>\(report.seed)</code></td></tr>
            <tr><th>target</th><td>\(e(report.target))</td><th>exit code</th><td>\(report.exitCode)</td></tr>
            <tr><th>started</th><td>\(e(iso(report.startedAt)))</td><th>duration</th><td>\(String(format: "%.1f s", report.endedAt.timeIntervalSince(report.startedAt)))</td></tr>
            <tr><th>sent / intended</th><td>\(report.requests.sent) / \(report.requests.intended)</td><th>ok / errors / missed / late</th><td>\(report.requests.ok) / \(report.requests.errorCount) / \(report.requests.missed) / \(report.requests.late)</td></tr>
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

    /// Throughput and latency over the run's seconds.
    private static func charts(_ timeline: [TimelinePoint]) -> String {
        "<h2>Throughput</h2>\n"
            + chart(
                timeline,
                series: [
                    ("intended/s", "#8c959f", { Double($0.intended) }), ("ok/s", "#1a7f37", { Double($0.ok) }),
                    ("errors/s", "#cf222e", { Double($0.errors) }),
                ],
                unit: ""
            )
            + "<h2>Latency from the intended send time</h2>\n"
            + chart(
                timeline,
                series: [
                    ("p50 ms", "#0969da", { Double($0.p50Micros) / 1000 }),
                    ("p99 ms", "#bf3989", { Double($0.p99Micros) / 1000 }),
                ],
                unit: " ms"
            )
    }

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
                "<h3>\(e(v.invariant)): account <code>\(e(v.account))</code></h3>\n<p>\(e(v.summary))</p>\n<ol class=\"witness\">"
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

    /// A line chart in inline SVG: one polyline per series over the timeline's seconds.
    static func chart(
        _ points: [TimelinePoint],
        series: [(name: String, color: String, value: (TimelinePoint) -> Double)],
        unit: String
    ) -> String {
        SVGChart.render(
            series.map { s in
                SVGChart.Series(name: s.name, color: s.color, points: points.map { (Double($0.second), s.value($0)) })
            },
            unit: unit,
            xLabel: { "\(Int($0)) s" }
        )
    }
}
