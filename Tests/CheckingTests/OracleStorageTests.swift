import Profile
import Simulation
import Testing

@testable import Checking

/// The oracle's books stay small over a long soak: per account, what a judgement or a witness needs, in
/// storage that does not keep its peak size.
struct OracleStorageTests {
    struct Record: KeyedByID, Sendable {
        var id: String
        var value: Int
    }

    @Test func smallTableFindsReplacesAndRemovesRecordsByID() {
        var table = SmallTable<Record>()
        table["a"] = Record(id: "a", value: 1)
        table["b"] = Record(id: "b", value: 2)
        table["a"]?.value = 3
        table["c"] = nil
        #expect(table["a"]?.value == 3)
        #expect(table["c"] == nil)
        table["b"] = nil
        #expect(table.count == 1)
        #expect(table.map(\.key) == ["a"])
        #expect(table.values.map(\.value) == [3])
    }

    @Test func smallTableGivesBackItsPeakCapacity() {
        var table = SmallTable<Record>()
        for i in 0..<33 { table[String(i)] = Record(id: String(i), value: i) }
        for i in 0..<29 { table[String(i)] = nil }
        #expect(table.capacity >= 33)
        table.shrink()
        #expect(table.capacity < 16)
        #expect(table.map(\.key) == ["29", "30", "31", "32"])
    }

    @Test func compactIDSetAnswersLikeASet() {
        var rng = SplitMix64(seed: 11)
        var compact = CompactIDSet()
        var plain = Set<UInt64>()
        let base: UInt64 = 1_000_000_000_000_000_000
        for _ in 0..<5000 {
            // Mostly near one another, now and then far below or above the first ID (the plain-set path).
            let id =
                switch rng.next() % 10 {
                case 0: rng.next()
                case 1: base - rng.next() % 1000
                default: base + rng.next() % 50_000
                }
            compact.insert(id)
            plain.insert(id)
        }
        #expect(compact.count == plain.count)
        for id in plain { #expect(compact.contains(id)) }
        for _ in 0..<5000 {
            let id = base - 1000 + rng.next() % 60_000
            #expect(compact.contains(id) == plain.contains(id))
        }
    }

    // A soak buys and renews without end; the oracle used to keep a hash table sized for each account's
    // peak, 216 bytes a transaction, and 16 bytes or more for every transaction ever folded.
    @Test func booksStayBoundedOverThousandsOfPurchases() throws {
        var script = try Script(try scriptProfile())
        script.buyCoins(1000, from: 1, first: 1_000_000)
        let early = script.checker.storage(of: script.token)
        script.buyCoins(3000, from: 200, first: 2_000_000)
        let late = script.checker.storage(of: script.token)
        #expect(late.kept <= 16 && late.reserved <= 32)
        #expect(late.recordBytes <= 128)
        #expect(late.reserved <= max(early.reserved, 16))
        #expect(late.foldedIDs == 4000 - late.kept)
        // About 4 bytes an ID, growth slack included.
        #expect(late.foldedIDBytes <= 8 * late.foldedIDs)
        #expect(late.foldedIDBytes - early.foldedIDBytes <= 6 * (late.foldedIDs - early.foldedIDs) + 8192)
    }
}
