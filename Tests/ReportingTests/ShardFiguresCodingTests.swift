import Foundation
import Primitives
import Reporting
import Testing

/// A shard's figures keep the counters a merge sums, under the names shards have always written.
struct ShardFiguresCodingTests {
    static let figures = ShardFigures(
        counts: [
            "all": RequestCounts(
                scheduled: 4,
                sent: 3,
                ok: 3,
                statusClasses: ["2xx": 3],
                missed: 1,
                bodyBytes: 90,
                resent: 1
            )
        ],
        histograms: [:],
        late: 0,
        durationSeconds: 2,
        tallies: [:],
        unchecked: [:],
        heldPurchases: 1
    )

    @Test func aShardWritesEachKindsCountersWithoutBodyBytesOrResent() throws {
        let object = try JSONSerialization.jsonObject(with: JSONEncoder().encode(Self.figures)) as? [String: Any]
        let all = (object?["counts"] as? [String: Any])?["all"] as? [String: Any]
        #expect(all.map { Set($0.keys) } == ["scheduled", "sent", "unsent", "ok", "statusClasses", "errors", "missed"])
        #expect(
            object.map { Set($0.keys) } == [
                "counts", "histograms", "late", "durationSeconds", "tallies", "unchecked", "heldPurchases",
            ]
        )
    }

    @Test func aShardReadsBackItsFigures() throws {
        let read = try JSONDecoder().decode(ShardFigures.self, from: JSONEncoder().encode(Self.figures))
        var expected = Self.figures
        expected.counts["all"]?.bodyBytes = 0
        expected.counts["all"]?.resent = 0
        #expect(read == expected)
    }
}
