/// JSON string escaping (RFC 8259 §7) as `JSONEncoder` writes it: quote, backslash and control characters, with
/// the short forms `\n`, `\r`, `\t`, `\b` and `\f`; slashes and non-ASCII stay as they are (UTF-8). Every JSON
/// writer of PayStorm escapes through it, so a signed payload, a request body and a history line agree.
public enum JSONEscaping {
    /// `value` escaped for the inside of a JSON string (no quotes added).
    public static func escaped(_ value: String) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(value.utf8.count)
        append(value, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// Appends `value`'s UTF-8 bytes to `out`, escaped for the inside of a JSON string (no quotes added).
    public static func append(_ value: String, to out: inout [UInt8]) {
        withUTF8(value) { buffer in write(buffer) { out.append(contentsOf: $0) } }
    }

    /// Calls `body` with `value`'s UTF-8 bytes, copying only when the string is not stored contiguously.
    @inlinable
    public static func withUTF8<R>(_ value: String, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        if let result = value.utf8.withContiguousStorageIfAvailable(body) { return result }
        var copy = value
        return copy.withUTF8(body)
    }

    /// Escapes `buffer` for the inside of a JSON string, handing `sink` its pieces in order: runs of bytes that
    /// need no escape, as they are, and escape sequences. Inlinable, so that a writer's sink is inlined too.
    @inlinable
    public static func write(_ buffer: UnsafeBufferPointer<UInt8>, to sink: (UnsafeBufferPointer<UInt8>) -> Void) {
        var start = 0
        for index in plainPrefixLength(buffer)..<buffer.count where needsEscape(buffer[index]) {
            if index > start { sink(UnsafeBufferPointer(rebasing: buffer[start..<index])) }
            start = index + 1
            writeEscape(of: buffer[index], to: sink)
        }
        if start < buffer.count { sink(UnsafeBufferPointer(rebasing: buffer[start...])) }
    }

    /// Whether a byte cannot stand as it is inside a JSON string.
    @inlinable
    static func needsEscape(_ byte: UInt8) -> Bool {
        byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\")
    }

    /// Hands `sink` the escape sequence of a byte that ``needsEscape(_:)``.
    @usableFromInline
    static func writeEscape(of byte: UInt8, to sink: (UnsafeBufferPointer<UInt8>) -> Void) {
        let short: UInt8? =
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"): byte
            case 0x0A: UInt8(ascii: "n")
            case 0x0D: UInt8(ascii: "r")
            case 0x09: UInt8(ascii: "t")
            case 0x08: UInt8(ascii: "b")
            case 0x0C: UInt8(ascii: "f")
            default: nil
            }
        let hex = Array("0123456789abcdef".utf8)
        let sequence: [UInt8] =
            if let short { [UInt8(ascii: "\\"), short] } else {
                Array("\\u00".utf8) + [hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]]
            }
        sequence.withUnsafeBufferPointer(sink)
    }

    /// How many leading bytes need no escape, eight at a time: a word is plain when none of its bytes is below
    /// 0x20, a quote or a backslash (the classic has-zero-byte test on the word and its XORs). Most strings need
    /// no escape at all, and a nested JWS is a few kilobytes.
    @inlinable
    public static func plainPrefixLength(_ buffer: UnsafeBufferPointer<UInt8>) -> Int {
        plainWordsEnd(buffer, from: 0, asciiOnly: false)
    }

    /// The offset of the first 8-byte word from `start` on that may hold a byte below 0x20, a quote or a
    /// backslash (or, with `asciiOnly`, a non-ASCII byte); the bytes before it hold none. A word may be flagged
    /// that holds none of them, never the other way round, so the caller reads the rest byte by byte.
    @inlinable
    static func plainWordsEnd(_ buffer: UnsafeBufferPointer<UInt8>, from start: Int, asciiOnly: Bool) -> Int {
        guard let base = buffer.baseAddress else { return start }
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        // A zero byte of `x` sets its high bit in `(x - ones) & ~x`; `x - 0x20…` does for a byte under 0x20.
        func hasByteBelow(_ word: UInt64, _ limit: UInt64) -> UInt64 { (word &- ones &* limit) & ~word }
        var index = start
        while index + 8 <= buffer.count {
            let word = UnsafeRawPointer(base).loadUnaligned(fromByteOffset: index, as: UInt64.self)
            var flagged =
                hasByteBelow(word, 0x20) | hasByteBelow(word ^ (ones &* 0x22), 1)
                | hasByteBelow(word ^ (ones &* 0x5C), 1)
            if asciiOnly { flagged |= word }
            guard flagged & highs == 0 else { break }
            index += 8
        }
        return index
    }
}
