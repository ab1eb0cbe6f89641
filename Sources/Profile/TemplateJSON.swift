import Foundation

/// A JSON value as a profile gives it (a request body template, a value a response is compared with, the whole
/// document while its variables are substituted) or as a target answers it: decoded once, then walked without
/// Foundation's untyped trees.
///
/// Numbers keep the JSON text that reproduces them, so an integer past 2^53 (an id, a price in micros) is written
/// back with every digit. Object keys are kept in a dictionary and written in sorted order, so a template always
/// renders the same bytes.
public indirect enum TemplateJSON: Sendable, Hashable, Decodable {
    /// `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// A number, as the JSON text that reproduces it exactly (`409`, `1.5`, `18446744073709551615`).
    case number(String)
    /// A string.
    case string(String)
    /// An array.
    case array([TemplateJSON])
    /// An object.
    case object([String: TemplateJSON])

    /// Decodes any JSON value.
    public init(from decoder: any Decoder) throws {
        if var items = try? decoder.unkeyedContainer() {
            var values: [TemplateJSON] = []
            while !items.isAtEnd { values.append(try items.decode(TemplateJSON.self)) }
            self = .array(values)
            return
        }
        if let object = try? decoder.container(keyedBy: AnyKey.self) {
            var values: [String: TemplateJSON] = [:]
            for key in object.allKeys { values[key.stringValue] = try object.decode(TemplateJSON.self, forKey: key) }
            self = .object(values)
            return
        }
        let single = try decoder.singleValueContainer()
        if single.decodeNil() {
            self = .null
        } else if let value = try? single.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? single.decode(Int64.self) {
            self = .number(String(value))
        } else if let value = try? single.decode(UInt64.self) {
            self = .number(String(value))
        } else if let value = try? single.decode(Double.self) {
            // JSON5 allows Infinity and NaN; profile validation refuses them later with the path, so keep them.
            self = .number(value.isNaN ? "NaN" : value.isInfinite ? (value < 0 ? "-Infinity" : "Infinity") : "\(value)")
        } else {
            self = .string(try single.decode(String.self))
        }
    }

    /// The value an RFC 6901 JSON pointer designates (`""` is the whole document), or nil when there is none.
    public func resolve(pointer: String) -> TemplateJSON? {
        guard !pointer.isEmpty else { return self }
        guard pointer.hasPrefix("/") else { return nil }
        var current = self
        for raw in pointer.dropFirst().split(separator: "/", omittingEmptySubsequences: false) {
            // Order matters (RFC 6901 §4): `~1` first would turn `~01` into `/` instead of `~1`.
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
}

/// JSON string escaping (RFC 8259 §7): quotes, backslashes and control characters; everything else, non-ASCII
/// included, is written as UTF-8.
public enum JSONEscaping {
    /// Appends `value`'s UTF-8 bytes to `out`, escaped for the inside of a JSON string (no quotes added).
    public static func append(_ value: String, to out: inout [UInt8]) {
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "\""): out += [UInt8(ascii: "\\"), UInt8(ascii: "\"")]
            case UInt8(ascii: "\\"): out += [UInt8(ascii: "\\"), UInt8(ascii: "\\")]
            case 0x0A: out += [UInt8(ascii: "\\"), UInt8(ascii: "n")]
            case 0x0D: out += [UInt8(ascii: "\\"), UInt8(ascii: "r")]
            case 0x09: out += [UInt8(ascii: "\\"), UInt8(ascii: "t")]
            case 0..<0x20:
                out += Array("\\u00".utf8)
                out.append(hexDigits[Int(byte >> 4)])
                out.append(hexDigits[Int(byte & 0x0F)])
            default: out.append(byte)
            }
        }
    }

    /// `value` escaped for the inside of a JSON string.
    public static func escaped(_ value: String) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(value.utf8.count)
        append(value, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    static let hexDigits = Array("0123456789abcdef".utf8)
}
