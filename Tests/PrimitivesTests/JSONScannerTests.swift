import Testing

@testable import Primitives

struct JSONScannerTests {
    /// Only integers `JSONDecoder` reads the same way: the fast readers fall back to it for the rest.
    @Test(
        arguments: [
            ("0,", 0), ("-7}", -7), ("123456789012345678 ", 123_456_789_012_345_678), ("1]", 1),
            ("01,", nil), ("1.5,", nil), ("1e3,", nil), ("1234567890123456789,", nil), ("12", nil), ("-,", nil),
        ] as [(String, Int64?)]
    )
    func readsOnlyPlainIntegers(text: String, expected: Int64?) {
        let bytes = Array(text.utf8)
        let value = bytes.withUnsafeBufferPointer { buffer in
            var scanner = JSONScanner(buffer)
            return scanner.plainInteger()
        }
        #expect(value == expected)
    }

    @Test(
        arguments: [
            ("plain-and-longer-than-a-word\"", "plain-and-longer-than-a-word"), ("\"", ""),
            ("with \\\"escape\"", nil), ("tab\there\"", nil), ("caf\u{E9}\"", nil), ("unterminated", nil),
        ] as [(String, String?)]
    )
    func readsOnlyPlainStrings(text: String, expected: String?) {
        let bytes = Array(text.utf8)
        let value = bytes.withUnsafeBufferPointer { buffer in
            var scanner = JSONScanner(buffer)
            return scanner.plainStringRest().map { String(decoding: $0, as: UTF8.self) }
        }
        #expect(value == expected)
    }

    @Test func readsAWordOnlyWhenItEndsAValue() {
        let bytes = Array("true , trueish".utf8)
        bytes.withUnsafeBufferPointer { buffer in
            var scanner = JSONScanner(buffer)
            let first = scanner.consume(word: "true")
            scanner.skipWhitespace()
            let comma = scanner.consume(UInt8(ascii: ","))
            scanner.skipWhitespace()
            let prefix = scanner.consume(word: "true")
            #expect(first && comma && !prefix && scanner.index == 7)
        }
    }
}
