import Foundation
import Primitives
import Testing

@testable import Reporting

/// The report's request counters: the run's counters with HTTP failures counted by class, under the names
/// `summary.json` has always used.
struct ReportedRequestsCodingTests {
    static let run = RequestCounts(
        scheduled: 12,
        sent: 10,
        ok: 6,
        statusClasses: ["2xx": 5, "4xx": 3, "5xx": 1],
        errors: ["timeout": 1, "unsent": 1, "missed": 2],
        missed: 2,
        unsent: 1,
        bodyBytes: 640,
        resent: 1
    )

    @Test func statusesOutside2xxAreErrorsByClassUnlessTheirRoleAcknowledgedThem() {
        let reported = ReportedRequests(run: Self.run, late: 4, acknowledging: ["4xx": 1])
        #expect(reported.counts.errors == ["timeout": 1, "unsent": 1, "http4xx": 2, "http5xx": 1])
        #expect(reported.errorCount == 5 && reported.late == 4)
        #expect(reported.counts.statusClasses.isEmpty && reported.counts.bodyBytes == 0)
    }

    @Test func writesTheScheduledCountAsIntendedAndReadsItBack() throws {
        let reported = ReportedRequests(run: Self.run, late: 4, acknowledging: ["4xx": 1])
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let json = try encoder.encode(reported)
        let expected =
            #"{"errors":{"http4xx":2,"http5xx":1,"timeout":1,"unsent":1},"intended":12,"late":4,"#
            + #""missed":2,"ok":6,"resent":1,"sent":10,"unsent":1}"#
        #expect(String(decoding: json, as: UTF8.self) == expected)
        #expect(try JSONDecoder().decode(ReportedRequests.self, from: json) == reported)
    }

    @Test func sumsTwoShardsCountersAndLateSends() {
        let one = ReportedRequests(RequestCounts(scheduled: 3, sent: 3, ok: 2, errors: ["http5xx": 1]), late: 1)
        let two = ReportedRequests(RequestCounts(scheduled: 2, sent: 1, ok: 1, missed: 1, resent: 1), late: 2)
        let sum = one + two
        #expect(sum.counts == RequestCounts(scheduled: 5, sent: 4, ok: 3, errors: ["http5xx": 1], missed: 1, resent: 1))
        #expect(sum.late == 3)
    }
}
