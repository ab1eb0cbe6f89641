import Foundation

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
        } catch DecodingError.typeMismatch(_, let context) where jsonPath(context.codingPath) != at(key) {
            throw ProfileIssue(path: jsonPath(context.codingPath), expected: "a value of another type")
        } catch {
            if let reference = references[at(key)], isNumber(T.self) {
                return try number(key, T.self, from: reference)
            }
            throw ProfileIssue(path: at(key), expected: describe(T.self))
        }
    }

    /// A numeric field whose string was exactly one `${NAME}` reference: the variable's value read as `T`.
    private func number<T: Decodable>(_ key: String, _ type: T.Type, from reference: String) throws -> T {
        let text = try container.decode(String.self, forKey: AnyKey(stringValue: key))
        // `Double` alone would take "nan", "inf" and "0x1p3": only a JSON number is a number here.
        let json = text.utf8.allSatisfy { "0123456789+-.eE".utf8.contains($0) } && Double(text) != nil
        guard json, let value = try? JSONDecoder().decode(T.self, from: Data(text.utf8)) else {
            throw ProfileIssue(path: at(key), expected: "\(describe(T.self)) from \(reference), found \"\(text)\"")
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

private func isNumber(_ type: Any.Type) -> Bool {
    type is any BinaryInteger.Type || type is any BinaryFloatingPoint.Type
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
