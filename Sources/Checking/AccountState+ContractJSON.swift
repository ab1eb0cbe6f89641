import Foundation
public import TargetContract

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
