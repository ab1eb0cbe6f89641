internal import Foundation
import Primitives
internal import Profile
internal import Synchronization

/// The clock and the random identifiers minting writes into payloads it builds itself.
extension Minter {
    /// The current time in UNIX milliseconds.
    public static func nowMilliseconds() -> Int64 {
        Int64((Date().timeIntervalSince1970 * 1000).rounded(.down))
    }

    /// A random 16-digit transaction identifier in the style of the sandbox (`2000…`).
    public static func randomTransactionId() -> String {
        var digits = 100_000_000_000 + IdentifierBits.next() % 900_000_000_000
        // Written in place: concatenating "2000" and a String of the number made two strings for one.
        return String(unsafeUninitializedCapacity: 16) { buffer in
            buffer[0] = UInt8(ascii: "2")
            for index in 1..<4 { buffer[index] = UInt8(ascii: "0") }
            for index in (4..<16).reversed() {
                buffer[index] = UInt8(ascii: "0") + UInt8(digits % 10)
                digits /= 10
            }
            return 16
        }
    }

    /// A fresh lowercase UUID (version 4), as Apple writes `notificationUUID`.
    public static func randomUUID() -> String {
        // Written here rather than through `UUID()`, which opens /dev/urandom on every call on Linux:
        // that was a tenth of minting a notification.
        let high = IdentifierBits.next() & 0xFFFF_FFFF_FFFF_0FFF | 0x0000_0000_0000_4000
        let low = IdentifierBits.next() & 0x3FFF_FFFF_FFFF_FFFF | 0x8000_0000_0000_0000
        return String(unsafeUninitializedCapacity: 36) { buffer in
            var index = 0
            for (word, nibbles) in [(high, 0..<16), (low, 16..<32)] {
                for nibble in nibbles {
                    if nibble == 8 || nibble == 12 || nibble == 16 || nibble == 20 {
                        buffer[index] = UInt8(ascii: "-")
                        index += 1
                    }
                    let shift = UInt64(60 - 4 * (nibble % 16))
                    buffer[index] = hexDigits[Int(word >> shift & 0xF)]
                    index += 1
                }
            }
            return index
        }
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)
}

/// The bits of minted identifiers: SplitMix64 over one shared counter, seeded once from the system.
///
/// `SystemRandomNumberGenerator` is a `getrandom` system call per draw, six per notification (four
/// transaction identifiers and a UUID): 2% of minting one. Identifiers need to be distinct and
/// unguessable only as test data is, not secret, so a counter's SplitMix64 image serves: distinct
/// for 2⁶⁴ draws (the finalizer is a bijection), independent of any run's seed, so replaying a run never
/// replays its identifiers. A relaxed atomic add keeps it lock-free across minting threads.
enum IdentifierBits {
    private static let counter: Atomic<UInt64> = {
        var system = SystemRandomNumberGenerator()
        return Atomic(system.next())
    }()

    /// The next 64 bits.
    static func next() -> UInt64 {
        SplitMix64.mix(counter.wrappingAdd(0x9E37_79B9_7F4A_7C15, ordering: AtomicUpdateOrdering.relaxed).newValue)
    }
}
