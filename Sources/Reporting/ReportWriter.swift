import Foundation
import Primitives

/// Writes the end-of-run files of a report folder from one ``RunReport``:
/// `summary.json`, `summary.csv`, `violations.csv`, `violations.jsonl`,
/// `junit.xml` and `report.html`.
public enum ReportWriter {
    /// The files ``writeAll(_:to:)`` produces, in order.
    public static let fileNames = [
        "summary.json", "summary.csv", "violations.csv", "violations.jsonl", "junit.xml", "report.html",
    ]

    /// Writes every end-of-run file into `folder`.
    /// - Throws: `ReportError.cannotWrite` naming the first file that failed.
    public static func writeAll(_ report: RunReport, to folder: ReportFolder) throws(ReportError) {
        let contents = [
            summaryJSON(report), summaryCSV(report), violationsCSV(report), violationsJSONL(report),
            JUnitReport.render(report), HTMLReport.render(report),
        ]
        for (name, text) in zip(fileNames, contents) {
            let url = folder.file(name)
            do {
                try Data(text.utf8).write(to: url, options: .atomic)
            } catch {
                throw .cannotWrite(url.path, error.localizedDescription)
            }
        }
    }

    /// `summary.json`: the versioned, machine-readable summary (sorted keys, ISO dates).
    public static func summaryJSON(_ report: RunReport) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        // Encoding plain values of known shape cannot fail.
        let data = (try? encoder.encode(report)) ?? Data("{}".utf8)
        return String(decoding: data, as: UTF8.self) + "\n"
    }

    /// `summary.csv`: one header row and one value row, columns documented in docs/reports.md.
    public static func summaryCSV(_ report: RunReport) -> String {
        let all = report.latency.first { $0.kind == "all" && $0.measure == "intended" }
        var columns: [(String, String)] = [
            ("profile", report.profile),
            ("seed", String(report.seed)),
            ("verdict", report.verdict.rawValue),
            ("exit_code", String(report.exitCode)),
            ("duration_s", String(format: "%.3f", report.endedAt.timeIntervalSince(report.startedAt))),
            ("intended", String(report.requests.counts.scheduled)),
            ("sent", String(report.requests.counts.sent)),
            ("ok", String(report.requests.counts.ok)),
            ("errors", String(report.requests.errorCount)),
            ("missed", String(report.requests.counts.missed)),
            ("late", String(report.requests.late)),
            ("resent", String(report.requests.counts.resent)),
            ("p50_us", all.flatMap { $0.micros["p50"] }.map(String.init) ?? ""),
            ("p99_us", all.flatMap { $0.micros["p99"] }.map(String.init) ?? ""),
            ("max_us", all.flatMap { $0.micros["max"] }.map(String.init) ?? ""),
            ("violations", String(report.violationCount)),
            ("thresholds_failed", String(report.thresholds.filter(\.breached).count)),
            ("invariant_verdict", report.invariantVerdict.rawValue),
            ("interrupted", String(report.interrupted)),
            ("reasons", report.reasons.joined(separator: "; ")),
        ]
        // The main error classes come last, so readers of the columns before them by position still read them.
        let classes = report.requests.errorsByClass.prefix(ReportedRequests.mainErrorClasses.count)
        columns += classes.map { ($0.name.replacingOccurrences(of: "http", with: "http_"), String($0.count)) }
        return columns.map(\.0).joined(separator: ",") + "\n"
            + columns.map { CSV.field($0.1) }.joined(separator: ",") + "\n"
    }

    /// `violations.csv`: one row a violation; the witness sentences joined with ` | `.
    public static func violationsCSV(_ report: RunReport) -> String {
        var text = "invariant,account,summary,detected_after_s,witness,replay\n"
        for v in report.violations {
            let fields = [
                v.invariant, v.account, v.summary,
                v.detectedAfterSeconds.map { String(format: "%.3f", $0) } ?? "",
                v.witness.joined(separator: " | "), v.replay,
            ]
            text += fields.map(CSV.field).joined(separator: ",") + "\n"
        }
        return text
    }

    /// `violations.jsonl`: one JSON object a line, each a ``Violation`` plus the seed.
    public static func violationsJSONL(_ report: RunReport) -> String {
        struct Line: Encodable {
            var seed: UInt64
            var violation: Violation
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return report.violations.map { v in
            let data = (try? encoder.encode(Line(seed: report.seed, violation: v))) ?? Data("{}".utf8)
            return String(decoding: data, as: UTF8.self) + "\n"
        }.joined()
    }
}

/// RFC 4180 quoting, in one place.
enum CSV {
    static func field(_ value: String) -> String {
        guard value.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return value }
        return "\"" + value.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}

/// XML and HTML escaping, in one place.
enum Markup {
    static func escape(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.count)
        for ch in text {
            switch ch {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&apos;"
            default: out.append(ch)
            }
        }
        return out
    }
}
