import Foundation

/// Line charts in inline SVG, shared by the run report (series over seconds) and the capacity report
/// (latency against throughput): the axes start at 0, so shapes compare by eye across charts.
enum SVGChart {
    /// One polyline.
    struct Series {
        var name: String
        var color: String
        var points: [(x: Double, y: Double)]
    }

    /// A vertical line across the plot with a label, such as the knee of a capacity curve.
    struct Marker {
        var x: Double
        var label: String
        var color: String
        /// Shown when the pointer rests on the line (an SVG `<title>`), such as the invariants it marks.
        var title: String? = nil
    }

    /// A labelled position on the x axis, with a faint grid line across the plot.
    struct Tick {
        var x: Double
        var label: String
    }

    /// Renders the chart, or a short paragraph when no series has two points.
    /// - Parameters:
    ///   - series: the polylines, drawn in order; their names are the legend.
    ///   - unit: appended to the y axis's tick labels.
    ///   - xLabel: the label written at the right end of the x axis, from the largest x (none when empty).
    ///   - markers: vertical lines with labels.
    ///   - dots: whether to mark each point with a small circle (measured steps, as opposed to a timeline).
    ///   - xTicks: labelled positions under the x axis (a scale that is not linear says where its values are).
    static func render(
        _ series: [Series],
        unit: String,
        xLabel: (Double) -> String,
        markers: [Marker] = [],
        dots: Bool = false,
        xTicks: [Tick] = []
    ) -> String {
        guard (series.map(\.points.count).max() ?? 0) >= 2 else { return "<p>(too short a run for a chart)</p>\n" }
        let width = 900.0
        let height = 220.0
        let left = 60.0
        let bottom = 24.0
        let top = 10.0
        let maxX = max(
            series.flatMap { $0.points.map(\.x) }.max() ?? 1,
            markers.map(\.x).max() ?? 0,
            xTicks.map(\.x).max() ?? 0
        )
        let maxY = max(1, series.flatMap { $0.points.map(\.y) }.max() ?? 1) * 1.1
        func x(_ value: Double) -> Double { left + (width - left - 10) * value / max(1, maxX) }
        func y(_ value: Double) -> Double { top + (height - top - bottom) * (1 - value / maxY) }
        var svg =
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"\(Int(width))\" height=\"\(Int(height))\" role=\"img\">\n"
        svg +=
            "<rect x=\"\(left)\" y=\"\(top)\" width=\"\(width - left - 10)\" height=\"\(height - top - bottom)\" fill=\"none\" stroke=\"#ccc\"/>\n"
        for tick in 0...4 {
            let value = maxY * Double(tick) / 4
            svg +=
                "<text x=\"\(left - 4)\" y=\"\(String(format: "%.1f", y(value) + 4))\" text-anchor=\"end\">\(String(format: "%.4g", value))\(unit)</text>\n"
        }
        let label = xLabel(maxX)
        if !label.isEmpty {
            svg += "<text x=\"\(width - 10)\" y=\"\(height - 6)\" text-anchor=\"end\">\(Markup.escape(label))</text>\n"
        }
        for tick in xTicks {
            let at = String(format: "%.1f", x(tick.x))
            // The last label ends at the plot's edge rather than past the picture's.
            let anchor = tick.x < maxX ? "middle" : "end"
            svg +=
                "<line x1=\"\(at)\" y1=\"\(top)\" x2=\"\(at)\" y2=\"\(height - bottom)\" stroke=\"#eee\"/>\n"
                + "<text x=\"\(at)\" y=\"\(height - 6)\" text-anchor=\"\(anchor)\">\(Markup.escape(tick.label))</text>\n"
        }
        for marker in markers { svg += Self.marker(marker, at: x(marker.x), from: top, to: height - bottom) }
        for (index, s) in series.enumerated() {
            let coordinates = s.points.map { String(format: "%.1f,%.1f", x($0.x), y($0.y)) }
            svg +=
                "<polyline fill=\"none\" stroke=\"\(s.color)\" stroke-width=\"1.5\" points=\"\(coordinates.joined(separator: " "))\"/>\n"
            if dots {
                for point in s.points {
                    let at = String(format: "cx=\"%.1f\" cy=\"%.1f\"", x(point.x), y(point.y))
                    svg += "<circle \(at) r=\"3\" fill=\"\(s.color)\"/>\n"
                }
            }
            svg +=
                "<text x=\"\(left + 8 + Double(index) * 110)\" y=\"\(top + 14)\" fill=\"\(s.color)\" style=\"fill:\(s.color)\">\(Markup.escape(s.name))</text>\n"
        }
        return svg + "</svg>\n"
    }

    /// A marker's dashed line and label, grouped under its title when it has one (a tooltip in a browser).
    private static func marker(_ marker: Marker, at x: Double, from top: Double, to bottom: Double) -> String {
        let at = String(format: "%.1f", x)
        let color = marker.color
        let body =
            "<line x1=\"\(at)\" y1=\"\(top)\" x2=\"\(at)\" y2=\"\(bottom)\" stroke=\"\(color)\" stroke-dasharray=\"4 3\"/>\n"
            + "<text x=\"\(at)\" y=\"\(bottom - 4)\" text-anchor=\"middle\" fill=\"\(color)\" style=\"fill:\(color)\">\(Markup.escape(marker.label))</text>\n"
        guard let title = marker.title else { return body }
        // A wide transparent twin of the line, so that the pointer finds the tooltip without aiming at a pixel.
        let target =
            "<line x1=\"\(at)\" y1=\"\(top)\" x2=\"\(at)\" y2=\"\(bottom)\" stroke=\"transparent\" stroke-width=\"9\"/>\n"
        return "<g class=\"marker\"><title>\(Markup.escape(title))</title>\n" + target + body + "</g>\n"
    }
}
