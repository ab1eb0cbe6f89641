import Checking
import Foundation
import Testing

/// A harness behind its schedule books a purchase only when it releases a delivery of it, while the App Store
/// emulation (`verifyReceipt`, the App Store Server API) discloses it from its intended time: a backend that
/// learns it there and grants it before its delivery was released grants what the App Store issued.
struct DisclosedPurchaseTests {
    let token = "6f1c2a44-0000-4000-8000-000000000001"

    /// A checker whose emulation discloses transaction 5001 (`pro`) to `token` from t = 5 s.
    func checker() throws -> Checker {
        let token = token
        return Checker(
            profile: try scriptProfile(),
            startMillis: start,
            disclosure: { id, account, millis in
                id == "5001" && account.lowercased() == token && millis >= start + 5000 ? "pro" : nil
            }
        )
    }

    @Test func grantOfADisclosedPurchaseNotYetReleasedIsIssued() throws {
        let checker = try checker()
        let disclosed = AccountState(grants: [.init(transactionId: "5001", count: 1)])
        #expect(failures(checker.check(account: token, state: disclosed, at: 6, final: false)).isEmpty)
        // An entitlement naming it is that purchase's.
        let entitled = AccountState(entitlements: [.init(productId: "pro", transactionId: "5001")])
        #expect(failures(checker.check(account: token, state: entitled, at: 6, final: false)).isEmpty)
    }

    @Test func grantOfATransactionTheStoreNeverDisclosedStillFails() throws {
        let checker = try checker()
        // A forged ID, never in the store.
        let forged = AccountState(grants: [.init(transactionId: "5002", count: 1)])
        let failed = failures(checker.check(account: token, state: forged, at: 6, final: false))
        #expect(failed == [.noUnlockWithoutVerifiedPurchase])
        // Not disclosed yet (before its intended time), or to another account.
        let early = AccountState(grants: [.init(transactionId: "5001", count: 1)])
        #expect(failures(checker.check(account: token, state: early, at: 4, final: false)) == failed)
        let other = "6f1c2a44-0000-4000-8000-000000000002"
        #expect(failures(checker.check(account: other, state: early, at: 6, final: false)) == failed)
        // An entitlement to a product whose disclosed transaction is another's.
        let entitled = AccountState(entitlements: [.init(productId: "season.pass", transactionId: "5001")])
        #expect(failures(checker.check(account: token, state: entitled, at: 6, final: false)) == failed)
    }
}
