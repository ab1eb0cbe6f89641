import Foundation
import Primitives
public import Profile
public import TargetContract

/// A backend's own account endpoint, mapped onto the contract with JSON pointers.
public enum PointerProbe {
    /// Maps a backend's JSON onto the contract.
    /// - Throws: ``ProbeError/badJSON(_:)`` when the JSON does not parse or the entitlements pointer does not
    ///   lead to an array.
    public static func map(_ bytes: [UInt8], with mapping: PointerMapping) throws -> AccountState {
        let root: JSONValue
        do {
            root = try JSONDecoder().decode(JSONValue.self, from: Data(bytes))
        } catch {
            throw ProbeError.badJSON("\(error)")
        }
        var state = AccountState()
        guard case .array(let list)? = root.resolve(pointer: mapping.entitlements) else {
            throw ProbeError.badJSON("\(mapping.entitlements) is not an array")
        }
        for item in list {
            guard let productId = item.resolve(pointer: mapping.productId)?.stringValue else {
                throw ProbeError.badJSON("an entitlement has no string at \(mapping.productId)")
            }
            let transactionId = mapping.transactionId.flatMap { item.resolve(pointer: $0) }.flatMap(\.probedString)
            let expires = mapping.expiresDate.flatMap { item.resolve(pointer: $0) }.flatMap(\.probedInteger)
            state.entitlements.append(.init(productId: productId, transactionId: transactionId, expiresDate: expires))
        }
        if let pointer = mapping.balances {
            guard case .object(let object)? = root.resolve(pointer: pointer) else {
                throw ProbeError.badJSON("\(pointer) is not an object")
            }
            for (product, value) in object {
                guard let count = value.probedInteger else {
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
    private static func counts(at pointer: String, in root: JSONValue, of what: String) throws -> [(String, Int)] {
        guard case .array(let list)? = root.resolve(pointer: pointer) else {
            throw ProbeError.badJSON("\(pointer) is not an array")
        }
        return try list.map { item in
            guard let id = item.resolve(pointer: "/transactionId")?.probedString,
                let count = item.resolve(pointer: "/count")?.probedInteger
            else { throw ProbeError.badJSON("a \(what) lacks transactionId or count") }
            return (id, Int(count))
        }
    }
}

extension JSONValue {
    /// A probed identifier: a string, or a number as its text (a backend may send ids as numbers).
    fileprivate var probedString: String? {
        switch self {
        case .string(let text): text
        case .number(let text): probedInteger.map { String($0) } ?? text
        default: nil
        }
    }

    /// A probed count or date: an integral number (`3` or `3.0`), or a string of digits; never a Bool.
    fileprivate var probedInteger: Int64? {
        switch self {
        case .number(let text):
            if let value = Int64(text) { return value }
            guard let value = Double(text), value == value.rounded() else { return nil }
            return Int64(exactly: value)
        case .string(let text): return Int64(text)
        default: return nil
        }
    }
}
