internal import Primitives

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

/// Reads the plain shape of JSON that `AppStoreJSONReadable` payloads accept, from a byte buffer, with the
/// lexical steps of `JSONScanner`.
public struct JSONReader {
    private var scanner: JSONScanner
    /// Whether the innermost object has had a member yet.
    private var first = true

    /// Starts at the beginning of `bytes`.
    public init(_ bytes: UnsafeBufferPointer<UInt8>) {
        scanner = JSONScanner(bytes)
    }

    /// Consumes `{`; false when the next value is not an object.
    public mutating func beginObject() -> Bool {
        scanner.skipWhitespace()
        guard scanner.consume(UInt8(ascii: "{")) else { return false }
        first = true
        return true
    }

    /// The next member's key, after its colon; nil at the object's closing brace (consumed) or on
    /// anything irregular, which `failed` then reports.
    public mutating func nextKey() -> String? {
        scanner.skipWhitespace()
        if scanner.consume(UInt8(ascii: "}")) {
            first = false
            return nil
        }
        if !first {
            guard scanner.consume(UInt8(ascii: ",")) else { return fail() }
            scanner.skipWhitespace()
        }
        first = false
        guard let key = string() else { return nil }
        scanner.skipWhitespace()
        guard scanner.consume(UInt8(ascii: ":")) else { return fail() }
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
        scanner.skipWhitespace()
        guard scanner.consume(UInt8(ascii: "\"")), let text = scanner.plainStringRest() else { return fail() }
        return String(decoding: text, as: UTF8.self)
    }

    /// `-?(0|[1-9][0-9]{0,17})` followed by a delimiter: an integer `JSONDecoder` reads the same way.
    public mutating func int64() -> Int64? {
        scanner.skipWhitespace()
        guard let value = scanner.plainInteger() else { return fail() }
        return value
    }

    /// An integer that fits `Int32`.
    public mutating func int32() -> Int32? {
        guard let value = int64() else { return nil }
        guard let narrow = Int32(exactly: value) else { return fail() }
        return narrow
    }

    /// `true` or `false`.
    public mutating func bool() -> Bool? {
        scanner.skipWhitespace()
        if scanner.consume(word: "true") { return true }
        if scanner.consume(word: "false") { return false }
        return fail()
    }

    /// An array of plain strings.
    public mutating func strings() -> [String]? {
        scanner.skipWhitespace()
        guard scanner.consume(UInt8(ascii: "[")) else { return fail() }
        var values: [String] = []
        scanner.skipWhitespace()
        if scanner.consume(UInt8(ascii: "]")) { return values }
        while true {
            guard let value = string() else { return nil }
            values.append(value)
            scanner.skipWhitespace()
            if scanner.consume(UInt8(ascii: "]")) { return values }
            guard scanner.consume(UInt8(ascii: ",")) else { return fail() }
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
        scanner.skipWhitespace()
        return !failed && scanner.isAtEnd
    }
}
