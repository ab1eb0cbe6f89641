import Foundation

// Where the run report's time charts mark violations: at the time a probe first saw them.

/// The violations of a run as marks on its time charts: a dashed line at the time probes first saw some, labelled
/// with their count, its tooltip naming their invariants. Violations seen close together share one line, so
/// that a run with hundreds stays readable (at most about a hundred lines a chart).
struct ViolationMarks {
    /// The color of the marks, apart from the charts' series (the errors' red among them).
    static let color = "#bc4c00"
    /// The most lines a chart draws: violations in the same hundredth of the run share one.
    static let mostLines = 100

    /// One mark per group of violations, in time order.
    var markers: [SVGChart.Marker]
    /// A sentence under the charts' headings saying what the marks are; empty without marks.
    var caption: String

    /// The marks of a report's witnessed violations on charts whose points are `bucketSeconds` wide.
    init(_ report: RunReport, bucketSeconds: Int) {
        let seen = report.violations.compactMap { v in
            v.detectedAfterSeconds.flatMap { $0.isFinite && $0 >= 0 ? (at: $0, invariant: v.invariant) : nil }
        }
        let span = max(Double((report.timeline.map(\.second).max() ?? 0) + 1), seen.map(\.at).max() ?? 0)
        let width = max(bucketSeconds, Int((span / Double(Self.mostLines)).rounded(.up)), 1)
        var groups: [Int: [(at: Double, invariant: String)]] = [:]
        for violation in seen { groups[Int(violation.at) / width, default: []].append(violation) }
        markers = groups.keys.sorted().compactMap { groups[$0].map(Self.marker) }
        guard !markers.isEmpty else {
            caption = ""
            return
        }
        let unmarked = report.violationCount - seen.count
        caption =
            "<p>Dashed lines: violations, at the time a probe first saw them (their count; point at a line for the "
            + "invariants)." + (unmarked > 0 ? " \(unmarked) more without a witness or a time are not marked." : "")
            + "</p>\n"
    }

    /// A group's line: at its earliest violation, labelled with its count, its tooltip naming the invariants.
    private static func marker(_ group: [(at: Double, invariant: String)]) -> SVGChart.Marker {
        let times = group.map(\.at)
        let first = times.min() ?? 0
        let last = times.max() ?? 0
        var counts: [String: Int] = [:]
        for violation in group { counts[violation.invariant, default: 0] += 1 }
        let invariants = counts.sorted { $0.key < $1.key }.map { $0.value == 1 ? $0.key : "\($0.key) (\($0.value))" }
        let when = last > first ? "\(seconds(first))–\(seconds(last))" : seconds(first)
        let count = group.count == 1 ? "1 violation" : "\(group.count) violations"
        return SVGChart.Marker(
            x: first,
            label: String(group.count),
            color: color,
            title: "\(count) first seen at t=\(when) s: " + invariants.joined(separator: ", ")
        )
    }

    private static func seconds(_ value: Double) -> String { String(format: "%.1f", value) }
}
