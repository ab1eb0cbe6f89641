/// A small DER writer and reader for the few ASN.1 types an App Store app receipt is made of: INTEGER,
/// OCTET STRING, UTF8String, IA5String, SEQUENCE and SET, all with definite lengths.
///
/// ```swift
/// let attribute = DER.sequence([DER.integer(2), DER.integer(1), DER.octetString(DER.utf8String("com.acme"))])
/// let elements = DER.elements(attribute)  // one SEQUENCE element; its content reads back the same way
/// ```
public enum DER {
    /// The universal tags (class, constructed bit and number in one byte) that receipts use.
    public enum Tag: UInt8, Sendable {
        /// INTEGER.
        case integer = 0x02
        /// OCTET STRING.
        case octetString = 0x04
        /// UTF8String.
        case utf8String = 0x0C
        /// IA5String (ASCII).
        case ia5String = 0x16
        /// SEQUENCE (constructed).
        case sequence = 0x30
        /// SET (constructed).
        case set = 0x31
    }

    /// An INTEGER: two's complement, big-endian, in the fewest bytes that keep the sign.
    public static func integer(_ value: Int64) -> [UInt8] {
        var bytes = (0..<8).reversed().map { UInt8(truncatingIfNeeded: value >> ($0 * 8)) }
        // A leading byte is redundant when it only repeats the sign bit of the byte after it.
        while bytes.count > 1,
            (bytes[0] == 0x00 && bytes[1] & 0x80 == 0) || (bytes[0] == 0xFF && bytes[1] & 0x80 != 0)
        {
            bytes.removeFirst()
        }
        return element(.integer, bytes)
    }

    /// An OCTET STRING holding `bytes`.
    public static func octetString(_ bytes: [UInt8]) -> [UInt8] {
        element(.octetString, bytes)
    }

    /// A UTF8String.
    public static func utf8String(_ text: String) -> [UInt8] {
        element(.utf8String, Array(text.utf8))
    }

    /// An IA5String. `text` should be ASCII (dates, identifiers); other characters are written as UTF-8.
    public static func ia5String(_ text: String) -> [UInt8] {
        element(.ia5String, Array(text.utf8))
    }

    /// A SEQUENCE of already encoded elements.
    public static func sequence(_ elements: [[UInt8]]) -> [UInt8] {
        element(.sequence, Array(elements.joined()))
    }

    /// A SET of already encoded elements, in the order given.
    ///
    /// DER would sort a SET OF by its elements' encodings; Apple's receipts list their attributes by type
    /// instead, and receipt parsers accept either, so the caller chooses the order.
    public static func set(_ elements: [[UInt8]]) -> [UInt8] {
        element(.set, Array(elements.joined()))
    }

    /// One element: the tag, the length in the short or long form, and the content.
    public static func element(_ tag: Tag, _ content: [UInt8]) -> [UInt8] {
        [tag.rawValue] + length(content.count) + content
    }

    /// A definite length: one byte below 128, else 0x80 plus the count of big-endian length bytes.
    static func length(_ count: Int) -> [UInt8] {
        guard count >= 0x80 else { return [UInt8(count)] }
        var bytes: [UInt8] = []
        var rest = count
        while rest > 0 {
            bytes.insert(UInt8(rest & 0xFF), at: 0)
            rest >>= 8
        }
        return [0x80 | UInt8(bytes.count)] + bytes
    }
}

// MARK: - Reading

extension DER {
    /// One element read back: its tag byte and its content.
    public struct Element: Sendable, Hashable {
        /// The identifier byte (for example 0x30 for a SEQUENCE); tags above 30 are not read.
        public var tag: UInt8
        /// The content octets.
        public var content: ArraySlice<UInt8>

        /// The element encoded again: its tag, its length in DER's form, and its content.
        var encoded: [UInt8] { [tag] + DER.length(content.count) + content }

        /// The elements inside a constructed element (SEQUENCE, SET) or inside an OCTET STRING that
        /// holds DER, as receipt attribute values do; nil when the content is not a run of elements.
        public var children: [Element]? { DER.elements(content) }

        /// The value of an INTEGER of at most eight content bytes; nil otherwise.
        public var integer: Int64? {
            guard tag == Tag.integer.rawValue, (1...8).contains(content.count) else { return nil }
            // Sign-extend the first byte, then shift the rest in.
            var value = Int64(Int8(bitPattern: content[content.startIndex]))
            for byte in content.dropFirst() { value = value << 8 | Int64(byte) }
            return value
        }

        /// The text of a UTF8String or IA5String; nil for other tags or invalid UTF-8.
        public var string: String? {
            guard tag == Tag.utf8String.rawValue || tag == Tag.ia5String.rawValue else { return nil }
            return String(validating: content, as: UTF8.self)
        }
    }

    /// Reads a run of consecutive elements filling `bytes` exactly.
    /// - Returns: the elements, or nil when a tag, a length or the end does not fit (an indefinite or
    ///   over-long length, a high tag number, a length past the end).
    public static func elements(_ bytes: ArraySlice<UInt8>) -> [Element]? {
        var elements: [Element] = []
        var index = bytes.startIndex
        while index < bytes.endIndex {
            let tag = bytes[index]
            guard tag & 0x1F != 0x1F, index + 1 < bytes.endIndex else { return nil }
            var length = Int(bytes[index + 1])
            index += 2
            if length >= 0x80 {
                let count = length & 0x7F
                guard (1...4).contains(count), index + count <= bytes.endIndex else { return nil }
                length = bytes[index..<index + count].reduce(0) { $0 << 8 | Int($1) }
                index += count
            }
            guard length <= bytes.endIndex - index else { return nil }
            elements.append(Element(tag: tag, content: bytes[index..<index + length]))
            index += length
        }
        return elements
    }

    /// Reads a run of consecutive elements filling `bytes` exactly, as the slice form does.
    public static func elements(_ bytes: [UInt8]) -> [Element]? {
        elements(bytes[...])
    }
}
