import Foundation
import Testing

@testable import AppStoreServerAPI

struct ReceiptDateTextTests {
    /// Instants around Los Angeles's switches to and from daylight saving time, a second either side of each.
    private static let transitions: [Int64] = {
        var instants: [Int64] = []
        var date = Date(timeIntervalSince1970: 86_400)
        let zone = ReceiptDateText.losAngeles
        while let next = zone.nextDaylightSavingTimeTransition(after: date), next.timeIntervalSince1970 < 4.2e9 {
            let milliseconds = Int64(next.timeIntervalSince1970) * 1000
            instants += [-1001, -1000, -1, 0, 1, 999, 1000].map { milliseconds + $0 }
            date = next
        }
        return instants
    }()

    @Test func writesTheBytesFoundationsFormatterWrites() {
        // An odd step in milliseconds: some 3000 instants over 130 years, at every kind of hour, second and millisecond.
        let spread = Array(stride(from: Int64(86_400_000), to: 4_200_000_000_000, by: 1_399_971_337))
        let edges: [Int64] = [
            86_400_000, 951_782_400_000, 951_868_799_999, 1_767_225_599_999, 1_767_225_600_000,
            253_402_214_399_999, 4_102_444_800_000, 0, 86_399_999, 253_402_300_799_999,
        ]
        #expect(Self.transitions.count > 500)
        for milliseconds in edges + Self.transitions + spread {
            #expect(ReceiptDateText.utc(milliseconds) == ReceiptDateText.formatted(milliseconds, zone: "Etc/GMT"))
            #expect(
                ReceiptDateText.pacific(milliseconds)
                    == ReceiptDateText.formatted(milliseconds, zone: "America/Los_Angeles")
            )
        }
    }
}
