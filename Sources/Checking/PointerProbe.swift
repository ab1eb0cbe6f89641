import Foundation
public import Profile
public import TargetContract

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
