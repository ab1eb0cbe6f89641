internal import Foundation

/// A value that writes itself as JSON with `JSONWriter`, producing exactly the bytes
/// `AppStoreJSON.encoder()` would (sorted keys, absent fields omitted, no escaped slashes), without
/// `JSONEncoder`'s cost. Minting encodes three payloads per notification, so this matters under load.
public protocol AppStoreJSONWritable: Encodable {
    /// Appends this value to `writer`.
    func writeJSON(to writer: inout JSONWriter)
}

/// Appends JSON to a byte buffer. Keys are written in the order the caller gives them; callers give them
/// sorted, as `JSONEncoder` with `.sortedKeys` does.
public struct JSONWriter: Sendable {
    /// The JSON written so far.
    public var bytes: [UInt8]
    /// Whether the innermost open object or array has no element yet.
    private var first = true

    /// Creates a writer with room for `capacity` bytes.
    public init(capacity: Int = 1024) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    /// Opens an object.
    public mutating func beginObject() {
        bytes.append(UInt8(ascii: "{"))
        first = true
    }

    /// Closes an object; the enclosing object or array now has an element.
    public mutating func endObject() {
        bytes.append(UInt8(ascii: "}"))
        first = false
    }

    private mutating func key(_ name: StaticString) {
        if !first { bytes.append(UInt8(ascii: ",")) }
        first = false
        bytes.append(UInt8(ascii: "\""))
        name.withUTF8Buffer { bytes.append(contentsOf: $0) }
        bytes.append(UInt8(ascii: "\""))
        bytes.append(UInt8(ascii: ":"))
    }

    /// Writes `"name":"value"`, or nothing when `value` is `nil`.
    public mutating func field(_ name: StaticString, _ value: String?) {
        guard let value else { return }
        key(name)
        string(value)
    }

    /// Writes `"name":value`, or nothing when `value` is `nil`.
    public mutating func field(_ name: StaticString, _ value: Int64?) {
        guard let value else { return }
        key(name)
        integer(value)
    }

    /// Writes `"name":value`, or nothing when `value` is `nil`.
    public mutating func field(_ name: StaticString, _ value: Int32?) {
        guard let value else { return }
        key(name)
        integer(Int64(value))
    }

    /// Writes `"name":true` or `false`, or nothing when `value` is `nil`.
    public mutating func field(_ name: StaticString, _ value: Bool?) {
        guard let value else { return }
        key(name)
        bytes.append(contentsOf: value ? Self.trueBytes : Self.falseBytes)
    }

    /// Writes `"name":["a","b"]`, or nothing when `value` is `nil`.
    public mutating func field(_ name: StaticString, _ value: [String]?) {
        guard let value else { return }
        key(name)
        bytes.append(UInt8(ascii: "["))
        for (index, element) in value.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            string(element)
        }
        bytes.append(UInt8(ascii: "]"))
        first = false
    }

    /// Writes a string-backed wire enum's raw value, or nothing when `value` is `nil`.
    public mutating func field<E: OpenWireEnum>(_ name: StaticString, _ value: E?) where E.RawValue == String {
        field(name, value?.rawValue)
    }

    /// Writes an integer-backed wire enum's raw value, or nothing when `value` is `nil`.
    public mutating func field<E: OpenWireEnum>(_ name: StaticString, _ value: E?) where E.RawValue == Int {
        field(name, value.map { Int64($0.rawValue) })
    }

    /// Writes a nested object, or nothing when `value` is `nil`.
    public mutating func field<T: AppStoreJSONWritable>(_ name: StaticString, _ value: T?) {
        guard let value else { return }
        key(name)
        value.writeJSON(to: &self)
    }

    /// Writes arbitrary JSON through `JSONEncoder` (it is rare: Advanced Commerce data only).
    public mutating func field(_ name: StaticString, _ value: JSONValue?) {
        guard let value, let encoded = try? AppStoreJSON.encoder().encode(value) else { return }
        key(name)
        bytes.append(contentsOf: encoded)
        first = false
    }

    /// Writes the decimal digits straight into the buffer, two per table lookup: `String(value)` cost an
    /// allocation and a copy per number, and a payload has a dozen (dates, prices, ids).
    private mutating func integer(_ value: Int64) {
        // The magnitude as unsigned, so Int64.min has one too.
        var magnitude = value.magnitude
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // 24 bytes: room for 20 digits and a sign
        let count = withUnsafeMutableBytes(of: &digits) { scratch -> Int in
            var position = scratch.count
            Self.digitPairs.withUnsafeBufferPointer { pairs in
                while magnitude >= 100 {
                    let pair = Int(magnitude % 100) &* 2
                    magnitude /= 100
                    position -= 2
                    scratch[position] = pairs[pair]
                    scratch[position + 1] = pairs[pair + 1]
                }
                if magnitude >= 10 {
                    let pair = Int(magnitude) &* 2
                    position -= 2
                    scratch[position] = pairs[pair]
                    scratch[position + 1] = pairs[pair + 1]
                } else {
                    position -= 1
                    scratch[position] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: magnitude)
                }
            }
            if value < 0 {
                position -= 1
                scratch[position] = UInt8(ascii: "-")
            }
            return scratch.count - position
        }
        withUnsafeBytes(of: &digits) { scratch in
            let start = scratch.baseAddress!.assumingMemoryBound(to: UInt8.self) + (scratch.count - count)
            bytes.append(contentsOf: UnsafeBufferPointer(start: start, count: count))
        }
    }

    /// "00" through "99", two bytes each.
    private static let digitPairs: [UInt8] = Array("0123456789".utf8).flatMap { tens in
        Array("0123456789".utf8).flatMap { units -> [UInt8] in [tens, units] }
    }

    private static let trueBytes = Array("true".utf8)
    private static let falseBytes = Array("false".utf8)
    private static let hexDigits = Array("0123456789abcdef".utf8)

    /// Writes a JSON string, escaping as `JSONEncoder` does: quote, backslash and control characters;
    /// slashes and non-ASCII stay as they are.
    private mutating func string(_ value: String) {
        bytes.append(UInt8(ascii: "\""))
        var text = value
        text.withUTF8 { buffer in
            // Most strings (a nested JWS is 6 KB of base64url) need no escape: one copy, no per-byte appends.
            var start = Self.plainPrefixLength(buffer)
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: buffer[..<start]))
            for index in start..<buffer.count {
                let byte = buffer[index]
                guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: buffer[start..<index]))
                start = index + 1
                bytes.append(UInt8(ascii: "\\"))
                switch byte {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"): bytes.append(byte)
                case 0x0A: bytes.append(UInt8(ascii: "n"))
                case 0x0D: bytes.append(UInt8(ascii: "r"))
                case 0x09: bytes.append(UInt8(ascii: "t"))
                case 0x08: bytes.append(UInt8(ascii: "b"))
                case 0x0C: bytes.append(UInt8(ascii: "f"))
                default:
                    bytes.append(contentsOf: Array("u00".utf8))
                    bytes.append(Self.hexDigits[Int(byte >> 4)])
                    bytes.append(Self.hexDigits[Int(byte & 0x0F)])
                }
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: buffer[start..<buffer.count]))
        }
        bytes.append(UInt8(ascii: "\""))
    }
}

extension JSONWriter {
    /// How many leading bytes need no escape, eight at a time: a word is plain when none of its bytes is
    /// below 0x20, a quote or a backslash (the classic has-zero-byte test on the word and its XORs).
    static func plainPrefixLength(_ buffer: UnsafeBufferPointer<UInt8>) -> Int {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        func hasByteBelow(_ word: UInt64, _ limit: UInt64) -> Bool { (word &- ones &* limit) & ~word & highs != 0 }
        var index = 0
        guard let base = buffer.baseAddress else { return 0 }
        let raw = UnsafeRawPointer(base)
        while index + 8 <= buffer.count {
            let word = raw.loadUnaligned(fromByteOffset: index, as: UInt64.self)
            if hasByteBelow(word, 0x20) || hasByteBelow(word ^ (ones &* 0x22), 1)
                || hasByteBelow(word ^ (ones &* 0x5C), 1)
            {
                break
            }
            index += 8
        }
        return index
    }
}

extension AppStoreJSON {
    /// Encodes a payload to the same bytes as `encoder()`, several times faster.
    /// - Parameter value: the payload.
    /// - Returns: the JSON bytes.
    public static func encode(_ value: some AppStoreJSONWritable) -> [UInt8] {
        var writer = JSONWriter()
        value.writeJSON(to: &writer)
        return writer.bytes
    }
}
