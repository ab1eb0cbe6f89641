/// A cursor over JSON bytes with the lexical steps PayStorm's fast readers share (the payload reader of
/// AppStoreModel, the verifier's claims scan): whitespace, punctuation, plain strings and plain integers.
///
/// It accepts only the common, unambiguous forms (an ASCII string without escapes, an integer of at most 18
/// digits that `JSONDecoder` reads the same way) and says nil to anything else, so its readers fall back to
/// `JSONDecoder` and agree with it by construction. Inlinable: it runs once per byte of every payload verified.
public struct JSONScanner {
    /// The bytes scanned.
    public let bytes: UnsafeBufferPointer<UInt8>
    /// The offset of the next byte to read.
    public var index = 0

    /// Starts at the beginning of `bytes`.
    @inlinable
    public init(_ bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
    }

    /// Whether every byte has been read.
    @inlinable
    public var isAtEnd: Bool { index >= bytes.count }

    /// Skips spaces, tabs, line feeds and carriage returns.
    @inlinable
    public mutating func skipWhitespace() {
        while index < bytes.count, Self.isWhitespace(bytes[index]) { index += 1 }
    }

    /// Consumes `byte` when it is next; false (nothing consumed) otherwise.
    @inlinable
    public mutating func consume(_ byte: UInt8) -> Bool {
        guard index < bytes.count, bytes[index] == byte else { return false }
        index += 1
        return true
    }

    /// Whether the next byte ends a scalar value: a comma, a closing bracket or brace, or whitespace.
    @inlinable
    public var isAtValueEnd: Bool {
        guard index < bytes.count else { return false }
        let byte = bytes[index]
        return byte == UInt8(ascii: ",") || byte == UInt8(ascii: "}") || byte == UInt8(ascii: "]")
            || Self.isWhitespace(byte)
    }

    /// The bytes of a plain string (ASCII, no escape, no control character) whose opening quote was consumed,
    /// consuming its closing quote; nil, at the offending byte, for anything else.
    @inlinable
    public mutating func plainStringRest() -> UnsafeBufferPointer<UInt8>? {
        let start = index
        skipPlainWords()
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                let text = UnsafeBufferPointer(rebasing: bytes[start..<index])
                index += 1
                return text
            }
            guard byte >= 0x20, byte < 0x80, byte != UInt8(ascii: "\\") else { return nil }
            index += 1
        }
        return nil
    }

    /// `-?(0|[1-9][0-9]{0,17})` followed by the end of a value: an integer `JSONDecoder` reads the same way.
    /// Nil for anything else (a fraction, an exponent, a leading zero, 19 digits or more).
    @inlinable
    public mutating func plainInteger() -> Int64? {
        let negative = consume(UInt8(ascii: "-"))
        let start = index
        var value: Int64 = 0
        while index < bytes.count, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") {
            value = value * 10 + Int64(bytes[index] - UInt8(ascii: "0"))
            index += 1
            guard index - start <= 18 else { return nil }
        }
        let digits = index - start
        guard digits >= 1, digits == 1 || bytes[start] != UInt8(ascii: "0"), isAtValueEnd else { return nil }
        return negative ? -value : value
    }

    /// Consumes `word` (`true`, `false`, `null`) when it is next and ends a value.
    @inlinable
    public mutating func consume(word: StaticString) -> Bool {
        let count = word.utf8CodeUnitCount
        guard index + count < bytes.count else { return false }
        let same = word.withUTF8Buffer { literal in
            (0..<count).allSatisfy { bytes[index + $0] == literal[$0] }
        }
        guard same else { return false }
        index += count
        guard isAtValueEnd else {
            index -= count
            return false
        }
        return true
    }

    @inlinable
    static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
    }

    /// Skips 8 bytes at a time while none of them is a quote, a backslash, a control character or non-ASCII
    /// (a nested JWS is a 2–4 KB string); the byte loop then reads the rest.
    @inlinable
    mutating func skipPlainWords() {
        index = JSONEscaping.plainWordsEnd(bytes, from: index, asciiOnly: true)
    }
}
