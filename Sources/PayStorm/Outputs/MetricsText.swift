import Foundation

/// The two text formats `GET /metrics` answers in: OpenMetrics when the scraper's `Accept` asks for it, the
/// Prometheus text format 0.0.4 otherwise (what `curl` and older scrapers read).
enum MetricsFormat: Sendable, Equatable {
    /// OpenMetrics 1.0: a counter's family is named without `_total`, units are declared, `# EOF` ends it.
    case openMetrics
    /// The Prometheus text format 0.0.4: a counter's `TYPE` and `HELP` name its `_total` samples, no units,
    /// no `# EOF`.
    case prometheus

    /// The media type the format is served with.
    var contentType: String {
        switch self {
        case .openMetrics: "application/openmetrics-text; version=1.0.0; charset=utf-8"
        case .prometheus: "text/plain; version=0.0.4; charset=utf-8"
        }
    }

    /// The format an `Accept` header asks for: OpenMetrics when it names `application/openmetrics-text` with a
    /// quality above 0, the Prometheus text format otherwise (no header, `*/*`, `text/plain`).
    static func negotiated(accept: String?) -> MetricsFormat {
        guard let accept else { return .prometheus }
        for range in accept.split(separator: ",") {
            let parts = range.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            guard parts.first == "application/openmetrics-text" else { continue }
            let quality = parts.dropFirst().first { $0.hasPrefix("q=") }.flatMap { Double($0.dropFirst(2)) } ?? 1
            if quality > 0 { return .openMetrics }
        }
        return .prometheus
    }
}

/// Metrics text as it is written, in either `MetricsFormat`: a family's `TYPE`, `HELP` (and `UNIT`) lines,
/// then its samples.
struct MetricsText {
    let format: MetricsFormat
    var text = ""

    init(_ format: MetricsFormat) { self.format = format }

    /// Starts a family. `name` is the OpenMetrics family name: a counter's samples add `_total` to it, which
    /// the Prometheus text format wants in the `TYPE` and `HELP` lines too.
    mutating func family(_ name: String, _ type: String, _ help: String, unit: String? = nil) {
        switch format {
        case .openMetrics:
            text += "# TYPE \(name) \(type)\n# HELP \(name) \(help)\n"
            if let unit { text += "# UNIT \(name) \(unit)\n" }
        case .prometheus:
            let named = type == "counter" ? name + "_total" : name
            text += "# HELP \(named) \(help)\n# TYPE \(named) \(type)\n"
        }
    }

    mutating func sample(_ name: String, _ labels: [(String, String)], _ value: String) {
        text += name
        if !labels.isEmpty {
            text += "{" + labels.map { "\($0.0)=\"\(Self.escape($0.1))\"" }.joined(separator: ",") + "}"
        }
        text += " \(value)\n"
    }

    /// Ends the exposition (`# EOF` in OpenMetrics).
    mutating func end() {
        if format == .openMetrics { text += "# EOF\n" }
    }

    /// A label value with its backslashes, quotes and line feeds escaped, as both formats ask.
    private static func escape(_ value: String) -> String {
        value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            .replacingOccurrences(of: "\n", with: "\\n")
    }
}
