import Foundation
public import Profile

/// What a target grants one account: the contract's normalized probe JSON.
///
/// `{"entitlements": [{"productId", "transactionId"?, "expiresDate"?}], "balances": {"<productId>": n},
/// "grants": [{"transactionId", "count"}]?}`
public struct AccountState: Sendable, Hashable, Codable {
    /// One active entitlement.
    public struct Entitlement: Sendable, Hashable, Codable {
        /// The product unlocked.
        public var productId: String
        /// The transaction behind it, when the target says.
        public var transactionId: String?
        /// When it ends (ms), for subscriptions.
        public var expiresDate: Int64?

        /// Creates an entitlement.
        public init(productId: String, transactionId: String? = nil, expiresDate: Int64? = nil) {
            self.productId = productId
            self.transactionId = transactionId
            self.expiresDate = expiresDate
        }
    }
    /// How many times one transaction was granted.
    public struct Grant: Sendable, Hashable, Codable {
        /// The transaction.
        public var transactionId: String
        /// Times granted (more than 1 is a double grant).
        public var count: Int

        /// Creates a grant.
        public init(transactionId: String, count: Int) {
            self.transactionId = transactionId
            self.count = count
        }
    }
    /// Active entitlements.
    public var entitlements: [Entitlement]
    /// Consumable balances by product.
    public var balances: [String: Int]
    /// Per-transaction grant counts, when the target exposes them.
    public var grants: [Grant]?

    /// Creates a state.
    public init(entitlements: [Entitlement] = [], balances: [String: Int] = [:], grants: [Grant]? = nil) {
        self.entitlements = entitlements
        self.balances = balances
        self.grants = grants
    }

    /// Lenient decoding: a missing `entitlements` or `balances` is empty; extra keys are ignored.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: Keys.self)
        entitlements = try c.decodeIfPresent([Entitlement].self, forKey: .entitlements) ?? []
        balances = try c.decodeIfPresent([String: Int].self, forKey: .balances) ?? [:]
        grants = try c.decodeIfPresent([Grant].self, forKey: .grants)
    }

    private enum Keys: String, CodingKey { case entitlements, balances, grants }

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

/// Reads what the target grants one account. Transports (HTTP, processes) are supplied as closures by the
/// caller, so probes stay testable and this module stays free of I/O.
public protocol Probe: Sendable {
    /// The state of the account with this `appAccountToken`.
    /// - Throws: ``ProbeError``.
    func state(of account: String) async throws -> AccountState
}

/// The contract's HTTP probe (or a per-account command): the fetched bytes are the normalized JSON.
public struct ContractProbe: Probe {
    private let fetch: @Sendable (String) async throws -> [UInt8]

    /// - Parameter fetch: returns the body for an `appAccountToken` (the caller substitutes it into the URL or
    ///   the command); throw to report a transport failure.
    public init(fetch: @escaping @Sendable (String) async throws -> [UInt8]) { self.fetch = fetch }

    /// Fetches and decodes.
    public func state(of account: String) async throws -> AccountState {
        try AccountState.decode(contractJSON: try await fetch(account))
    }
}

/// A backend's own account endpoint, mapped onto the contract with JSON pointers.
public struct PointerProbe: Probe {
    private let mapping: PointerMapping
    private let fetch: @Sendable (String) async throws -> [UInt8]

    /// - Parameters:
    ///   - mapping: the profile's pointers.
    ///   - fetch: returns the backend's JSON for an `appAccountToken`.
    public init(mapping: PointerMapping, fetch: @escaping @Sendable (String) async throws -> [UInt8]) {
        self.mapping = mapping
        self.fetch = fetch
    }

    /// Fetches and maps.
    public func state(of account: String) async throws -> AccountState {
        try Self.map(try await fetch(account), with: mapping)
    }

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
            guard let list = JSONPointer.resolve(pointer, in: root) as? [Any] else {
                throw ProbeError.badJSON("\(pointer) is not an array")
            }
            state.grants = try list.map { item in
                guard let id = JSONPointer.resolve("/transactionId", in: item).flatMap(stringOf),
                    let count = JSONPointer.resolve("/count", in: item).flatMap(int64Of)
                else { throw ProbeError.badJSON("a grant lacks transactionId or count") }
                return .init(transactionId: id, count: Int(count))
            }
        }
        return state
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

/// A bulk command's output: one JSON object per line, each the contract JSON plus an `appAccountToken`.
public enum JSONLines {
    private struct Line: Decodable {
        var appAccountToken: String
    }

    /// Parses the output into states by token. Blank lines are skipped.
    /// - Throws: ``ProbeError/badJSON(_:)`` naming the line number.
    public static func parse(_ bytes: [UInt8]) throws -> [String: AccountState] {
        var states: [String: AccountState] = [:]
        var number = 0
        for line in bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
            number += 1
            let trimmed = line.drop { $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }
            if trimmed.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) { continue }
            let data = Data(trimmed)
            do {
                let token = try JSONDecoder().decode(Line.self, from: data).appAccountToken
                states[token] = try JSONDecoder().decode(AccountState.self, from: data)
            } catch {
                throw ProbeError.badJSON("line \(number): \(error)")
            }
        }
        return states
    }
}

/// A bulk command printing every account at once as JSON lines. Conforms to ``Probe`` by running the command
/// on each call; call ``states()`` once per probe round instead.
public struct BulkProbe: Probe {
    private let run: @Sendable () async throws -> [UInt8]

    /// - Parameter run: runs the command and returns its stdout.
    public init(run: @escaping @Sendable () async throws -> [UInt8]) { self.run = run }

    /// Every account the command printed.
    public func states() async throws -> [String: AccountState] { try JSONLines.parse(try await run()) }

    /// One account (runs the whole command).
    public func state(of account: String) async throws -> AccountState {
        guard let state = try await states()[account] else { throw ProbeError.missingAccount(account) }
        return state
    }
}
