import Foundation
import Testing

@testable import Signing

/// The base64url encoder against Foundation's base64 (with `+/` mapped to `-_` and the padding cut), on
/// random bytes: every length from 0 to 100 and 8 KB (a nested JWS's payload), appended after 0 to 7 bytes
/// already in the buffer so that every alignment of the writes is covered.
struct Base64URLTests {
    private static func foundationBase64URL(_ bytes: [UInt8]) -> [UInt8] {
        let standard = Data(bytes).base64EncodedString()
        return Array(
            standard.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                .replacingOccurrences(of: "=", with: "").utf8
        )
    }

    private static func randomBytes(_ count: Int, _ generator: inout some RandomNumberGenerator) -> [UInt8] {
        (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
    }

    @Test(arguments: Array(0...100) + [8192, 8191, 8190])
    func encodesAsFoundationDoes(length: Int) {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<4 {
            let bytes = Self.randomBytes(length, &generator)
            let expected = Self.foundationBase64URL(bytes)
            #expect(JWS.base64URL(bytes) == String(decoding: expected, as: UTF8.self))
            for lead in 0..<8 {
                let before = Self.randomBytes(lead, &generator)
                var output = before
                JWS.appendBase64URL(bytes, to: &output)
                #expect(output == before + expected, "length \(length) after \(lead) bytes")
            }
        }
    }

    @Test func encodesEveryByteValueInEveryPosition() {
        // 0...255 three times, shifted by one each time: each byte value at each offset within a 3-byte group.
        let bytes = (0..<3).flatMap { shift in (0..<256).map { UInt8(($0 + shift) % 256) } }
        for start in 0..<3 {
            let slice = Array(bytes[start...])
            #expect(JWS.base64URL(slice) == String(decoding: Self.foundationBase64URL(slice), as: UTF8.self))
        }
    }
}
