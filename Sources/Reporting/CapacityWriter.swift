public import Foundation

/// Writes `capacity.csv`, `capacity.json` and `capacity.html` from a ``CapacityReport``.
public enum CapacityWriter {
    /// The files ``writeAll(_:to:)`` produces.
    public static let fileNames = ["capacity.csv", "capacity.json", "capacity.html"]

    /// Writes every file into `folder`.
    /// - Throws: `ReportError.cannotWrite` naming the first file that failed.
    public static func writeAll(_ report: CapacityReport, to folder: URL) throws(ReportError) {
        try write(zip(fileNames, [csv(report), json(report), html(report)]), to: folder)
    }

    /// Writes each named text into `folder`, each file replaced atomically.
    /// - Throws: `ReportError.cannotWrite` naming the first file that failed.
    static func write(_ files: some Sequence<(String, String)>, to folder: URL) throws(ReportError) {
        for (name, text) in files {
            let url = folder.appendingPathComponent(name)
            do {
                try Data(text.utf8).write(to: url, options: .atomic)
            } catch {
                throw .cannotWrite(url.path, error.localizedDescription)
            }
        }
    }

    /// The style sheet of the capacity and trend pages.
    static let style = """
        <style>
        body{font:14px/1.45 system-ui,sans-serif;margin:2em auto;max-width:72em;color:#222}
        table{border-collapse:collapse;margin:.5em 0 1.5em}td,th{border:1px solid #ccc;padding:.25em .6em;text-align:left}
        th{background:#f4f4f4}td.num{text-align:right;font-variant-numeric:tabular-nums}code{background:#f4f4f4;padding:0 .3em}
        svg text{font:11px sans-serif;fill:#444}
        </style>
        """

    /// The error classes of a run's `timeseries.csv`, each a `capacity.csv` column even when no step saw it.
    static let standardErrorClasses = [
        "non_2xx", "timeout", "reset", "refused", "dns", "tls", "hung_up", "other", "missed",
    ]

    /// `capacity.csv`: a row per step in the order the steps ran; latency in µs, rates per second, one
    /// `errors_CLASS` column per error class any step saw.
    public static func csv(_ report: CapacityReport) -> String {
        let classes =
            standardErrorClasses + Set(report.steps.flatMap(\.errors.keys)).subtracting(standardErrorClasses).sorted()
        var header = ["step", "rate", "seconds", "warmup_seconds", "offered", "achieved"]
        for measure in ["", "service_"] {
            header += ["p50", "p90", "p99", "p99_9"].map { "\(measure)\($0)_us" }
        }
        header += ["mean_service_us", "concurrency"] + classes.map { "errors_\($0)" }
        header += ["late", "missed", "in_flight", "harness_cpu", "harness_limited", "slos_broken"]
        header += ["invariants_failed", "recovery_s", "recovered", "folder"]
        var text = header.joined(separator: ",") + "\n"
        for step in report.steps {
            var row = [String(step.index), number(step.rate), number(step.seconds), number(step.warmupSeconds)]
            row += [number(step.offered), number(step.achieved)]
            for p in [step.latency, step.service] { row += [p.p50, p.p90, p.p99, p.p999].map(String.init) }
            row += [number(step.meanServiceMicros), number(step.concurrency)]
            row += classes.map { String(step.errors[$0] ?? 0) }
            row += [String(step.late), String(step.missed), String(step.inFlight)]
            row += [step.harnessCPU.map(number) ?? "", field(step.harnessLimited ?? "")]
            row += [field(step.slos.filter { !$0.held }.map(\.expression).joined(separator: "; "))]
            row += [field(step.failedInvariantsText), step.recovery.map { number($0.waitedSeconds) } ?? ""]
            row += [step.recovery.map { String($0.recovered) } ?? "", field(step.folder)]
            text += row.joined(separator: ",") + "\n"
        }
        return text
    }

    /// `capacity.json`: the whole report, sorted keys.
    public static func json(_ report: CapacityReport) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        // Encoding plain values of known shape cannot fail.
        let data = (try? encoder.encode(report)) ?? Data("{}".utf8)
        return String(decoding: data, as: UTF8.self) + "\n"
    }

    /// `capacity.html`: latency and throughput against the offered rate with the knee marked, the fit and
    /// the step table; self-contained.
    public static func html(_ report: CapacityReport) -> String {
        let e = Markup.escape
        let steps = report.steps.sorted { $0.rate < $1.rate }
        var markers: [SVGChart.Marker] = []
        if let knee = report.sustainableRate {
            markers.append(SVGChart.Marker(x: knee, label: "knee \(CapacityReport.rate(knee))/s", color: "#1a7f37"))
        }
        if let ceiling = report.harnessCeilingRate {
            markers.append(SVGChart.Marker(x: ceiling, label: "PayStorm's ceiling", color: "#9a6700"))
        }
        var html = """
            <!DOCTYPE html>
            <html lang="en"><head><meta charset="utf-8">
            <title>PayStorm capacity \(e(report.profile)) seed \(report.seed)</title>
            \(style)</head><body>
            <h1>PayStorm capacity: \(e(report.profile))</h1>
            <p><strong>\(e(report.sentence))</strong></p>
            <p>SLOs: \(report.slos.map { "<code>\(e($0))</code>" }.joined(separator: ", ")); seed <code>\(report.seed)</code></p>

            """
        if let ceiling = report.ceilingSentence { html += "<p>\(e(ceiling))</p>\n" }
        if let invariants = report.invariantsSentence {
            html += "<p><strong style=\"color:#cf222e\">\(e(invariants))</strong></p>\n"
        }
        html += "<h2>Throughput against offered rate</h2>\n"
        html += throughputChart(steps, markers: markers, ceiling: report.uslCeiling)
        html += "<h2>Latency against throughput</h2>\n"
        html += latencyChart(report, steps: steps)
        html += fitSection(report)
        html += stepTable(report)
        return html + "</body></html>\n"
    }

    /// Offered and achieved throughput against the offered rate.
    private static func throughputChart(
        _ steps: [CapacityStep],
        markers: [SVGChart.Marker],
        ceiling: Double?
    ) -> String {
        var series: [SVGChart.Series] = [
            .init(name: "offered/s", color: "#8c959f", points: steps.map { ($0.rate, $0.offered) }),
            .init(name: "achieved/s", color: "#1a7f37", points: steps.map { ($0.rate, $0.achieved) }),
        ]
        // The law's ceiling as a level line across the steps, so the headroom above the knee shows.
        if let ceiling, let low = steps.first?.rate, let high = steps.last?.rate {
            series.append(.init(name: "USL ceiling/s", color: "#9a6700", points: [(low, ceiling), (high, ceiling)]))
        }
        return SVGChart.render(
            series,
            unit: "",
            xLabel: { "\(CapacityReport.rate($0)) actions/s" },
            markers: markers,
            dots: true
        )
    }

    /// Latency against the throughput achieved, the knee marked.
    private static func latencyChart(_ report: CapacityReport, steps: [CapacityStep]) -> String {
        // Latency against what the target achieved: the hockey stick, its knee where queues start to grow.
        let byThroughput = steps.filter { $0.harnessLimited == nil }.sorted { $0.achieved < $1.achieved }
        let kneeStep = steps.last { $0.rate == report.sustainableRate }
        return SVGChart.render(
            [
                .init(
                    name: "p99 ms",
                    color: "#bf3989",
                    points: byThroughput.map { ($0.achieved, Double($0.latency.p99) / 1000) }
                ),
                .init(
                    name: "p50 ms",
                    color: "#0969da",
                    points: byThroughput.map { ($0.achieved, Double($0.latency.p50) / 1000) }
                ),
                .init(
                    name: "service p99 ms",
                    color: "#8250df",
                    points: byThroughput.map { ($0.achieved, Double($0.service.p99) / 1000) }
                ),
            ],
            unit: " ms",
            xLabel: { "\(CapacityReport.rate($0)) deliveries/s achieved" },
            markers: kneeStep.map {
                [SVGChart.Marker(x: $0.achieved, label: "knee \(CapacityReport.rate($0.achieved))/s", color: "#1a7f37")]
            } ?? [],
            dots: true
        )
    }

    private static func fitSection(_ report: CapacityReport) -> String {
        let e = Markup.escape
        var html = "<h2>Universal Scalability Law</h2>\n"
        guard let usl = report.usl else {
            return html + "<p>Fewer than three steps PayStorm kept up with: no fit.</p>\n"
        }
        html += "<table><tr><th>σ (contention)</th><th>κ (coherency)</th><th>λ (per unit of concurrency)</th>"
        html += "<th>R²</th><th>peak concurrency N*</th><th>predicted peak X(N*)</th><th>ceiling</th></tr>\n<tr>"
        let peak = report.peakConcurrency.map { String(format: "%.3g", $0) } ?? "none (κ = 0)"
        let peakX = report.peakThroughput.map { CapacityReport.rate($0) + "/s" } ?? "none"
        let ceiling =
            report.uslCeiling.map { CapacityReport.rate($0) + "/s" + (usl.kappa > 0 ? "" : " (λ/σ)") } ?? "none"
        html += [
            String(format: "%.4g", usl.sigma), String(format: "%.4g", usl.kappa), String(format: "%.4g", usl.lambda),
            String(format: "%.4f", usl.rSquared), peak, peakX, ceiling,
        ].map { "<td class=\"num\">\(e($0))</td>" }.joined()
        html += "</tr></table>\n<h2>Where each SLO breaks</h2>\n<table><tr><th>SLO</th><th>breaks at</th>"
        html += "<th>held at</th><th>broke at</th></tr>\n"
        for slo in report.sloBreaks {
            let cells = [
                slo.rate.map { CapacityReport.rate($0) + " actions/s" }
                    ?? (slo.firstBroken == nil ? "held at every step" : "below the lowest step"),
                slo.lastHeld.map(CapacityReport.rate) ?? "", slo.firstBroken.map(CapacityReport.rate) ?? "",
            ]
            html += "<tr><td><code>\(e(slo.expression))</code></td>" + cells.map { "<td>\(e($0))</td>" }.joined()
            html += "</tr>\n"
        }
        return html + "</table>\n"
    }

    private static func stepTable(_ report: CapacityReport) -> String {
        let e = Markup.escape
        var html = "<h2>Steps</h2>\n<table><tr><th>step</th><th>actions/s</th><th>offered/s</th><th>achieved/s</th>"
        html += "<th>p50 ms</th><th>p99 ms</th><th>p99.9 ms</th><th>service p99 ms</th><th>N</th><th>errors</th>"
        html += "<th>harness CPU</th><th>recovery s</th><th>judged</th><th>invariants failed</th><th>report</th></tr>\n"
        for step in report.steps {
            let judged =
                step.harnessLimited
                ?? (step.isGood ? "good" : step.slos.filter { !$0.held }.map(\.expression).joined(separator: "; "))
            let cells = [
                String(step.index), CapacityReport.rate(step.rate), CapacityReport.rate(step.offered),
                CapacityReport.rate(step.achieved), ms(step.latency.p50), ms(step.latency.p99), ms(step.latency.p999),
                ms(step.service.p99), String(format: "%.3g", step.concurrency), String(step.errors.values.reduce(0, +)),
                step.harnessCPU.map { String(format: "%.2f", $0) } ?? "",
                step.recovery.map { String(format: "%.1f", $0.waitedSeconds) + ($0.recovered ? "" : ", not recovered") }
                    ?? "",
            ]
            html += "<tr>" + cells.map { "<td class=\"num\">\(e($0))</td>" }.joined()
            html +=
                "<td>\(e(judged))</td><td>\(e(step.failedInvariantsText))</td><td><a href=\"\(e(step.folder))/report.html\">\(e(step.folder))</a></td></tr>\n"
        }
        return html + "</table>\n"
    }

    private static func ms(_ micros: Int64) -> String { String(format: "%.1f", Double(micros) / 1000) }

    static func number(_ value: Double) -> String { String(format: "%.6g", value) }

    /// A CSV field, quoted when it holds a comma, a quote or a line break.
    static func field(_ text: String) -> String {
        guard text.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" }) else { return text }
        return "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}
