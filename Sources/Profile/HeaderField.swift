/// What an HTTP header written by the user (a profile's `headers`, `paystorm load --header`) may hold, checked
/// once its variables are substituted: a CR or LF in it would end the header and start another on the wire.
public enum HeaderField {
    /// What a header name must be, and what `name` holds instead (RFC 9110 token characters only), or nil
    /// when it is one.
    public static func nameProblem(_ name: String) -> String? {
        let expected = "a header name of letters, digits and !#$%&'*+-.^_`|~"
        guard !name.isEmpty else { return expected + ", found an empty name" }
        guard let bad = name.unicodeScalars.first(where: { !isTokenCharacter($0) }) else { return nil }
        return expected + ", found \"\(escaped(name))\" (\(describe(bad)))"
    }

    /// What a header value must be, and what `value` holds instead (a control character such as CR or LF), or
    /// nil when it can be one.
    public static func valueProblem(_ value: String) -> String? {
        guard let bad = value.unicodeScalars.first(where: isControl) else { return nil }
        return "a header value without control characters, found \"\(escaped(value))\" (\(describe(bad)))"
    }

    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || scalar.value == 0x7F
    }

    private static func isTokenCharacter(_ scalar: Unicode.Scalar) -> Bool {
        isASCII(scalar, alphanumericOr: "!#$%&'*+-.^_`|~")
    }

    /// Whether `scalar` is an ASCII letter or digit, or one of `extra`.
    static func isASCII(_ scalar: Unicode.Scalar, alphanumericOr extra: String) -> Bool {
        guard scalar.isASCII, let byte = UInt8(exactly: scalar.value) else { return false }
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        default:
            return extra.utf8.contains(byte)
        }
    }

    /// A character as a reader can see it: `a space`, `a CR, U+000D`, `':', U+003A`.
    static func describe(_ scalar: Unicode.Scalar) -> String {
        let hex = String(scalar.value, radix: 16, uppercase: true)
        let code = "U+" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
        switch scalar {
        case "\r": return "a CR, \(code)"
        case "\n": return "an LF, \(code)"
        case " ": return "a space"
        default: return isControl(scalar) ? "a control character, \(code)" : "'\(scalar)', \(code)"
        }
    }

    /// `text` with control characters written as `\r`, `\n`, `\t` or `\u{XX}`, so that the line stays one line.
    static func escaped(_ text: String) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\r": out += "\\r"
            case "\n": out += "\\n"
            case "\t": out += "\\t"
            default:
                out += isControl(scalar) ? "\\u{\(String(scalar.value, radix: 16))}" : String(scalar)
            }
        }
        return out
    }
}

extension Fields {
    /// A `headers` object (name to value) whose every name and value can go on the wire as written.
    /// - Throws: ``ProfileIssue`` at `key` for a bad name, at `key.NAME` for a bad value.
    func headers(_ key: String = "headers") throws -> [String: String] {
        let values: [String: String] = try value(key, default: [:])
        for name in values.keys.sorted() {
            if let problem = HeaderField.nameProblem(name) {
                throw ProfileIssue(path: at(key), expected: problem)
            }
            if let value = values[name], let problem = HeaderField.valueProblem(value) {
                throw ProfileIssue(path: at("\(key).\(name)"), expected: problem)
            }
        }
        return values
    }
}
