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

    /// Every byte a plain string cannot hold, at every offset of a string longer than one 8-byte word and read from
    /// past the start of the buffer: the word-at-a-time skip stops before it and the string is refused.
    @Test(arguments: [UInt8(ascii: "\""), UInt8(ascii: "\\"), 0x00, 0x1F, 0x80, 0xC3])
    func skipsWordsOnlyUpToABytePlainStringsCannotHold(special: UInt8) {
        let plain = [UInt8]("{\"k\":\"eyJhbGciOiJFUzI1NiIsIng1YyI6WyJNSUlCL.-_\"".utf8)
        let start = 6
        for offset in start..<(plain.count - 1) {
            var bytes = plain
            bytes[offset] = special
            bytes.withUnsafeBufferPointer { buffer in
                var scanner = JSONScanner(buffer)
                scanner.index = start
                scanner.skipPlainWords()
                #expect(scanner.index <= offset && offset - scanner.index < 8 && (scanner.index - start) % 8 == 0)
                scanner.index = start
                #expect(special == UInt8(ascii: "\"") || scanner.plainStringRest() == nil)
            }
        }
        plain.withUnsafeBufferPointer { buffer in
            var scanner = JSONScanner(buffer)
            scanner.index = start
            scanner.skipPlainWords()
            #expect(scanner.index == start + (plain.count - 1 - start) / 8 * 8)
        }
    }

    /// Escaping leaves UTF-8 as it is: a word of non-ASCII bytes needs no escape, while the scanner stops at it.
    @Test func escapingSkipsNonASCIIWordsTheScannerStopsAt() {
        let bytes = Array("caf\u{E9} cr\u{E8}me br\u{FB}l\u{E9}e, twice over".utf8)
        bytes.withUnsafeBufferPointer { buffer in
            #expect(JSONEscaping.plainPrefixLength(buffer) == bytes.count / 8 * 8)
            var scanner = JSONScanner(buffer)
            scanner.skipPlainWords()
            #expect(scanner.index == 0)
        }
    }
}
