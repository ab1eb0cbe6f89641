import Testing

@testable import Load

struct TimeseriesStoreTests {
    /// A soak keeps a row per second for hours: the store keeps the error counts in fixed slots, and every row
    /// reads back exactly as it went in (classes present with 0, classes without a CSV column, big counts).
    @Test func rowsReadBackExactlyAsAppended() {
        let errorSets: [[String: Int]] = [
            [:], ["missed": 0], ["missed": 3, "timeout": 2], ["reset": 1, "hung-up": 4, "missed": 0],
            ["tls": 7, "custom-class": 5, "missed": 1], ["dns": Int(Int32.max) + 1, "other": 0, "missed": 2],
        ]
        var store = TimeseriesStore()
        var appended: [TimeseriesRow] = []
        for second in 1...60 {
            let row = TimeseriesRow(
                second: second,
                intendedRate: Double(second) / 3,
                scheduled: second * 2,
                sent: second,
                ok: second - 1,
                non2xx: second % 3,
                errors: errorSets[second % errorSets.count],
                late: second % 5,
                inFlight: second % 7,
                p50Micros: Int64(second) * 10,
                p90Micros: Int64(second) * 20,
                p99Micros: Int64(second) * 30,
                maxMicros: Int64(second) * 40,
                serviceP99Micros: Int64(second) * 5
            )
            store.append(row)
            appended.append(row)
            #expect(store.lastSecond == second)
        }
        #expect(store.rows == appended)
        #expect(store.rows.map(\.csvLine) == appended.map(\.csvLine))
    }
}
