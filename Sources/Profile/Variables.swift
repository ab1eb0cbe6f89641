public import Foundation
import Primitives

/// Where `${NAME}` in a profile gets its value, so that one profile serves many targets.
///
/// Every string value of a profile (not its keys) may contain `${NAME}` or `${NAME:-default}`. A value given
/// with `--set NAME=value` wins over the environment; `${NAME:-default}` takes `default` when `NAME` is unset or
/// empty, as in the shell. `$${` stands for a literal `${`. An undefined variable without a default is a
/// ``ProfileError`` naming the variable and the JSON path. A number or boolean field takes a string that is
/// exactly one reference, when the variable's value is written as JSON writes a number, `true` or `false`.
///
/// ```swift
/// let variables = ProfileVariables(set: ["PORT": "8080"])
/// let profile = try Profile.load(path: "Profiles/mine.json5", variables: variables)
/// ```
public struct ProfileVariables: Sendable, Hashable {
    /// Values given on the command line (`--set NAME=value`); they win over ``environment``.
    public var set: [String: String]
    /// The process environment (or a stand-in, in tests).
    public var environment: [String: String]

    /// Creates the variables of a load.
    /// - Parameters:
    ///   - set: values given with `--set`, which win.
    ///   - environment: the environment to fall back on; the process's own by default.
    public init(set: [String: String] = [:], environment: [String: String] = ProcessInfo.processInfo.environment) {
        self.set = set
        self.environment = environment
    }

    /// The value of a variable, `--set` first, or nil when it is defined nowhere.
    public func value(of name: String) -> String? { set[name] ?? environment[name] }

    /// Parses one `--set` argument, `NAME=value` (the value may be empty and may contain `=`).
    /// - Returns: the name and the value, or nil when the text is not `NAME=value` with a valid name.
    public static func assignment(_ text: String) -> (name: String, value: String)? {
        guard let equals = text.firstIndex(of: "=") else { return nil }
        let name = String(text[..<equals])
        guard isName(name) else { return nil }
        return (name, String(text[text.index(after: equals)...]))
    }

    /// Whether `name` is a variable name: a letter or `_`, then letters, digits and `_` (ASCII, as the shell).
    public static func isName(_ name: String) -> Bool {
        guard let first = name.utf8.first, !(UInt8(ascii: "0")...UInt8(ascii: "9")).contains(first) else {
            return false
        }
        return name.utf8.allSatisfy { byte in
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte | 0x20) || byte == UInt8(ascii: "_")
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
        }
    }

    /// Replaces every `${NAME}` and `${NAME:-default}` in one string, and `$${` by `${`.
    /// - Parameter path: the JSON path of the string, for errors.
    /// - Throws: ``ProfileIssue`` naming the path and the variable when one is undefined or malformed.
    func substitute(_ text: String, path: String) throws(ProfileIssue) -> String {
        guard text.contains("${") else { return text }
        var out = ""
        var rest = Substring(text)
        while let dollar = rest.firstIndex(of: "$") {
            out += rest[..<dollar]
            let after = rest[dollar...]
            if after.hasPrefix("$${") {
                out += "${"
                rest = after.dropFirst(3)
                continue
            }
            guard after.hasPrefix("${") else {
                out += "$"
                rest = after.dropFirst()
                continue
            }
            let body = after.dropFirst(2)
            guard let close = Self.closingBrace(of: body) else {
                throw ProfileIssue(
                    path: path,
                    expected:
                        "${NAME} or ${NAME:-default} closed by '}', found \"\(after)\" (write $${ for a literal ${)"
                )
            }
            let reference = body[..<close]
            let name: Substring
            let fallback: Substring?
            if let colon = reference.range(of: ":-") {
                name = reference[..<colon.lowerBound]
                fallback = reference[colon.upperBound...]
            } else {
                name = reference
                fallback = nil
            }
            guard Self.isName(String(name)) else {
                throw ProfileIssue(
                    path: path,
                    expected:
                        "a variable name of letters, digits and _ in \"${\(reference)}\" (write $${ for a literal ${)"
                )
            }
            let value = value(of: String(name))
            if let value, !value.isEmpty || fallback == nil {
                out += value
            } else if let fallback {
                // A default may itself hold variables: `${DEV:-http://x:${PORT}/y}`.
                out += try substitute(String(fallback), path: path)
            } else {
                throw ProfileIssue(
                    path: path,
                    expected: "a value for ${\(name)}: pass --set \(name)=VALUE, set it in the environment, "
                        + "or write ${\(name):-default}"
                )
            }
            rest = body[body.index(after: close)...]
        }
        return out + rest
    }

    /// `text` itself when it is exactly one reference, `${NAME}` or `${NAME:-default}`, and nothing else.
    static func wholeReference(_ text: String) -> String? {
        guard text.hasPrefix("${") else { return nil }
        let body = text.dropFirst(2)
        guard let close = closingBrace(of: body), body.index(after: close) == body.endIndex else { return nil }
        return text
    }

    /// The `}` that closes a reference whose text starts at `body` (after its `${`), past any `${...}` nested
    /// in its default; nil when it is never closed.
    private static func closingBrace(of body: Substring) -> Substring.Index? {
        var depth = 0
        var index = body.startIndex
        while index < body.endIndex {
            if body[index...].hasPrefix("${") {
                depth += 1
                index = body.index(index, offsetBy: 2)
                continue
            }
            if body[index] == "}" {
                if depth == 0 { return index }
                depth -= 1
            }
            index = body.index(after: index)
        }
        return nil
    }
}

/// Variables over a profile document parsed as values, so that they are substituted in string values only (never
/// in keys, never across quotes or comments) and the result, written back as `JSONValue.jsonText`, is
/// decoded as before.
extension JSONValue {
    /// The same tree with every string value substituted.
    func substituting(_ variables: ProfileVariables, path: String = "") throws(ProfileIssue) -> JSONValue {
        var references: [String: String] = [:]
        return try substituting(variables, path: path, references: &references)
    }

    /// The same tree with every string value substituted; `references` gets the path of each string that was
    /// exactly one `${NAME}` reference, with that reference, so that a number or boolean field may read it.
    func substituting(
        _ variables: ProfileVariables,
        path: String,
        references: inout [String: String]
    ) throws(ProfileIssue) -> JSONValue {
        switch self {
        case .null, .bool, .number: return self
        case .string(let text):
            if let reference = ProfileVariables.wholeReference(text) { references[path] = reference }
            return .string(try variables.substitute(text, path: path))
        case .array(let items):
            var out: [JSONValue] = []
            for (index, item) in items.enumerated() {
                out.append(try item.substituting(variables, path: path + "[\(index)]", references: &references))
            }
            return .array(out)
        case .object(let members):
            var out: [String: JSONValue] = [:]
            // Sorted, so that of two undefined variables the same one is always named first.
            for (key, value) in members.sorted(by: { $0.key < $1.key }) {
                out[key] = try value.substituting(variables, path: joinPath(path, key), references: &references)
            }
            return .object(out)
        }
    }
}
