import Foundation
public import Profile
// Re-exported (as swift-nio's umbrella module re-exports NIOCore): the checker's API speaks in the contract's
// AccountState (shared with the reference ledger that produces it), so its clients use it without importing
// the contract module themselves.
@_exported public import TargetContract

extension AccountState {
    /// Decodes the contract JSON.
    /// - Throws: ``ProbeError/badJSON(_:)``.
    public static func decode(contractJSON bytes: [UInt8]) throws -> AccountState {
        do {
            return try JSONDecoder().decode(AccountState.self, from: Data(bytes))
        } catch {
            throw ProbeError.badJSON("not the probe contract JSON: \(error)")
        }
    }
}

/// Why a probe could not read an account. The checker records the account's checks as unknown.
public enum ProbeError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The answer was not the expected JSON.
    case badJSON(String)
    /// The transport failed (connection, status, command exit code).
    case transport(String)
    /// A bulk probe printed no line for the account.
    case missingAccount(String)

    /// One line.
    public var description: String {
        switch self {
        case .badJSON(let detail): "probe answer is not valid: \(detail)"
        case .transport(let detail): "probe failed: \(detail)"
        case .missingAccount(let token): "bulk probe printed no line for account \(token)"
        }
    }
}

/// A backend's own account endpoint, mapped onto the contract with JSON pointers.
public enum PointerProbe {
    /// Maps a backend's JSON onto the contract.
    /// - Throws: ``ProbeError/badJSON(_:)`` when the JSON does not parse or the entitlements pointer does not
    ///   lead to an array.
    public static func map(_ bytes: [UInt8], with mapping: PointerMapping) throws -> AccountState {
        let root: Any
        do {
            root = try JSONSerialization.jsonObject(with: Data(bytes), options: [.fragmentsAllowed])
        } catch {
            throw ProbeError.badJSON("\(error)")
        }
        var state = AccountState()
        guard let list = JSONPointer.resolve(mapping.entitlements, in: root) as? [Any] else {
            throw ProbeError.badJSON("\(mapping.entitlements) is not an array")
        }
        for item in list {
            guard let productId = JSONPointer.resolve(mapping.productId, in: item) as? String else {
                throw ProbeError.badJSON("an entitlement has no string at \(mapping.productId)")
            }
            let transactionId = mapping.transactionId.flatMap { JSONPointer.resolve($0, in: item) }.flatMap(stringOf)
            let expires = mapping.expiresDate.flatMap { JSONPointer.resolve($0, in: item) }.flatMap(int64Of)
            state.entitlements.append(.init(productId: productId, transactionId: transactionId, expiresDate: expires))
        }
        if let pointer = mapping.balances {
            guard let object = JSONPointer.resolve(pointer, in: root) as? [String: Any] else {
                throw ProbeError.badJSON("\(pointer) is not an object")
            }
            for (product, value) in object {
                guard let count = int64Of(value) else {
                    throw ProbeError.badJSON("balance of \(product) is not an integer")
                }
                state.balances[product] = Int(count)
            }
        }
        if let pointer = mapping.grants {
            state.grants = try counts(at: pointer, in: root, of: "grant").map { .init(transactionId: $0, count: $1) }
        }
        if let pointer = mapping.refunds {
            state.refunds = try counts(at: pointer, in: root, of: "refund").map { .init(transactionId: $0, count: $1) }
        }
        return state
    }

    /// The `{transactionId, count}` objects of the array at `pointer`.
    private static func counts(at pointer: String, in root: Any, of what: String) throws -> [(String, Int)] {
        guard let list = JSONPointer.resolve(pointer, in: root) as? [Any] else {
            throw ProbeError.badJSON("\(pointer) is not an array")
        }
        return try list.map { item in
            guard let id = JSONPointer.resolve("/transactionId", in: item).flatMap(stringOf),
                let count = JSONPointer.resolve("/count", in: item).flatMap(int64Of)
            else { throw ProbeError.badJSON("a \(what) lacks transactionId or count") }
            return (id, Int(count))
        }
    }
}

private func stringOf(_ value: Any) -> String? {
    if let text = value as? String { return text }
    if let number = value as? NSNumber { return number.stringValue }
    return nil
}

private func int64Of(_ value: Any) -> Int64? {
    if value is Bool { return nil }
    if let number = value as? NSNumber, number.doubleValue == number.doubleValue.rounded() { return number.int64Value }
    if let text = value as? String { return Int64(text) }
    return nil
}

/// RFC 6901 JSON pointers over `JSONSerialization` trees.
public enum JSONPointer {
    /// The value at `pointer` (`""` is the whole document), or nil.
    public static func resolve(_ pointer: String, in root: Any) -> Any? {
        guard !pointer.isEmpty else { return root }
        guard pointer.hasPrefix("/") else { return nil }
        var current: Any = root
        for raw in pointer.dropFirst().split(separator: "/", omittingEmptySubsequences: false) {
            let token = raw.replacingOccurrences(of: "~1", with: "/").replacingOccurrences(of: "~0", with: "~")
            if let object = current as? [String: Any] {
                guard let next = object[token] else { return nil }
                current = next
            } else if let array = current as? [Any] {
                guard let index = Int(token), index >= 0, index < array.count else { return nil }
                current = array[index]
            } else {
                return nil
            }
        }
        return current is NSNull ? nil : current
    }
}

/// How PayStorm compares `appAccountToken`s from outside (bulk lines, probe answers): UUIDs are case-insensitive,
/// and backends often store them lowercase while PayStorm mints them uppercase.
public enum AccountToken {
    /// The form tokens are compared in.
    public static func canonical(_ token: String) -> String { token.uppercased() }
}

/// A bulk command's answer: the states it printed, looked up case-insensitively by `appAccountToken`.
public struct BulkAnswer: Sendable, Hashable {
    private var states: [String: AccountState]

    /// An answer from states keyed by token in any case (the last of two spellings of one token wins).
    public init(_ states: [String: AccountState] = [:]) {
        var canonical: [String: AccountState] = [:]
        for (token, state) in states { canonical[AccountToken.canonical(token)] = state }
        self.states = canonical
    }

    /// How many accounts the command printed.
    public var count: Int { states.count }

    /// The state printed for `account`, in any case, or nil.
    public subscript(account: String) -> AccountState? { states[AccountToken.canonical(account)] }

    /// The state printed for `account`.
    /// - Throws: ``ProbeError/missingAccount(_:)`` when the command printed no line for it: that account is
    ///   unknown, never "owns nothing" (a backend may print only accounts that own something, or be cut short).
    public func state(of account: String) throws(ProbeError) -> AccountState {
        guard let state = self[account] else { throw .missingAccount(account) }
        return state
    }
}

/// A bulk command's output: one JSON object per line, each the contract JSON plus an `appAccountToken`
/// (any case):
/// `{"appAccountToken": "<uuid>", "entitlements": [...], "balances": {...}, "grants": [...]?,
/// "transactions": [...]?}`.
public enum JSONLines {
    private struct Line: Decodable {
        var appAccountToken: String
    }

    /// Parses the output into states by token. Blank lines are skipped.
    /// - Throws: ``ProbeError/badJSON(_:)`` naming the line number.
    public static func parse(_ bytes: [UInt8]) throws -> BulkAnswer {
        var states: [String: AccountState] = [:]
        var number = 0
        for line in bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
            number += 1
            let trimmed = line.drop { $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }
            if trimmed.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) { continue }
            let data = Data(trimmed)
            do {
                let token = try JSONDecoder().decode(Line.self, from: data).appAccountToken
                states[AccountToken.canonical(token)] = try JSONDecoder().decode(AccountState.self, from: data)
            } catch {
                throw ProbeError.badJSON("line \(number): \(error)")
            }
        }
        return BulkAnswer(states)
    }
}
