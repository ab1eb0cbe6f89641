import Foundation
import Primitives

/// A coding key that accepts any string, so that unknown keys can be seen and refused.
struct AnyKey: CodingKey {
    var stringValue: String
    var intValue: Int?
    init(stringValue: String) { self.stringValue = stringValue }
    init(intValue: Int) {
        self.stringValue = String(intValue)
        self.intValue = intValue
    }
}

/// Renders a coding path as a JSON path: `a.b[2].c`.
func jsonPath(_ codingPath: [any CodingKey]) -> String {
    var out = ""
    for key in codingPath {
        if let index = key.intValue, key.stringValue.hasPrefix("Index ") || key.stringValue == String(index) {
            out += "[\(index)]"
        } else {
            out += out.isEmpty ? key.stringValue : "." + key.stringValue
        }
    }
    return out
}

func joinPath(_ base: String, _ key: String) -> String {
    base.isEmpty ? key : base + "." + key
}

/// A strict view of one JSON object: refuses unknown keys, and reads fields with checks that name the path.
struct Fields {
    /// The decoder's `userInfo` key of the paths whose string was exactly one `${NAME}` reference.
    static let variableReferences = CodingUserInfoKey(rawValue: "paystorm.variableReferences")!

    let container: KeyedDecodingContainer<AnyKey>
    let path: String
    /// Path to the `${NAME}` reference that was the whole string there.
    let references: [String: String]

    init(_ decoder: any Decoder, allowed: [String]) throws {
        path = jsonPath(decoder.codingPath)
        references = decoder.userInfo[Self.variableReferences] as? [String: String] ?? [:]
        do {
            container = try decoder.container(keyedBy: AnyKey.self)
        } catch {
            throw ProfileIssue(path: path, expected: "an object with keys \(allowed.joined(separator: ", "))")
        }
        let known = Set(allowed)
        for key in container.allKeys.sorted(by: { $0.stringValue < $1.stringValue })
        where !known.contains(key.stringValue) {
            throw ProfileIssue(
                path: joinPath(path, key.stringValue),
                expected: "no key '\(key.stringValue)' here; allowed keys are \(allowed.joined(separator: ", "))"
            )
        }
    }

    func at(_ key: String) -> String { joinPath(path, key) }

    func has(_ key: String) -> Bool { container.contains(AnyKey(stringValue: key)) }

    func optional<T: Decodable>(_ key: String, _ type: T.Type = T.self) throws -> T? {
        let codingKey = AnyKey(stringValue: key)
        guard container.contains(codingKey) else { return nil }
        if try container.decodeNil(forKey: codingKey) {
            throw ProfileIssue(path: at(key), expected: "\(describe(T.self)), found null")
        }
        do {
            return try container.decode(T.self, forKey: codingKey)
        } catch let issue as ProfileIssue {
            throw issue
        } catch {
            if let value = try typedFromVariables(key, T.self) { return value }
            if case DecodingError.typeMismatch(_, let context) = error, jsonPath(context.codingPath) != at(key) {
                throw ProfileIssue(path: jsonPath(context.codingPath), expected: "a value of another type")
            }
            throw ProfileIssue(path: at(key), expected: describe(T.self))
        }
    }

    /// A number or boolean field whose string was exactly one `${NAME}` reference, or an array of them with such
    /// strings among its items: the variables' values read as `T`; nil when no reference stands there.
    private func typedFromVariables<T: Decodable>(_ key: String, _ type: T.Type) throws -> T? {
        let path = at(key)
        if let reference = references[path], isScalar(T.self) {
            let text = try container.decode(String.self, forKey: AnyKey(stringValue: key))
            return try typed(text, as: T.self, path: path, reference: reference)
        }
        guard let array = T.self as? any ScalarArray.Type, isScalar(array.element),
            case .array(let items)? = try? container.decode(JSONValue.self, forKey: AnyKey(stringValue: key))
        else { return nil }
        var typedItems: [JSONValue] = []
        for (index, item) in items.enumerated() {
            let itemPath = path + "[\(index)]"
            guard case .string(let text) = item, let reference = references[itemPath] else {
                typedItems.append(item)
                continue
            }
            _ = try typed(text, as: array.element, path: itemPath, reference: reference)
            typedItems.append(text == "true" || text == "false" ? .bool(text == "true") : .number(text))
        }
        return try? JSONDecoder().decode(T.self, from: Data(JSONValue.array(typedItems).jsonText.utf8))
    }

    /// A variable's value read as the number or boolean `T`, as JSON writes it.
    private func typed<T: Decodable>(_ text: String, as type: T.Type, path: String, reference: String) throws -> T {
        // `Double` alone would take "nan", "inf" and "0x1p3": only a JSON number is a number here.
        let json =
            T.self == Bool.self
            ? text == "true" || text == "false"
            : text.utf8.allSatisfy { "0123456789+-.eE".utf8.contains($0) } && Double(text) != nil
        guard json, let value = try? JSONDecoder().decode(T.self, from: Data(text.utf8)) else {
            throw ProfileIssue(path: path, expected: "\(describe(T.self)) from \(reference), found \"\(text)\"")
        }
        return value
    }

    func required<T: Decodable>(_ key: String, _ type: T.Type = T.self) throws -> T {
        guard let value = try optional(key, T.self) else {
            throw ProfileIssue(path: at(key), expected: "\(describe(T.self)) (this key is required)")
        }
        return value
    }

    func value<T: Decodable>(_ key: String, default fallback: T) throws -> T {
        try optional(key, T.self) ?? fallback
    }

    /// Reads a number and checks it lies in `range`.
    func number(_ key: String, in range: ClosedRange<Double>, default fallback: Double?) throws -> Double {
        guard let value = try optional(key, Double.self) ?? fallback else {
            throw ProfileIssue(path: at(key), expected: "a number from \(range.lowerBound) to \(range.upperBound)")
        }
        guard range.contains(value), value.isFinite else {
            throw ProfileIssue(
                path: at(key),
                expected: "a number from \(trim(range.lowerBound)) to \(trim(range.upperBound)), found \(trim(value))"
            )
        }
        return value
    }

    /// Reads an integer and checks it lies in `range`.
    func integer(_ key: String, in range: ClosedRange<Int64>, default fallback: Int64?) throws -> Int64 {
        guard let value = try optional(key, Int64.self) ?? fallback else {
            throw ProfileIssue(path: at(key), expected: "an integer from \(range.lowerBound) to \(range.upperBound)")
        }
        guard range.contains(value) else {
            throw ProfileIssue(
                path: at(key),
                expected: "an integer from \(range.lowerBound) to \(range.upperBound), found \(value)"
            )
        }
        return value
    }

    /// Reads a string that must be one of `choices`.
    func choice(_ key: String, _ choices: [String], default fallback: String?) throws -> String {
        guard let value = try optional(key, String.self) ?? fallback else {
            throw ProfileIssue(path: at(key), expected: "one of \(choices.joined(separator: ", "))")
        }
        guard choices.contains(value) else {
            throw ProfileIssue(
                path: at(key),
                expected: "one of \(choices.joined(separator: ", ")), found \"\(value)\""
            )
        }
        return value
    }

    /// Reads a non-empty string.
    func text(_ key: String, default fallback: String?) throws -> String {
        guard let value = try optional(key, String.self) ?? fallback else {
            throw ProfileIssue(path: at(key), expected: "a string (this key is required)")
        }
        guard !value.isEmpty else { throw ProfileIssue(path: at(key), expected: "a non-empty string") }
        return value
    }
}

private func trim(_ value: Double) -> String {
    value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
}

/// Whether a whole-string `${NAME}` reference may stand for a value of `type`: a number or a boolean.
private func isScalar(_ type: Any.Type) -> Bool {
    type is any BinaryInteger.Type || type is any BinaryFloatingPoint.Type || type == Bool.self
}

/// An array, so that its items' type can be asked at run time.
private protocol ScalarArray { static var element: any Decodable.Type { get } }

extension Array: ScalarArray where Element: Decodable {
    static var element: any Decodable.Type { Element.self }
}

private func describe(_ type: Any.Type) -> String {
    switch type {
    case is String.Type: return "a string"
    case is Bool.Type: return "true or false"
    case is Double.Type: return "a number"
    case is Int.Type, is Int64.Type, is UInt64.Type, is Int32.Type: return "an integer"
    case is [String].Type: return "an array of strings"
    case is [String: String].Type: return "an object of string values"
    case is [String: Double].Type: return "an object of numbers"
    default:
        let name = String(describing: type)
        if name.hasPrefix("Array<") { return "an array" }
        return "an object (\(name))"
    }
}
