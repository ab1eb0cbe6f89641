import Primitives
import Reporting
import Testing

@testable import Load
@testable import PayStorm

/// A run's request counts in `summary.json`, as the report takes them from the load recorder.
struct ReportedRequestsTests {
    @Test func aRunsRequestCountsCarryTheRequestsTheTransportResent() throws {
        let recorder = try LoadRecorder(directory: nil)
        for id in 0..<3 {
            recorder.record(
                LoadResult(
                    id: id,
                    kind: "webhook",
                    intended: .zero,
                    sent: .zero,
                    wireStart: .zero,
                    received: .milliseconds(500),
                    status: 200,
                    resent: id == 0
                )
            )
        }
        var stats = LoadEngineStats()
        stats.elapsed = .seconds(1)
        (stats.sent, stats.scheduled) = (3, 3)
        let summary = recorder.finish(stats, writesSummary: false)
        let totals = ReportedRequests(run: summary.totals, late: summary.late, acknowledging: [:]).counts
        #expect(totals.resent == 1 && totals.sent == 3 && totals.ok == 3)
    }
}
