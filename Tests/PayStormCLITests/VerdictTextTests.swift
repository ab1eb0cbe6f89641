import Foundation
import PayStorm
import Primitives
import Reporting
import Testing

@testable import PayStormCLI

/// The verdict block a run prints: its request line says what kind of errors there were.
struct VerdictTextTests {
    static func outcome(errors: [String: Int]) -> RunOutcome {
        let start = Date(timeIntervalSince1970: 1_790_000_000)
        let requests = RequestCounts(scheduled: 100, sent: 98, ok: 90, errors: errors, missed: 2)
        let report = RunReport(
            toolVersion: "0.1.0",
            profile: "smoke",
            seed: 42,
            startedAt: start,
            endedAt: start.addingTimeInterval(10),
            target: "embedded reference ledger",
            verdict: .pass,
            exitCode: 0,
            requests: ReportedRequests(requests)
        )
        return RunOutcome(report: report, folder: URL(fileURLWithPath: "/reports/run"), firstDetection: [:])
    }

    @Test func theRequestLineCountsTheErrorsByClassInTheReportsOrder() {
        let text = Command.verdictText(Self.outcome(errors: ["http5xx": 3, "timeout": 4, "unsent": 1]))
        #expect(
            text.contains("\nsent 98 of 100 intended, 90 ok, 8 errors (4 timeout, 3 http5xx, 1 unsent), 2 missed\n")
        )
    }

    @Test func aRunWithoutErrorsKeepsItsLine() {
        let text = Command.verdictText(Self.outcome(errors: [:]))
        #expect(text.contains("\nsent 98 of 100 intended, 90 ok, 0 errors, 2 missed\n"))
    }
}
