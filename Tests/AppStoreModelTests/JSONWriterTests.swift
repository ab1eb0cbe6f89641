import Foundation
import Testing

@testable import AppStoreModel

/// `JSONWriter`'s own number formatting against `JSONEncoder`'s, byte for byte.
struct JSONWriterTests {
    /// Every digit count and sign, the pair table's edges (a leading single digit or pair) and both extremes.
    static let integers: [Int64] = {
        var values: [Int64] = [
            0, 1, 9, 10, 11, 99, 100, 101, 999, 1000, 1_700_000_000_123, .max, .min, .max - 1, .min + 1,
        ]
        var power: Int64 = 1
        for _ in 0..<18 {
            power *= 10
            values += [power - 1, power, power + 1, power * 5 + 7]
        }
        var generator = SystemRandomNumberGenerator()
        values += (0..<200).map { _ in Int64.random(in: .min ... .max, using: &generator) >> Int64.random(in: 0...62) }
        return values + values.map { $0 == .min ? .max : -$0 }
    }()

    @Test func writesIntegersAsJSONEncoderDoes() throws {
        for value in Self.integers {
            let payload = JWSTransactionDecodedPayload(
                purchaseDate: value,
                quantity: Int32(truncatingIfNeeded: value),
                price: value
            )
            let fast = String(decoding: AppStoreJSON.encode(payload), as: UTF8.self)
            let reference = String(decoding: try AppStoreJSON.encoder().encode(payload), as: UTF8.self)
            #expect(fast == reference, "\(value)")
        }
    }

    /// A writer on temporary stack storage writes the same bytes, also when it outgrows that storage and
    /// moves to the heap (a payload of several hundred bytes in 64).
    @Test func writesTheSameBytesOnTemporaryStorageAndAfterOutgrowingIt() throws {
        let payload = JWSTransactionDecodedPayload(
            originalTransactionId: "2000000000000001",
            transactionId: "2000000000000002",
            bundleId: "com.example.paystorm",
            productId: "com.example.paystorm.monthly",
            purchaseDate: 1_700_000_000_000,
            quantity: 1,
            signedDate: 1_700_000_000_123,
            storefront: "USA",
            price: 9990
        )
        let reference = Array(try AppStoreJSON.encoder().encode(payload))
        for capacity in [64, 4096] {
            let written = JSONWriter.withTemporaryStorage(capacity: capacity) { writer in
                payload.writeJSON(to: &writer)
                payload.writeJSON(to: &writer)
                return writer.bytes
            }
            #expect(written == reference + reference, "capacity \(capacity)")
        }
    }
}
