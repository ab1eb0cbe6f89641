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
