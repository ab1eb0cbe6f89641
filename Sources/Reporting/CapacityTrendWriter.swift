public import Foundation

/// Writes `trend.csv` and `trend.html` from a ``CapacityTrend``.
public enum CapacityTrendWriter {
    /// The files ``writeAll(_:verdict:drop:to:)`` produces.
    public static let fileNames = ["trend.csv", "trend.html"]

    /// Writes every file into `folder`.
    /// - Throws: `ReportError.cannotWrite` naming the first file that failed.
    public static func writeAll(
        _ trend: CapacityTrend,
        verdict: CapacityTrend.Verdict,
        drop: Double,
        to folder: URL
    ) throws(ReportError) {
        let texts = [csv(trend), html(trend, verdict: verdict, drop: drop)]
        try CapacityWriter.write(zip(fileNames, texts), to: folder)
    }

    /// `trend.csv`: a row per night, oldest first; the knee in actions/s, λ and the ceiling in deliveries/s,
    /// the p99 at the knee in µs; empty where a night has no fit or no knee step.
    public static func csv(_ trend: CapacityTrend) -> String {
        var text = "date,label,outcome,knee,lambda,sigma,kappa,usl_ceiling,p99_at_knee_us,folder\n"
        for night in trend.nights {
            let fit = [night.usl?.lambda, night.usl?.sigma, night.usl?.kappa, night.uslCeiling]
            var row = [stamp(night.date), field(night.label), night.outcome.rawValue, number(night.knee)]
            row += fit.map { $0.map(number) ?? "" }
            row += [night.p99AtKnee.map(String.init) ?? "", field(night.folder)]
            text += row.joined(separator: ",") + "\n"
        }
        return text
    }

    /// `trend.html`: the knee and the p99 at it over the nights, the verdict and a table; self-contained.
    public static func html(_ trend: CapacityTrend, verdict: CapacityTrend.Verdict, drop: Double) -> String {
        let e = Markup.escape
        let color = verdict.dropped ? "#cf222e" : "#1a7f37"
        var html = """
            <!DOCTYPE html>
            <html lang="en"><head><meta charset="utf-8">
            <title>PayStorm capacity trend</title>
            \(CapacityWriter.style)</head><body>
            <h1>PayStorm capacity trend</h1>
            <p><strong style="color:\(color)">\(e(verdict.sentence))</strong></p>

            """
        html += "<h2>Knee (sustainable rate) by day</h2>\n" + kneeChart(trend, verdict: verdict, drop: drop)
        html += "<h2>p99 at the knee by day</h2>\n" + latencyChart(trend)
        return html + table(trend) + "</body></html>\n"
    }

    /// The knee against days since the first night, with the median and the drop limit as level lines.
    private static func kneeChart(_ trend: CapacityTrend, verdict: CapacityTrend.Verdict, drop: Double) -> String {
        let at = trend.nights.map { days($0.date, since: trend.nights.first?.date) }
        var series: [SVGChart.Series] = [
            .init(name: "knee actions/s", color: "#1a7f37", points: Array(zip(at, trend.nights.map(\.knee))))
        ]
        // The compared nights' median and the level below which the latest knee counts as dropped.
        if let median = verdict.median, let last = at.last {
            let first = at[at.count - 1 - verdict.compared]
            series.append(.init(name: "median", color: "#8c959f", points: [(first, median), (last, median)]))
            let floor = median * (1 - drop)
            series.append(.init(name: "drop limit", color: "#cf222e", points: [(first, floor), (last, floor)]))
        }
        return SVGChart.render(series, unit: "/s", xLabel: { dayLabel($0, trend) }, dots: true)
    }

    /// The p99 at each night's knee step, ms.
    private static func latencyChart(_ trend: CapacityTrend) -> String {
        let first = trend.nights.first?.date
        let points = trend.nights.compactMap { night in
            night.p99AtKnee.map { (x: days(night.date, since: first), y: Double($0) / 1000) }
        }
        return SVGChart.render(
            [.init(name: "p99 ms at the knee", color: "#bf3989", points: points)],
            unit: " ms",
            xLabel: { dayLabel($0, trend) },
            dots: true
        )
    }

    private static func table(_ trend: CapacityTrend) -> String {
        let e = Markup.escape
        var html = "<h2>Nights</h2>\n<table><tr><th>date</th><th>label</th><th>outcome</th><th>knee actions/s</th>"
        html += "<th>λ</th><th>σ</th><th>κ</th><th>USL ceiling/s</th><th>p99 ms at the knee</th></tr>\n"
        for night in trend.nights.reversed() {
            let fit = [night.usl?.lambda, night.usl?.sigma, night.usl?.kappa].map {
                $0.map { String(format: "%.4g", $0) } ?? ""
            }
            let cells =
                [CapacityReport.rate(night.knee)] + fit + [
                    night.uslCeiling.map(CapacityReport.rate) ?? "",
                    night.p99AtKnee.map { String(format: "%.1f", Double($0) / 1000) } ?? "",
                ]
            html += "<tr><td>\(e(stamp(night.date)))</td><td>\(e(night.label))</td><td>\(night.outcome.rawValue)</td>"
            html += cells.map { "<td class=\"num\">\(e($0))</td>" }.joined() + "</tr>\n"
        }
        return html + "</table>\n"
    }

    private static func days(_ date: Date, since first: Date?) -> Double {
        date.timeIntervalSince(first ?? date) / 86_400
    }

    private static func dayLabel(_ days: Double, _ trend: CapacityTrend) -> String {
        "day \(String(format: "%.3g", days)) since \(trend.nights.first.map { stamp($0.date) } ?? "")"
    }

    /// `2026-11-30T02:15:00Z`.
    static func stamp(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd'T'HH:mm:ss'Z'"
        return formatter.string(from: date)
    }

    private static func number(_ value: Double) -> String { CapacityWriter.number(value) }

    private static func field(_ text: String) -> String { CapacityWriter.field(text) }
}
