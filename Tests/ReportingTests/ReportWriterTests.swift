import Foundation
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
            exitCode: 1,
            requests: RequestTotals(intended: 1000, sent: 998, ok: 990, errors: ["http4xx": 8], missed: 2, late: 5),
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
        let text = render(Self.sampleReport())
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("Snapshots").appendingPathComponent(name)
        if ProcessInfo.processInfo.environment["RECORD_SNAPSHOTS"] != nil {
            try Data(text.utf8).write(to: url)
        }
        let golden = try String(contentsOf: url, encoding: .utf8)
        #expect(text == golden)
    }

    @Test func summaryJSONRoundTripsWithItsSchemaVersion() throws {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        let back = try decoder.decode(RunReport.self, from: Data(ReportWriter.summaryJSON(Self.sampleReport()).utf8))
        #expect(back.schemaVersion == RunReport.currentSchemaVersion)
        #expect(back.violations == Self.sampleReport().violations)
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
        try ReportWriter.writeAll(Self.sampleReport(), to: folder)
        for name in ReportWriter.fileNames {
            #expect(FileManager.default.fileExists(atPath: folder.file(name).path))
        }
        let link = try FileManager.default.destinationOfSymbolicLink(atPath: root.appendingPathComponent("latest").path)
        #expect(link == folder.url.lastPathComponent)
    }

    @Test func unwritableFolderIsAClearError() {
        #expect(throws: ReportError.self) {
            _ = try ReportFolder(root: URL(fileURLWithPath: "/proc/paystorm-nope"), profile: "p", seed: 1)
        }
    }
}
