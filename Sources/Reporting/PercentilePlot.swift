import Foundation

/// The run report's HDR percentile plot: latency against percentile, one curve per kind of request, the
/// percentile on a logarithmic scale (x = log10(1 / (1 - p))), so that the tail gets as much room as the
/// median: 90% at 1, 99% at 2, 99.9% at 3.
enum PercentilePlot {
    /// The percentiles drawn, by their key in ``LatencySummary/micros`` (the minimum is the 0th).
    static let percentiles: [(key: String, percent: Double)] = [
        ("min", 0), ("p50", 50), ("p75", 75), ("p90", 90), ("p95", 95), ("p99", 99), ("p99.9", 99.9),
        ("p99.99", 99.99), ("p99.999", 99.999),
    ]
    /// One color per kind, in the order of the report's latency (`all` first, in grey).
    static let colors = ["#8c959f", "#0969da", "#1a7f37", "#bf3989", "#9a6700", "#8250df", "#cf222e", "#1b7c83"]

    /// The plot's heading, caption and chart, from the latency from the intended send time; empty when no kind
    /// has a value.
    static func html(_ latency: [LatencySummary]) -> String {
        let intended = latency.filter { $0.measure == "intended" && $0.count > 0 }
        guard !intended.isEmpty else { return "" }
        let series = intended.enumerated().map { index, summary in
            SVGChart.Series(name: summary.kind, color: colors[index % colors.count], points: points(summary))
        }
        let decades = Int((series.flatMap { $0.points.map(\.x) }.max() ?? 0).rounded(.up))
        let ticks = (0...max(decades, 3)).map { SVGChart.Tick(x: Double($0), label: label(decade: $0)) }
        return "<h2>Latency by percentile</h2>\n"
            + "<p>From the intended send time, per kind of request. The percentile runs on a logarithmic scale (each "
            + "step right is ten times rarer); a curve ends at its maximum, drawn at 1 − 1/count.</p>\n"
            + SVGChart.render(series, unit: " ms", xLabel: { _ in "" }, dots: true, xTicks: ticks)
    }

    /// A kind's points: each percentile its count can tell apart from the maximum, then the maximum at
    /// 1 − 1/count (where HdrHistogram's own plots end).
    static func points(_ summary: LatencySummary) -> [(x: Double, y: Double)] {
        let end = log10(Double(max(summary.count, 1)))
        var points: [(x: Double, y: Double)] = percentiles.compactMap { key, percent in
            guard let micros = summary.micros[key] else { return nil }
            let x = log10(100 / (100 - percent))
            return x < end || x == 0 ? (x, Double(micros) / 1000) : nil
        }
        if let max = summary.micros["max"] {
            points.append((Swift.max(end, points.last?.x ?? 0), Double(max) / 1000))
        }
        return points
    }

    /// The percentile at `decade` on the axis: 0%, 90%, 99%, 99.9%...
    static func label(decade: Int) -> String {
        guard decade > 0 else { return "0%" }
        return String(format: "%.\(max(0, decade - 2))f%%", 100 - pow(10, Double(2 - decade)))
    }
}
