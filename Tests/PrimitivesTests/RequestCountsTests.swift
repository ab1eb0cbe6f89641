import Foundation
import Testing

@testable import Primitives

/// The one request-counters type: its JSON keys (those of the load command's `summary.json`), its sum, and
/// counters written before some of them were counted.
struct RequestCountsTests {
    static let sample = RequestCounts(
        scheduled: 10,
        sent: 7,
        ok: 5,
        statusClasses: ["2xx": 5, "5xx": 1],
        errors: ["timeout": 1],
        missed: 2,
        unsent: 1,
        bodyBytes: 300,
        resent: 1
    )

    @Test func countersWriteEveryFieldUnderItsName() throws {
        let object = try JSONSerialization.jsonObject(with: JSONEncoder().encode(Self.sample)) as? [String: Any]
        #expect(
            object.map { Set($0.keys) } == [
                "scheduled", "sent", "unsent", "ok", "statusClasses", "errors", "missed", "bodyBytes", "resent",
            ]
        )
        #expect(try JSONDecoder().decode(RequestCounts.self, from: JSONEncoder().encode(Self.sample)) == Self.sample)
    }

    @Test func countersSumFieldByField() {
        let sum = Self.sample + Self.sample
        #expect(sum.scheduled == 20 && sum.sent == 14 && sum.ok == 10 && sum.missed == 4 && sum.unsent == 2)
        #expect(sum.bodyBytes == 600 && sum.resent == 2 && sum.statusClasses == ["2xx": 10, "5xx": 2])
        #expect(sum.errors == ["timeout": 2] && sum.failed == 6)
    }

    @Test func countersWithoutUnsentBodyBytesOrResentReadThemAsZero() throws {
        let text = #"{"scheduled":3,"sent":3,"ok":3,"statusClasses":{"2xx":3},"errors":{},"missed":0}"#
        let counts = try JSONDecoder().decode(RequestCounts.self, from: Data(text.utf8))
        #expect(counts == RequestCounts(scheduled: 3, sent: 3, ok: 3, statusClasses: ["2xx": 3]))
    }
}
