internal import Foundation

/// Any JSON value: a profile's request body template and the values it compares responses with, a target's
/// answers to probes, the parts of Apple's payloads PayStorm carries without interpreting them
/// (`advancedCommerceInfo`), a request body the reference ledger reads. Decoded once, then walked without
/// Foundation's untyped trees.
///
/// Numbers keep the JSON text that reproduces them, so an integer past 2^53 (an id, a price in micros) survives
/// with every digit, and encoding writes an integer as an integer. Object keys are kept in a dictionary;
/// ``jsonText`` writes them sorted, so a value always renders the same bytes.
///
/// ```swift
/// let body = try JSONDecoder().decode(JSONValue.self, from: data)
/// let id = body.resolve(pointer: "/entitlements/0/transactionId")?.stringValue
/// ```
public indirect enum JSONValue: Sendable, Hashable, Codable {
    /// `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// A number, as the JSON text that reproduces it exactly (`409`, `1.5`, `18446744073709551615`).
    case number(String)
    /// A string.
    case string(String)
    /// An array.
    case array([JSONValue])
    /// An object.
    case object([String: JSONValue])

    /// An integer.
    public static func integer(_ value: Int64) -> JSONValue { .number(String(value)) }

    /// Decodes any JSON (or, with a JSON5 decoder, JSON5) value.
    public init(from decoder: any Decoder) throws {
        // Strings first (the commonest value, and a decoder never reads one as anything else), Bool before the
        // numbers and Int64 before Double, so `true` and `3` keep their JSON type; containers last.
        let single = try decoder.singleValueContainer()
        if single.decodeNil() {
            self = .null
        } else if let value = try? single.decode(String.self) {
            self = .string(value)
        } else if let value = try? single.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? single.decode(Int64.self) {
            self = .number(String(value))
        } else if let value = try? single.decode(UInt64.self) {
            self = .number(String(value))
        } else if let value = try? single.decode(Double.self) {
            // JSON5 allows Infinity and NaN; profile validation refuses them later with the path, so keep them.
            self = .number(value.isNaN ? "NaN" : value.isInfinite ? (value < 0 ? "-Infinity" : "Infinity") : "\(value)")
        } else if var items = try? decoder.unkeyedContainer() {
            var values: [JSONValue] = []
            while !items.isAtEnd { values.append(try items.decode(JSONValue.self)) }
            self = .array(values)
        } else {
            let object = try decoder.container(keyedBy: AnyKey.self)
            var values: [String: JSONValue] = [:]
            for key in object.allKeys { values[key.stringValue] = try object.decode(JSONValue.self, forKey: key) }
            self = .object(values)
        }
    }

    /// Encodes the value; a number as an integer when its text is one.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .number(let text):
            if let value = Int64(text) {
                try container.encode(value)
            } else if let value = UInt64(text) {
                try container.encode(value)
            } else {
                try container.encode(Double(text) ?? .nan)
            }
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }

    /// The string, when the value is one.
    public var stringValue: String? {
        if case .string(let text) = self { text } else { nil }
    }

    /// The number as an `Int64`, when it is an integer that fits (`3`, not `3.5` nor `"3"`).
    public var int64Value: Int64? {
        if case .number(let text) = self { Int64(text) } else { nil }
    }

    /// The number as a `Double`, when the value is a number.
    public var doubleValue: Double? {
        if case .number(let text) = self { Double(text) } else { nil }
    }

    /// Compact JSON text of the value, keys sorted.
    public var jsonText: String {
        switch self {
        case .null: "null"
        case .bool(let value): value ? "true" : "false"
        case .number(let text): text
        case .string(let value): "\"" + JSONEscaping.escaped(value) + "\""
        case .array(let items): "[" + items.map(\.jsonText).joined(separator: ",") + "]"
        case .object(let fields):
            "{"
                + fields.keys.sorted().map { "\"\(JSONEscaping.escaped($0))\":\(fields[$0]!.jsonText)" }
                .joined(separator: ",") + "}"
        }
    }

    /// The value an RFC 6901 JSON pointer designates (`""` is the whole document), or nil when there is none.
    public func resolve(pointer: String) -> JSONValue? {
        guard !pointer.isEmpty else { return self }
        guard pointer.hasPrefix("/") else { return nil }
        var current = self
        for raw in pointer.dropFirst().split(separator: "/", omittingEmptySubsequences: false) {
            // `~1` before `~0` (RFC 6901 §4), so `~01` names `~1`, not `/`.
            let token = raw.replacingOccurrences(of: "~1", with: "/").replacingOccurrences(of: "~0", with: "~")
            switch current {
            case .object(let fields):
                guard let next = fields[token] else { return nil }
                current = next
            case .array(let items):
                guard let index = Int(token), items.indices.contains(index) else { return nil }
                current = items[index]
            default:
                return nil
            }
        }
        return current
    }
}

/// A coding key for any object member.
private struct AnyKey: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}
