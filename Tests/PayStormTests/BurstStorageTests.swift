import Testing

@testable import PayStorm

struct BurstStorageTests {
    /// Deliveries in flight swell while a target stalls: once answered, the table's storage follows its count
    /// down, and what it holds is untouched.
    @Test func dictionaryGivesBackABurstsStorageAndKeepsItsEntries() {
        var table: [Int: String] = [:]
        for key in 0..<10_000 { table[key] = "d\(key)" }
        let peak = table.capacity
        for key in 0..<9_990 {
            table.removeValue(forKey: key)
            table.releaseBurstStorage()
        }
        #expect(peak >= 10_000 && table.capacity <= 512)
        #expect(table.count == 10 && (9_990..<10_000).allSatisfy { table[$0] == "d\($0)" })
    }

    @Test func smallTablesKeepTheirStorage() {
        var table: [Int: Int] = [:]
        for key in 0..<100 { table[key] = key }
        let capacity = table.capacity
        for key in 0..<99 {
            table.removeValue(forKey: key)
            table.releaseBurstStorage()
        }
        #expect(table.capacity == capacity && table[99] == 99)
    }
}

struct HeapTrimTests {
    /// Once a minute of the run's clock, whatever the tick rate, and never twice for one minute.
    @Test func trimsOnceAnInterval() {
        var trim = HeapTrim(interval: 60)
        var trimmedAt: [Double] = []
        for tick in 0..<1_900 {
            let now = Double(tick) * 0.1 + (tick.isMultiple(of: 7) ? 0.05 : 0)
            if trim.tick(at: now) { trimmedAt.append(now) }
        }
        #expect(trimmedAt == [60, 120, 180])
    }
}
