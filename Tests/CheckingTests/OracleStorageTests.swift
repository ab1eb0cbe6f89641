import Chaos
import Primitives
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
        var key: RecordKey { RecordKey(id) }
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
        // A refund reversed after it folded takes its ID out again (see `AccountBook.unfoldRefund`).
        for id in plain.sorted().enumerated().filter({ $0.offset % 3 == 0 }).map(\.element) {
            compact.remove(id)
            plain.remove(id)
        }
        compact.remove(base + 60_000)
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
        #expect(late.kept <= 16 && late.reserved <= 20)
        #expect(late.recordBytes <= 128)
        #expect(late.reserved <= max(early.reserved, 16))
        #expect(late.foldedIDs == 4000 - late.kept)
        // About 4 bytes an ID, growth slack included.
        #expect(late.foldedIDBytes <= 8 * late.foldedIDs)
        #expect(late.foldedIDBytes - early.foldedIDBytes <= 6 * (late.foldedIDs - early.foldedIDs) + 8192)
    }

    // Phrases are interned for the whole run; one that named each pulled forgery's ID made a phrase a forgery,
    // so a soak filled the table and its later witnesses lost their text.
    @Test func pulledForgeriesShareTheirPhrases() throws {
        func run(seconds: Int) throws -> (phrases: Int, pulled: Int) {
            let (checker, _, planned) = play(
                try PulledForgeryWitnessTests.pullingProfile(seconds: seconds, type: "consumable")
            )
            let pulled = planned.filter {
                $0.forgery == "made-up-transaction-id" || $0.forgery == "other-account-transaction-id"
            }
            return (checker.phraseCount, pulled.count)
        }
        let short = try run(seconds: 20)
        let long = try run(seconds: 200)
        #expect(long.pulled >= short.pulled + 50)
        #expect(long.phrases == short.phrases, "\(short) then \(long)")
    }

    /// Every account's book is moved twice as each delivery is booked: the rare never-accepted sample (a whole
    /// transaction) is kept out of line.
    @Test func accountBookKeepsItsNeverAcceptedSampleOutOfLine() {
        #expect(MemoryLayout<AccountBook>.stride < MemoryLayout<OracleTransaction>.stride + 64)
        var book = AccountBook()
        #expect(book.neverAcceptedSample == nil)
        book.neverAcceptedSample = book.newTx("7", label: Label(product: "p", group: nil), type: nil)
        #expect(book.neverAcceptedSample?.id == "7")
        book.neverAccepted.insert(7)
        book.accepted(7)
        #expect(book.neverAcceptedSample == nil)
    }

    @Test func logEntryKeepsItsFieldsInSixteenBytes() {
        #expect(MemoryLayout<LogEntry>.stride == 16)
        let cases: [(UInt64, UInt32)] = [(0, 0), (1, 99_999), (1 << 44 - 1, 7), (123_456_789_012, 100_000), (5, .max)]
        for (delivery, phrase) in cases {
            for part in [Part(), .purchase, .acks, .rejections, .refund, .recent] {
                var entry = LogEntry(at: 12.345678, delivery: delivery, phrase: phrase)
                entry.part = part.rawValue
                #expect(entry.at == 12.345678)
                #expect(entry.delivery == delivery)
                // Past the phrase table's limit, every phrase is the placeholder, as `OracleState.intern` gives.
                #expect(entry.phrase == (phrase < LogEntry.phraseLimit ? phrase : .max))
                #expect(entry.part == part.rawValue)
            }
        }
        // A delivery number past 44 bits (never reached) is clamped, not mixed into the phrase.
        let huge = LogEntry(at: 0, delivery: .max, phrase: 3)
        #expect(huge.delivery == 1 << 44 - 1 && huge.phrase == 3)
    }

    @Test(
        arguments: [
            ("1108962000000001", UInt64(1_108_962_000_000_001), true),
            ("7", 7, true),
            ("0", 0, false),
            ("012", 12, false),
            ("+12", 12, false),
            ("-1", nil, false),
            ("tx-1", nil, false),
            ("", nil, false),
            ("18446744073709551616", nil, false),
        ] as [(String, UInt64?, Bool)]
    )
    func recordKeyKeepsCanonicalDecimalsAsNumbers(id: String, value: UInt64?, isNumber: Bool) {
        let key = RecordKey(id)
        #expect(key.id == id)
        #expect((key.text == nil) == isNumber)
        // What `UInt64(id)` reads, as the folded-ID set was always keyed.
        #expect(key.value == value)
        #expect(key.value == UInt64(id))
    }

    @Test func transactionKeepsItsIDsAndRefundDates() {
        // Its scalars, a shared label and four trail entries inline (16 bytes each).
        #expect(MemoryLayout<OracleTransaction>.stride <= 128)
        let label = Label(product: "coins", group: nil)
        for (id, original) in [("1108962000000001", "1108962000000000"), ("t-1", "o-1"), ("012", "5")] {
            var tx = OracleTransaction(id: id, sequence: 1, label: label, type: .consumable)
            #expect(tx.id == id && tx.key == RecordKey(id) && tx.has(RecordKey(id)))
            #expect(!tx.has(RecordKey("9")) && !tx.has(RecordKey("other")))
            tx.original = original
            #expect(tx.original == original && tx.originalKey == RecordKey(original))
            tx.revokedDate = 1_000
            tx.reinstatedDate = 2_000
            let copy = tx
            tx.revokedDate = 3_000
            // Copies do not share a change to what is kept out of line.
            #expect(copy.revokedDate == 1_000 && tx.revokedDate == 3_000 && tx.reinstatedDate == 2_000)
            tx.original = nil
            #expect(tx.original == nil && tx.id == id)
        }
        // The product type and the narrow counters read back as set, next to the flags they share a word with.
        for type in [nil] + ProductKind.allCases.map(Optional.some) {
            var tx = OracleTransaction(id: "7", sequence: 3, label: label, type: type)
            tx.forged = true
            tx.superseded = true
            tx.rejected = 70_000
            tx.lastRejection = 503
            tx.chains = 2
            #expect(tx.type == type && tx.forged && tx.superseded && !tx.genuine && tx.sequence == 3)
            #expect(tx.rejected == Int(UInt16.max) && tx.lastRejection == 503 && tx.chains == 2)
        }
    }

    @Test func smallMapStoresReplacesAndRemovesInInsertionOrder() {
        var map = SmallMap<String, Int>()
        var plain: [String: Int] = [:]
        var rng = SplitMix64(seed: 5)
        for _ in 0..<400 {
            let key = "p\(rng.next() % 9)"
            let value: Int? = rng.next() % 4 == 0 ? nil : Int(rng.next() % 100)
            map[key] = value
            plain[key] = value
            #expect(map[key] == plain[key])
        }
        #expect(map.count == plain.count)
        #expect(Dictionary(uniqueKeysWithValues: map.map { ($0.key, $0.value) }) == plain)
        #expect(map.values.sorted() == plain.values.sorted())
    }

    @Test func entryListAnswersLikeAnArray() {
        var list = EntryList()
        var plain: [LogEntry] = []
        var rng = SplitMix64(seed: 9)
        func same() -> Bool {
            list.count == plain.count
                && zip(list, plain).allSatisfy { $0.delivery == $1.delivery && $0.part == $1.part && $0.at == $1.at }
        }
        for step in 0..<5000 {
            var entry = LogEntry(at: Double(step), delivery: UInt64(step), phrase: UInt32(step % 7))
            entry.part = Part.all.rawValue & (1 << (rng.next() % 5))
            switch rng.next() % 5 {
            case 0,
                1 where plain.count < 12:
                list.append(entry)
                plain.append(entry)
            case 2 where !plain.isEmpty:
                let index = Int(rng.next() % UInt64(plain.count))
                list.remove(at: index)
                plain.remove(at: index)
            case 3 where !plain.isEmpty:
                let index = Int(rng.next() % UInt64(plain.count))
                list[index] = entry
                plain[index] = entry
            default:
                break
            }
            #expect(same())
        }
        // Four entries take no storage of their own; a fifth does, and gives it back once removed.
        var four = EntryList()
        for step in 0..<4 {
            var entry = LogEntry(at: 0, delivery: UInt64(step), phrase: 0)
            entry.part = Part.acks.rawValue
            four.append(entry)
        }
        #expect(four.count == 4 && four.reserved == 4)
        var fifth = LogEntry(at: 0, delivery: 9, phrase: 0)
        fifth.part = Part.recent.rawValue
        four.append(fifth)
        #expect(four.reserved > 4)
        four.remove(at: 0)
        #expect(four.reserved == 4 && four.map(\.delivery) == [1, 2, 3, 9])
    }
}
