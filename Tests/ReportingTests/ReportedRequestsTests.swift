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

    /// The main classes come first in a fixed order, zeros included; any other class that occurred follows by
    /// name; together they are every failure.
    @Test func errorsByClassListTheMainClassesThenTheOthers() {
        var counts = Self.run
        counts.statusClasses["3xx"] = 2
        counts.errors["dns"] = 0
        let reported = ReportedRequests(run: counts, late: 4, acknowledging: ["4xx": 1])
        let classes = reported.errorsByClass
        #expect(classes.map(\.name) == ["timeout", "reset", "refused", "http4xx", "http5xx", "http3xx", "unsent"])
        #expect(classes.map(\.count) == [1, 0, 0, 2, 1, 2, 1])
        #expect(classes.map(\.count).reduce(0, +) == reported.errorCount)
    }

    /// report.html's table: each class with its share of the intended requests and what it means, then the
    /// missed and late sends.
    @Test func theHTMLTableShowsEveryClassWithItsShareThenMissedAndLate() {
        let reported = ReportedRequests(run: Self.run, late: 4, acknowledging: [:])
        let html = HTMLReport.errorsTable(reported)
        #expect(html.hasPrefix("<h2>Errors by class</h2>\n"))
        let rows = html.split(separator: "\n").filter { $0.hasPrefix("<tr><td>") }
        #expect(
            rows.map { $0.split(separator: "<td>")[1].prefix { $0 != "<" } } == [
                "timeout", "reset", "refused", "http4xx", "http5xx", "unsent", "missed", "late",
            ]
        )
        #expect(html.contains(#"<tr><td>http4xx</td><td class="num">3</td><td class="num">25.00%</td>"#))
        #expect(html.contains(#"<tr><td>late</td><td class="num">4</td><td class="num">33.33%</td>"#))
        #expect(html.contains("its timeout ran out before it went on a connection"))
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
