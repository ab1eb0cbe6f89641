import Foundation
import Primitives
package import Profile
package import RunControl

/// Runs the profile's `target.accounts.provision` command once before traffic and reads each account's
/// identity in the backend from it.
///
/// The command gets one `{"appAccountToken": "<UUID>"}` line per account on standard input and prints one
/// `{"appAccountToken": "<UUID>", "id": "<backend user id>", ...}` line per account (string values only).
/// Tokens are matched case-insensitively; an account it does not print keeps its defaults. A line may dictate
/// the token the app sets for that account (`"dictatedToken": "<UUID>"`, often a name-based UUID of the
/// backend's user id): the run then mints the account's purchases with it, and its fields are keyed by it.
package enum AccountProvisioning {
    /// Runs `command` for `tokens`.
    /// - Throws: `RunError.unreachable` (exit 69) when the command cannot start, times out, exits non-zero
    ///   (its standard error quoted), prints a line that is not an object of strings with a known token, dictates
    ///   a token that is not a UUID or one that names two accounts, or prints no account at all.
    package static func run(
        _ command: [String],
        tokens: [String],
        timeout: Double,
        interruption: Interruption
    ) throws(RunError) -> AccountDirectory {
        let name = "target.accounts.provision '\(command.joined(separator: " "))'"
        var input: [UInt8] = []
        for token in tokens { input += Array("{\"appAccountToken\":\"\(JSONEscaping.escaped(token))\"}\n".utf8) }
        let result = try output(
            of: command,
            name: name,
            input: input,
            accounts: tokens.count,
            timeout: timeout,
            interruption: interruption
        )
        let (fields, dictated) = try accounts(in: result.stdout, given: tokens, name: name)
        // Exit 0 with nothing printed is a command that did not do its job (a wrong script, a silent failure):
        // every `{account.*}` would go out empty.
        if fields.isEmpty && !tokens.isEmpty {
            throw .unreachable(
                "\(name) exited 0 but printed no account: expected one {\"appAccountToken\": ..., \"id\": ...} "
                    + "line per account on its standard output"
            )
        }
        try checkDistinct(tokens, dictated: dictated, name: name)
        var keyed: [String: [String: String]] = [:]
        for (token, values) in fields { keyed[dictated[token] ?? token] = values }
        return AccountDirectory(keyed, dictatedTokens: dictated)
    }

    /// The key of a line's token the backend dictates for the account (a UUID, as `appAccountToken` is).
    package static let dictatedTokenKey = "dictatedToken"

    /// Each printed account's fields and the tokens dictated, both keyed by the token as given.
    private static func accounts(
        in stdout: [UInt8],
        given tokens: [String],
        name: String
    ) throws(RunError) -> (fields: [String: [String: String]], dictated: [String: String]) {
        let known = Dictionary(tokens.map { (AccountDirectory.normalized($0), $0) }) { first, _ in first }
        var fields: [String: [String: String]] = [:]
        var dictated: [String: String] = [:]
        var lineNumber = 0
        for line in stdout.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
            lineNumber += 1
            guard line.contains(where: { $0 != UInt8(ascii: " ") && $0 != UInt8(ascii: "\r") }) else { continue }
            var strings = try accountFields(of: line, number: lineNumber, name: name)
            guard let token = strings.removeValue(forKey: "appAccountToken") else {
                throw .unreachable("\(name): output line \(lineNumber): no \"appAccountToken\"")
            }
            guard let minted = known[AccountDirectory.normalized(token)] else {
                throw .unreachable(
                    "\(name): output line \(lineNumber): appAccountToken \(token) is not one of the run's accounts"
                )
            }
            if let token = strings.removeValue(forKey: dictatedTokenKey) {
                // Minted into every payload as it is: a backend that parses it as a UUID would refuse them all.
                guard UUID(uuidString: token) != nil else {
                    throw .unreachable(
                        "\(name): output line \(lineNumber): \"\(dictatedTokenKey)\" is \"\(token)\", expected a "
                            + "UUID (the appAccountToken the app sets)"
                    )
                }
                dictated[minted] = token
            }
            fields[minted] = strings
        }
        return (fields, dictated)
    }

    /// Two accounts minted with one token would be one account to the backend and two to the oracle.
    private static func checkDistinct(
        _ tokens: [String],
        dictated: [String: String],
        name: String
    ) throws(RunError) {
        guard !dictated.isEmpty else { return }
        var owners: [String: String] = [:]
        for token in tokens {
            let minted = dictated[token] ?? token
            if let other = owners.updateValue(token, forKey: AccountDirectory.normalized(minted)) {
                throw .unreachable(
                    "\(name): the accounts given as \(other) and \(token) would both be minted with appAccountToken "
                        + "\(minted); a dictated token must name one account"
                )
            }
        }
    }

    /// What the command printed, once it exited 0.
    private static func output(
        of command: [String],
        name: String,
        input: [UInt8],
        accounts: Int,
        timeout: Double,
        interruption: Interruption
    ) throws(RunError) -> CapturedCommand.Output {
        let result: CapturedCommand.Output
        do {
            result = try CapturedCommand.run(
                command,
                input: input,
                timeout: timeout,
                interruption: interruption,
                maxOutputBytes: CapturedCommand.outputLimit(accounts: accounts)
            )
        } catch {
            if case .timedOut = error {
                throw .unreachable(
                    "\(name) failed: it did not finish within \(String(format: "%g", timeout)) s "
                        + "(target.accounts.timeoutSeconds)"
                )
            }
            throw .unreachable("\(name) failed: \(error)")
        }
        guard result.status == 0 else {
            throw .unreachable("\(name) exited \(result.status)\(quoted(result.stderr))")
        }
        return result
    }

    /// The string fields of one output line (the token among them).
    private static func accountFields(
        of line: ArraySlice<UInt8>,
        number lineNumber: Int,
        name: String
    ) throws(RunError) -> [String: String] {
        let object: [String: JSONValue]
        do {
            guard case .object(let decoded) = try JSONDecoder().decode(JSONValue.self, from: Data(line)) else {
                throw ProvisionFailure("not a JSON object")
            }
            object = decoded
        } catch {
            throw .unreachable("\(name): output line \(lineNumber): expected a JSON object (\(error))")
        }
        var strings: [String: String] = [:]
        for (key, value) in object {
            guard case .string(let text) = value else {
                throw .unreachable(
                    "\(name): output line \(lineNumber): \"\(key)\" is \(value.jsonText), expected a string"
                )
            }
            // Fields fill headers and URLs as they are: a CR or LF would start another header on the wire.
            if let bad = text.unicodeScalars.first(where: { $0.value < 0x20 || $0.value == 0x7F }) {
                throw .unreachable(
                    "\(name): output line \(lineNumber): \"\(key)\" holds a control character "
                        + "(U+\(String(format: "%04X", bad.value))); account fields are sent as they are"
                )
            }
            strings[key] = text
        }
        return strings
    }

    /// ` (stderr: "…")` with the last lines of standard error, or nothing when it was empty.
    private static func quoted(_ stderr: [UInt8]) -> String {
        let text = String(decoding: stderr.suffix(2000), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard !text.isEmpty else { return "" }
        return " (stderr: \"\(text.split(whereSeparator: \.isNewline).suffix(5).joined(separator: " | "))\")"
    }
}

/// Why provisioning failed, in one line.
private struct ProvisionFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
