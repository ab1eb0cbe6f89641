import Foundation
import TargetContract
import Testing

/// The contract as a target writes it (the reference ledger encodes through this type): only the fields it
/// has, and read back as written.
struct AccountStateTests {
    private static let ledgerShaped = AccountState(
        entitlements: [
            .init(productId: "lifetime", transactionId: "t1"),
            .init(productId: "monthly", transactionId: "t2", expiresDate: 1_700_000_000_000),
        ],
        balances: ["coins": 3],
        grants: [.init(transactionId: "t1", count: 1), .init(transactionId: "t2", count: 1)]
    )

    private static func object(_ state: AccountState) throws -> [String: Any] {
        let data = try JSONEncoder().encode(state)
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    @Test func encodesOnlyTheFieldsATargetHas() throws {
        let object = try Self.object(Self.ledgerShaped)
        #expect(Set(object.keys) == ["entitlements", "balances", "grants"])
        let entitlements = try #require(object["entitlements"] as? [[String: Any]])
        #expect(Set(entitlements[0].keys) == ["productId", "transactionId"])
        #expect(Set(entitlements[1].keys) == ["productId", "transactionId", "expiresDate"])
    }

    @Test func readsBackWhatItWrites() throws {
        let data = try JSONEncoder().encode(Self.ledgerShaped)
        #expect(try JSONDecoder().decode(AccountState.self, from: data) == Self.ledgerShaped)
    }

    @Test func anEmptyAccountStillNamesItsEntitlementsAndBalances() throws {
        let object = try Self.object(AccountState())
        #expect(Set(object.keys) == ["entitlements", "balances"])
    }
}
