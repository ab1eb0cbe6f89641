/// A payload that reads itself from plain JSON without `JSONDecoder`: the verifier decodes three
/// payloads per notification, and `JSONDecoder` cost more than the signature checks.
///
/// The reader takes only the common, unambiguous shape (the payload's own keys, each once, with string,
/// integer, boolean or nested-object values, ASCII strings without escapes); anything else (an unknown
/// key, `null`, an escape, a fraction, a duplicate) gives nil, and the caller decodes with `JSONDecoder`,
/// so the result is always `JSONDecoder`'s.
public protocol AppStoreJSONReadable: Decodable {
    /// The value with every field absent, which reading fills in.
    static var unread: Self { get }

    /// Reads the value of member `key` into this value; false when the key is not one the plain shape
    /// takes, came before, or its value is irregular.
    mutating func readMember(_ key: String, from reader: inout JSONReader) -> Bool
}

extension AppStoreJSONReadable {
    /// Reads one value (an object) from `reader`, or nil when the input leaves the plain shape.
    public init?(reading reader: inout JSONReader) {
        guard reader.beginObject() else { return nil }
        var value = Self.unread
        while let key = reader.nextKey() {
            guard value.readMember(key, from: &reader) else { return nil }
        }
        guard !reader.failed else { return nil }
        self = value
    }
}

extension AppStoreJSON {
    /// Reads a whole document as `type` when it has the plain shape; nil means: decode with `decoder()`.
    /// - Parameters:
    ///   - type: the payload type.
    ///   - bytes: the JSON text.
    /// - Returns: the value `decoder()` would give, or nil when only the decoder can tell.
    public static func read<T: AppStoreJSONReadable>(_ type: T.Type, from bytes: UnsafeBufferPointer<UInt8>) -> T? {
        var reader = JSONReader(bytes)
        guard let value = T(reading: &reader), reader.atEnd() else { return nil }
        return value
    }
}

/// Reads the plain shape of JSON that `AppStoreJSONReadable` payloads accept, from a byte buffer.
public struct JSONReader {
    private let bytes: UnsafeBufferPointer<UInt8>
    private var index = 0
    /// Whether the innermost object has had a member yet.
    private var first = true

    /// Starts at the beginning of `bytes`.
    public init(_ bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
    }

    /// Consumes `{`; false when the next value is not an object.
    public mutating func beginObject() -> Bool {
        skipWhitespace()
        guard next(is: UInt8(ascii: "{")) else { return false }
        first = true
        return true
    }

    /// The next member's key, after its colon; nil at the object's closing brace (consumed) or on
    /// anything irregular, which `failed` then reports.
    public mutating func nextKey() -> String? {
        skipWhitespace()
        if next(is: UInt8(ascii: "}")) {
            first = false
            return nil
        }
        if !first {
            guard next(is: UInt8(ascii: ",")) else { return fail() }
            skipWhitespace()
        }
        first = false
        guard let key = string() else { return nil }
        skipWhitespace()
        guard next(is: UInt8(ascii: ":")) else { return fail() }
        return key
    }

    /// Whether reading stopped on something outside the plain shape.
    public private(set) var failed = false

    private mutating func fail<T>() -> T? {
        failed = true
        return nil
    }

    /// An ASCII string without escapes or control characters.
    public mutating func string() -> String? {
        skipWhitespace()
        guard next(is: UInt8(ascii: "\"")) else { return fail() }
        let start = index
        skipPlainWords()
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
                index += 1
                return text
            }
            guard byte >= 0x20, byte < 0x80, byte != UInt8(ascii: "\\") else { return fail() }
            index += 1
        }
        return fail()
    }

    /// Skips 8 bytes at a time while none of them is a quote, a backslash, a control character or non-ASCII
    /// (a nested JWS is a 2–4 KB string); the byte loop then reads the rest. A word may be flagged that holds
    /// none of them, never the other way round.
    private mutating func skipPlainWords() {
        guard let base = bytes.baseAddress else { return }
        let ones: UInt64 = 0x0101_0101_0101_0101
        let high: UInt64 = 0x8080_8080_8080_8080
        while index + 8 <= bytes.count {
            let word = UnsafeRawPointer(base + index).loadUnaligned(as: UInt64.self)
            let quote = word ^ (ones &* 0x22)
            let backslash = word ^ (ones &* 0x5C)
            // A zero byte of `x` sets its high bit in `(x - ones) & ~x`; `word - 0x20…` does for a byte under 0x20.
            let flagged =
                ((quote &- ones) & ~quote) | ((backslash &- ones) & ~backslash) | (word &- ones &* 0x20) | word
            guard flagged & high == 0 else { return }
            index += 8
        }
    }

    /// `-?(0|[1-9][0-9]{0,17})` followed by a delimiter: an integer `JSONDecoder` reads the same way.
    public mutating func int64() -> Int64? {
        skipWhitespace()
        let negative = next(is: UInt8(ascii: "-"))
        let start = index
        var value: Int64 = 0
        while index < bytes.count, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") {
            value = value * 10 + Int64(bytes[index] - UInt8(ascii: "0"))
            index += 1
            guard index - start <= 18 else { return fail() }
        }
        let digits = index - start
        guard digits >= 1, digits == 1 || bytes[start] != UInt8(ascii: "0"), index < bytes.count else { return fail() }
        switch bytes[index] {
        case UInt8(ascii: ","), UInt8(ascii: "}"), UInt8(ascii: "]"), 0x20, 0x09, 0x0A, 0x0D:
            return negative ? -value : value
        default:
            return fail()
        }
    }

    /// An integer that fits `Int32`.
    public mutating func int32() -> Int32? {
        guard let value = int64() else { return nil }
        guard let narrow = Int32(exactly: value) else { return fail() }
        return narrow
    }

    /// `true` or `false`.
    public mutating func bool() -> Bool? {
        skipWhitespace()
        if matches("true") { return true }
        if matches("false") { return false }
        return fail()
    }

    /// An array of plain strings.
    public mutating func strings() -> [String]? {
        skipWhitespace()
        guard next(is: UInt8(ascii: "[")) else { return fail() }
        var values: [String] = []
        skipWhitespace()
        if next(is: UInt8(ascii: "]")) { return values }
        while true {
            guard let value = string() else { return nil }
            values.append(value)
            skipWhitespace()
            if next(is: UInt8(ascii: "]")) { return values }
            guard next(is: UInt8(ascii: ",")) else { return fail() }
        }
    }

    /// A string-backed wire enum.
    public mutating func wire<E: OpenWireEnum>(_ type: E.Type) -> E? where E.RawValue == String {
        string().map(E.init(rawValue:))
    }

    /// An integer-backed wire enum.
    public mutating func wire<E: OpenWireEnum>(_ type: E.Type) -> E? where E.RawValue == Int {
        int64().map { E(rawValue: Int($0)) }
    }

    /// A nested readable object.
    public mutating func object<T: AppStoreJSONReadable>(_ type: T.Type) -> T? {
        guard let value = T(reading: &self) else { return fail() }
        first = false
        return value
    }

    /// Whether only whitespace is left.
    mutating func atEnd() -> Bool {
        skipWhitespace()
        return !failed && index == bytes.count
    }

    private mutating func matches(_ word: StaticString) -> Bool {
        let count = word.utf8CodeUnitCount
        guard index + count < bytes.count else { return false }
        let same = word.withUTF8Buffer { literal in
            (0..<count).allSatisfy { bytes[index + $0] == literal[$0] }
        }
        guard same else { return false }
        switch bytes[index + count] {
        case UInt8(ascii: ","), UInt8(ascii: "}"), UInt8(ascii: "]"), 0x20, 0x09, 0x0A, 0x0D:
            index += count
            return true
        default:
            return false
        }
    }

    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    private mutating func next(is byte: UInt8) -> Bool {
        guard index < bytes.count, bytes[index] == byte else { return false }
        index += 1
        return true
    }
}
