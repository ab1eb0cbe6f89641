import Foundation
import TargetContract

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
