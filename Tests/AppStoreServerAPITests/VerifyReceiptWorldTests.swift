import AppStoreModel
import AppStoreServerAPI
import Foundation
import HTTPServer
import Minting
import Signing
import Simulation
import Testing

/// `verifyReceipt` answers from the world's state at its current time: renewals and refunds newer than the
/// receipt, the subscription's renewal info and a freshly minted latest receipt, never a fact from the world's
/// future (issue 45, item 3).
struct VerifyReceiptWorldTests {
    static let month: Int64 = 30 * 86_400_000
    static let (first, renewal, other, coins) = (
        "2000000000000001", "2000000000000002", "2000000000000009", "2000000000000005"
    )
    let fixture: APIFixture

    /// Customer 0 buys a subscription at the start; it renews a month later, then the first period is refunded
    /// and the customer turns auto-renew off (in billing retry, with a grace period). Customer 0 also buys a
    /// consumable, customer 1 a purchase of its own.
    init() throws {
        fixture = try APIFixture()
        let (start, month, store) = (APIFixture.start, Self.month, fixture.store)
        let subscription = "Auto-Renewable Subscription"
        store.insert(
            APIFixture.facts(id: Self.first, product: "pro", type: subscription, expires: start + month, group: "g"),
            customer: 0,
            at: start
        )
        store.insert(APIFixture.facts(id: Self.coins, purchase: start + 10), customer: 0, at: start + 10)
        store.insert(APIFixture.facts(id: Self.other), customer: 1, at: start)
        let renewed = APIFixture.facts(
            id: Self.renewal,
            original: Self.first,
            product: "pro",
            type: subscription,
            purchase: start + month,
            expires: start + 2 * month,
            group: "g"
        )
        store.insert(renewed, customer: 0, at: start + month)
        var refunded = APIFixture.facts(
            id: Self.first,
            product: "pro",
            type: subscription,
            expires: start + month,
            group: "g",
            revoked: start + month + 1000
        )
        refunded.payload.revocationReason = 1
        store.insert(refunded, customer: 0, at: start + month + 1000)
        var info = APIFixture.renewal(original: Self.first, product: "pro", renewalDate: start + 2 * month)
        info.autoRenewStatus = .off
        info.expirationIntent = .customerCancelled
        info.isInBillingRetryPeriod = true
        info.gracePeriodExpiresDate = start + 2 * month + 86_400_000
        store.insert(info, at: start + month + 2000)
    }

    /// The receipt the device sent at the start: the first period only, as it was bought.
    func sentReceipt() throws -> String {
        let app = AppIdentity(bundleId: APIFixture.bundleId, environment: .sandbox)
        let purchase = fixture.store.transactions(at: APIFixture.start).first {
            $0.transaction.transactionId == Self.first
        }
        let payload = try #require(purchase?.transaction.payload)
        return try AppReceipt(app: app, inApp: [payload], creationDate: APIFixture.start).base64(
            signedBy: APIFixture.pki
        )
    }

    func verify(at seconds: Double) throws -> [String: Any] {
        fixture.advance(seconds: seconds)
        let body = Array(try JSONSerialization.data(withJSONObject: ["receipt-data": try sentReceipt()]))
        let answer = fixture.api.answer(HTTPRequest(method: "POST", path: "/verifyReceipt", headers: [:], body: body))
        return fixture.json(answer)
    }

    @Test func latestReceiptInfoHoldsTheRenewalAndTheRefundTheReceiptDoesNot() throws {
        let answer = try verify(at: Double(Self.month + 3000) / 1000)
        #expect(answer["status"] as? Int == 0)
        let inApp = try #require((answer["receipt"] as? [String: Any])?["in_app"] as? [[String: Any]])
        #expect(inApp.map { $0["transaction_id"] as? String } == [Self.first] && inApp[0]["cancellation_date"] == nil)
        let latest = try #require(answer["latest_receipt_info"] as? [[String: Any]])
        // Neither the consumable the receipt does not list (finished) nor another customer's purchase.
        #expect(latest.map { $0["transaction_id"] as? String } == [Self.first, Self.renewal])
        #expect(latest[0]["cancellation_date_ms"] as? String == String(APIFixture.start + Self.month + 1000))
        #expect(latest[0]["cancellation_reason"] as? String == "1" && latest[1]["cancellation_date"] == nil)
        let pending = try #require(answer["pending_renewal_info"] as? [[String: String]])
        #expect(pending.count == 1)
        #expect(
            pending.first?["original_transaction_id"] == Self.first && pending.first?["auto_renew_product_id"] == "pro"
        )
        #expect(pending.first?["auto_renew_status"] == "0" && pending.first?["expiration_intent"] == "1")
        #expect(pending.first?["is_in_billing_retry_period"] == "1")
        #expect(
            pending.first?["grace_period_expires_date_ms"] == String(APIFixture.start + 2 * Self.month + 86_400_000)
        )
        let fresh = try AppReceipt.read(
            base64: try #require(answer["latest_receipt"] as? String),
            trusting: APIFixture.pki.root
        )
        #expect(fresh.inApp.map(\.transactionId) == [Self.first, Self.renewal])
        #expect(fresh.inApp.first?.revocationDate != nil && fresh.app.bundleId == APIFixture.bundleId)
    }

    @Test func aFactOfTheWorldsFutureIsNotAnswered() throws {
        let answer = try verify(at: 1)
        let latest = try #require(answer["latest_receipt_info"] as? [[String: Any]])
        #expect(latest.map { $0["transaction_id"] as? String } == [Self.first] && latest[0]["cancellation_date"] == nil)
        #expect(answer["pending_renewal_info"] == nil)
    }
}
