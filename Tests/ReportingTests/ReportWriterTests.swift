import Foundation
import PayStormTestKit
import Primitives
import Testing

@testable import Reporting

/// Golden tests: set RECORD_SNAPSHOTS=1 to rewrite the files in Snapshots/ (never on CI).
struct ReportWriterTests {
    static func sampleReport() -> RunReport {
        let start = Date(timeIntervalSince1970: 1_790_000_000)
        return RunReport(
            toolVersion: "0.1.0",
            profile: "smoke",
            seed: 42,
            startedAt: start,
            endedAt: start.addingTimeInterval(61.5),
            target: "embedded reference ledger at 127.0.0.1:40000 (flaw: double-grant)",
            verdict: .fail,
            reasons: ["invariant violated: no-double-grant (1 violation)"],
            invariantVerdict: .fail,
            exitCode: 1,
            requests: ReportedRequests(
                RequestCounts(scheduled: 1000, sent: 998, ok: 990, errors: ["http4xx": 8], missed: 2, resent: 1),
                late: 5
            ),
            latency: [
                LatencySummary(
                    kind: "all",
                    measure: "intended",
                    count: 998,
                    micros: ["p50": 1200, "p90": 2500, "p99": 9000, "p99.9": 15000, "max": 15100]
                )
            ],
            thresholds: [ThresholdResult(expression: "p99 < 250ms", observed: "9.000 ms", passed: true)],
            invariants: [
                InvariantResult(name: "no-double-grant", status: .failed, violations: 1),
                InvariantResult(name: "subscription-state", status: .unchecked, reason: "no probe configured"),
            ],
            violations: [
                Violation(
                    invariant: "no-double-grant",
                    account: "6f1c1a52-0000-4000-8000-000000000001",
                    summary: "transaction 2000000000000007 was granted 2 times",
                    witness: [
                        "t=3.100s the App Store sent DID_RENEW for transaction 2000000000000007, and the target answered 200",
                        "t=3.350s the same webhook, redelivered with identical bytes, got 200, \"again\"",
                        "t=64.0s the probe showed 2 grants for transaction 2000000000000007",
                    ],
                    detectedAfterSeconds: 64,
                    replay:
                        "paystorm replay --seed 42 --account 6f1c1a52-0000-4000-8000-000000000001 Profiles/smoke.json5"
                )
            ],
            faults: ["duplicate": 12, "crash-before-finish": 3],
            timeline: (0...3).map {
                TimelinePoint(second: $0, intended: 250, ok: 248, errors: 2, p50Micros: 1200, p99Micros: 9000)
            },
            notes: ["subscription-state is unchecked: the profile names no probe"]
        )
    }

    @Test(
        arguments: [
            ("summary.json", ReportWriter.summaryJSON),
            ("summary.csv", ReportWriter.summaryCSV),
            ("violations.csv", ReportWriter.violationsCSV),
            ("violations.jsonl", ReportWriter.violationsJSONL),
            ("junit.xml", JUnitReport.render),
            ("report.html", HTMLReport.render),
        ] as [(String, @Sendable (RunReport) -> String)]
    )
    func rendersGoldenFile(name: String, render: @Sendable (RunReport) -> String) throws {
        try expectSnapshot(render(Self.sampleReport()), named: name)
    }

    @Test func summaryJSONRoundTripsWithItsSchemaVersion() throws {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        let back = try decoder.decode(RunReport.self, from: Data(ReportWriter.summaryJSON(Self.sampleReport()).utf8))
        #expect(back.schemaVersion == RunReport.currentSchemaVersion)
        #expect(back.violations == Self.sampleReport().violations)
    }

    @Test func summaryJSONSaysTheRunFailedWhenOnlyAThresholdBreached() throws {
        var report = Self.sampleReport()
        report.invariants = [InvariantResult(name: "no-double-grant", status: .passed, reason: "9 checks held")]
        report.violations = []
        report.thresholds = [ThresholdResult(expression: "p99 < 1ms", observed: "9.000 ms", passed: false)]
        let (verdict, reasons) = VerdictOutcome.ofRun(
            invariants: (.pass, report.invariants),
            thresholds: report.thresholds,
            interrupted: false
        )
        report.verdict = verdict
        report.reasons = reasons
        report.invariantVerdict = .pass
        report.exitCode = 3
        let json = try #require(
            try JSONSerialization.jsonObject(with: Data(ReportWriter.summaryJSON(report).utf8)) as? [String: Any]
        )
        #expect(json["verdict"] as? String == "fail")
        #expect(json["invariantVerdict"] as? String == "pass")
        #expect(json["reasons"] as? [String] == ["threshold breached: p99 < 1ms (observed 9.000 ms)"])
        #expect(ReportWriter.summaryCSV(report).contains(",fail,3,"))
        #expect(HTMLReport.render(report).contains(#"<span class="fail">FAIL</span>"#))
        #expect(JUnitReport.render(report).contains(#"<property name="verdict" value="fail"/>"#))
    }

    @Test func latencyBreachOverAHarnessLimitedRunIsUnknownNotBreached() throws {
        let limit = HarnessLimit(fromSeconds: 12, deliveriesPerSecond: 9_800.4, reason: "minting behind the schedule")
        #expect(limit.sentence == "harness-limited from 12 s at 9,800 deliveries/s (minting behind the schedule)")
        var report = Self.sampleReport()
        report.invariants = [InvariantResult(name: "no-double-grant", status: .passed, reason: "9 checks held")]
        report.violations = []
        report.harnessLimited = limit
        report.thresholds = [
            ThresholdResult(expression: "p99 < 1ms", observed: "2.930 s", passed: false, unknown: limit.sentence),
            ThresholdResult(expression: "p50 < 1s", observed: "9.000 ms", passed: true, unknown: limit.sentence),
        ]
        #expect(report.thresholds.map(\.status) == ["unknown", "held"])
        #expect(report.thresholds[1].unknown == nil)
        let (verdict, reasons) = VerdictOutcome.ofRun(
            invariants: (.pass, report.invariants),
            thresholds: report.thresholds,
            interrupted: false
        )
        #expect(verdict == .unknown)
        #expect(reasons == ["undecided: threshold p99 < 1ms (observed 2.930 s): " + limit.sentence])
        report.verdict = verdict
        report.reasons = reasons
        let json = try #require(
            try JSONSerialization.jsonObject(with: Data(ReportWriter.summaryJSON(report).utf8)) as? [String: Any]
        )
        let limited = try #require(json["harnessLimited"] as? [String: Any])
        #expect(limited["fromSeconds"] as? Double == 12)
        #expect(limited["reason"] as? String == "minting behind the schedule")
        let xml = JUnitReport.render(report)
        #expect(xml.contains(#"name="p99 &lt; 1ms"><skipped message="unknown: harness-limited from 12 s"#))
        #expect(xml.contains(#"failures="0""#))
        #expect(ReportWriter.summaryCSV(report).split(separator: "\n").last?.contains(",unknown,") == true)
        #expect(HTMLReport.render(report).contains("<td>unknown</td>"))
    }

    @Test func htmlLeavesOutEmptySectionsAndListsAtMost200Violations() {
        var report = Self.sampleReport()
        report.reasons = []
        report.thresholds = []
        report.faults = [:]
        report.notes = []
        report.timeline = Array(report.timeline.prefix(1))
        report.violations = Array(repeating: report.violations[0], count: 201)
        let html = HTMLReport.render(report)
        for absent in [#"class="reasons""#, "<h2>Thresholds</h2>", "<h2>Faults injected</h2>", "<h2>Notes</h2>"] {
            #expect(!html.contains(absent), "\(absent)")
        }
        #expect(html.components(separatedBy: "<p>(too short a run for a chart)</p>").count == 3)
        #expect(html.contains("<h2>Violations (201)</h2>"))
        #expect(html.components(separatedBy: "<h3>").count == 201)
        #expect(html.hasSuffix("<p>1 more in <code>violations.jsonl</code>.</p>\n</body></html>\n"))
    }

    @Test func aTwelveHourSoaksChartsAreBucketedWithoutHidingAStallOrAFewErrors() throws {
        var report = Self.sampleReport()
        let seconds = 12 * 3600
        report.timeline = (0..<seconds).map {
            TimelinePoint(second: $0, intended: 100, ok: 100, errors: 0, p50Micros: 1000, p99Micros: 4000)
        }
        // One second's stall and three errors in the whole run.
        report.timeline[30_001].p99Micros = 2_500_000
        report.timeline[40_000].errors = 3
        let html = HTMLReport.render(report)
        let polylines = html.components(separatedBy: "points=\"").dropFirst().map { $0.prefix { $0 != "\"" } }
        // Three throughput series, two of latency, then the percentile plot's one kind.
        #expect(polylines.count == 6)
        #expect(polylines.prefix(5).allSatisfy { $0.split(separator: " ").count == HTMLReport.chartPoints })
        #expect(html.utf8.count < 200_000)
        #expect(
            html.contains("<p>Each point is 60 s: per-second rates averaged over it, latency its worst second's.</p>")
        )
        // The stall's bucket draws at 2,500 ms (the top of the latency axis), the errors' at 0.05/s.
        let points = ChartPoint.buckets(report.timeline, seconds: 60)
        #expect(points[500].p99 == 2500 && points[499].p99 == 4)
        #expect(abs(points[666].errors - 0.05) < 1e-9 && points[665].errors == 0)
        #expect(points[0].intended == 100)
    }

    @Test func csvFieldsAreQuotedOnlyWhenNeeded() {
        #expect(CSV.field("plain") == "plain")
        #expect(CSV.field("a,b") == "\"a,b\"")
        #expect(CSV.field("say \"hi\"") == "\"say \"\"hi\"\"\"")
    }

    @Test func writesEveryFileAndTheLatestLink() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("paystorm-report-\(UUID())")
        defer { try? FileManager.default.removeItem(at: root) }
        let folder = try ReportFolder(root: root, profile: "smoke", seed: 42)
        folder.linkAsLatest()
        try ReportWriter.writeAll(Self.sampleReport(), to: folder)
        for name in ReportWriter.fileNames {
            #expect(FileManager.default.fileExists(atPath: folder.file(name).path))
        }
        let link = try FileManager.default.destinationOfSymbolicLink(atPath: root.appendingPathComponent("latest").path)
        #expect(link == folder.url.lastPathComponent)
    }

    @Test func failingInvariantIsAJUnitFailureWithItsFirstWitnessEvenWhenPartlyUnchecked() {
        var report = Self.sampleReport()
        report.invariants = [
            InvariantResult(
                name: "no-lost-purchase",
                passed: 40,
                failed: 1,
                unknown: 0,
                unchecked: (reason: "partly: no device endpoint (target.deviceURL)", partly: true)
            )
        ]
        report.violations = [
            Violation(
                invariant: "no-lost-purchase",
                account: "acct-1",
                summary: "purchase 2000000000000009 was acknowledged but is not granted",
                witness: ["t=1.000s the target answered 200"],
                replay: "paystorm replay --seed 42"
            )
        ]
        report.thresholds = []
        let xml = JUnitReport.render(report)
        #expect(xml.contains(#"failures="1""#))
        #expect(!xml.contains("<skipped"))
        #expect(xml.contains("1 violation(s): account acct-1: purchase 2000000000000009 was acknowledged"))
        #expect(xml.contains("t=1.000s the target answered 200"))
    }

    @Test func interruptedRunFailsTheRunCompletedCase() {
        var report = Self.sampleReport()
        report.invariants = [InvariantResult(name: "no-double-grant", status: .passed)]
        report.violations = []
        report.interrupted = true
        let xml = JUnitReport.render(report)
        #expect(xml.contains(#"<property name="interrupted" value="true"/>"#))
        #expect(xml.contains(#"failures="1""#))
        #expect(xml.contains(#"<testcase classname="run" name="run completed"><failure message="interrupted"#))
        report.interrupted = false
        #expect(JUnitReport.render(report).contains(#"failures="0""#))
    }

    @Test(
        arguments: [
            // (checks passed, failed, unknown, unchecked reason, partly) → status, violations
            (40, 1, 0, "partly: no device endpoint", true, InvariantResult.Status.failed, 1),
            (40, 0, 0, "partly: no device endpoint", true, .passed, 0),
            (0, 0, 3, "partly: no device endpoint", true, .unknown, 0),
            (0, 0, 0, "partly: no device endpoint", true, .unchecked, 0),
            (0, 0, 0, "no probe (target.probe)", false, .unchecked, 0),
            (5, 2, 0, nil, false, .failed, 2),
            (5, 0, 1, nil, false, .passed, 0),
            (0, 0, 0, nil, false, .unchecked, 0),
        ] as [(Int, Int, Int, String?, Bool, InvariantResult.Status, Int)]
    )
    func partlyUncheckedInvariantKeepsTheStatusItsChecksEarned(
        passed: Int,
        failed: Int,
        unknown: Int,
        reason: String?,
        partly: Bool,
        status: InvariantResult.Status,
        violations: Int
    ) {
        let result = InvariantResult(
            name: "no-lost-purchase",
            passed: passed,
            failed: failed,
            unknown: unknown,
            unchecked: reason.map { (reason: $0, partly: partly) }
        )
        #expect(result.status == status)
        #expect(result.violations == violations)
        if let reason { #expect(result.reason?.contains(reason) == true) }
    }

    @Test(
        arguments: [
            // (invariants, a threshold breached, interrupted) → run verdict
            (VerdictOutcome.pass, false, false, VerdictOutcome.pass),
            (.pass, true, false, .fail),
            (.unknown, true, false, .fail),
            (.fail, false, false, .fail),
            (.pass, false, true, .unknown),
            (.fail, false, true, .fail),
            (.unknown, false, false, .unknown),
        ]
    )
    func runVerdictAgreesWithThresholdsAndInterruptions(
        invariants: VerdictOutcome,
        breached: Bool,
        interrupted: Bool,
        expected: VerdictOutcome
    ) {
        let (verdict, reasons) = VerdictOutcome.ofRun(
            invariants: (invariants, []),
            thresholds: [ThresholdResult(expression: "missed == 0", observed: "3", passed: !breached)],
            interrupted: interrupted
        )
        #expect(verdict == expected)
        #expect(reasons.isEmpty == (verdict == .pass))
        #expect(reasons.contains { $0.hasPrefix("threshold breached: missed == 0") } == breached)
        #expect(reasons.contains { $0.hasPrefix("interrupted") } == interrupted)
    }

    @Test func undecidedRunSaysWhyWhenTheCheckerKnows() {
        let why = "40 of 120 final probes failed: probe failed: 'jq -c .' exited 5: jq: error"
        let (verdict, reasons) = VerdictOutcome.ofRun(
            invariants: (.unknown, []),
            thresholds: [],
            interrupted: false,
            undecided: why
        )
        #expect(verdict == .unknown)
        #expect(reasons == ["undecided: " + why])
        let (_, generic) = VerdictOutcome.ofRun(invariants: (.unknown, []), thresholds: [], interrupted: false)
        #expect(generic == ["undecided: too few invariant checks could decide"])
    }

    @Test func twoRunsOfTheSameProfileSeedAndSecondGetTheirOwnFolders() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("paystorm-report-\(UUID())")
        defer { try? FileManager.default.removeItem(at: root) }
        let date = Date(timeIntervalSince1970: 1_790_000_000)
        let folders = try (0..<3).map { _ in try ReportFolder(root: root, profile: "smoke", seed: 42, date: date) }
        #expect(Set(folders.map(\.url.path)).count == 3)
        #expect(
            folders.map(\.url.lastPathComponent).map { $0.replacingOccurrences(of: "20260921T141320Z-", with: "") }
                == ["smoke-42", "smoke-42-2", "smoke-42-3"]
        )
    }

    @Test func latestMovesOnlyWhenTheRunStartsAndARemovedFolderIsGone() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("paystorm-report-\(UUID())")
        defer { try? FileManager.default.removeItem(at: root) }
        let first = try ReportFolder(root: root, profile: "smoke", seed: 1)
        first.linkAsLatest()
        let failed = try ReportFolder(root: root, profile: "smoke", seed: 2)
        failed.remove()
        let latest = root.appendingPathComponent("latest").path
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: latest) == first.url.lastPathComponent)
        #expect(!FileManager.default.fileExists(atPath: failed.url.path))
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: root.path).sorted()
                == ["latest", first.url.lastPathComponent].sorted()
        )
    }

    @Test func unwritableFolderIsAClearError() {
        #expect(throws: ReportError.self) {
            _ = try ReportFolder(root: URL(fileURLWithPath: "/proc/paystorm-nope"), profile: "p", seed: 1)
        }
    }
}
