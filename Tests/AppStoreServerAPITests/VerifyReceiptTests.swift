import AppStoreModel
import AppStoreServerAPI
import Foundation
import HTTPServer
import Minting
import Signing
import Testing

struct VerifyReceiptTests {
    let fixture: APIFixture

    init() throws {
        fixture = try APIFixture()
    }

    private func receipt(_ environment: Environment, pki: TestPKI = APIFixture.pki) throws -> String {
        var first = Minter.impliedTransaction(
            by: nil,
            productType: .autoRenewableSubscription,
            signedDate: 1_767_225_600_000
        )
        first.transactionId = "2000000000000001"
        first.originalTransactionId = "2000000000000001"
        var renewal = first
        renewal.transactionId = "2000000000000002"
        renewal.purchaseDate = first.expiresDate
        renewal.expiresDate = first.expiresDate.map { $0 + Minter.defaultPeriodMilliseconds }
        let app = AppIdentity(bundleId: APIFixture.bundleId, environment: environment)
        return try AppReceipt(app: app, inApp: [first, renewal], creationDate: 1_767_225_600_000).base64(signedBy: pki)
    }

    private func verify(_ body: [String: Any], host: String? = nil, method: String = "POST") -> [String: Any] {
        var headers: [String: String] = [:]
        if let host { headers["host"] = host }
        let bytes = Array(try! JSONSerialization.data(withJSONObject: body))
        let answer = fixture.api.answer(
            HTTPRequest(method: method, path: "/verifyReceipt", headers: headers, body: bytes)
        )
        #expect(answer.response.status == 200)
        return fixture.json(answer)
    }

    @Test func answersAValidReceiptWithItsPurchases() throws {
        let base64 = try receipt(.sandbox)
        let answer = verify(["receipt-data": base64])
        #expect(answer["status"] as? Int == 0)
        #expect(answer["environment"] as? String == "Sandbox")
        // A store that knows none of its purchases answers with the receipt's own: a fresh receipt listing them.
        let fresh = try AppReceipt.read(
            base64: try #require(answer["latest_receipt"] as? String),
            trusting: APIFixture.pki.root
        )
        #expect(fresh.inApp.map(\.transactionId) == ["2000000000000001", "2000000000000002"])
        let body = try #require(answer["receipt"] as? [String: Any])
        #expect(body["bundle_id"] as? String == APIFixture.bundleId)
        let inApp = try #require(body["in_app"] as? [[String: Any]])
        #expect(inApp.map { $0["transaction_id"] as? String } == ["2000000000000001", "2000000000000002"])
        #expect(inApp[0]["original_transaction_id"] as? String == "2000000000000001")
        #expect(inApp[0]["purchase_date_ms"] as? String == "1767225540000")
        #expect(inApp[0]["purchase_date"] as? String == "2025-12-31 23:59:00 Etc/GMT")
        #expect(inApp[0]["purchase_date_pst"] as? String == "2025-12-31 15:59:00 America/Los_Angeles")
        let latest = try #require(answer["latest_receipt_info"] as? [[String: Any]])
        #expect(latest.count == 2)
    }

    @Test func keepsOnlyTheNewestTransactionWhenAskedTo() throws {
        let answer = verify(["receipt-data": try receipt(.sandbox), "exclude-old-transactions": true])
        let latest = try #require(answer["latest_receipt_info"] as? [[String: Any]])
        #expect(latest.map { $0["transaction_id"] as? String } == ["2000000000000002"])
    }

    @Test func tellsTheBackendToRetryASandboxReceiptAgainstSandbox() throws {
        let base64 = try receipt(.sandbox)
        #expect(verify(["receipt-data": base64], host: "buy.itunes.apple.com")["status"] as? Int == 21007)
        #expect(verify(["receipt-data": base64], host: "sandbox.itunes.apple.com:443")["status"] as? Int == 0)
        let production = try receipt(.production)
        #expect(verify(["receipt-data": production], host: "sandbox.itunes.apple.com")["status"] as? Int == 21008)
        #expect(verify(["receipt-data": production], host: "buy.itunes.apple.com")["status"] as? Int == 0)
    }

    @Test func refusesMalformedAndUnauthenticatedReceipts() throws {
        #expect(verify([:])["status"] as? Int == 21002)
        #expect(verify(["receipt-data": "bm90IGEgcmVjZWlwdA=="])["status"] as? Int == 21002)
        let forged = try receipt(.sandbox, pki: try TestPKI.generate())
        #expect(verify(["receipt-data": forged])["status"] as? Int == 21003)
        #expect(verify([:], method: "GET")["status"] as? Int == 21000)
    }

    /// A forged receipt is unauthenticated (21003) whatever check it forges; one genuinely signed for another
    /// bundle is valid (the backend must compare `bundle_id`), one for Production is sent back to production.
    @Test(arguments: Forgery.allCases)
    func answersAForgedReceiptAsAppleWould(forgery: Forgery) throws {
        let minter = Minter(pki: APIFixture.pki, app: AppIdentity(bundleId: APIFixture.bundleId, environment: .sandbox))
        let now = Minter.nowMilliseconds()
        let purchase = Minter.impliedTransaction(by: nil, productType: .consumable, signedDate: now)
        let base64 = try minter.appReceipt([purchase], creationDate: now, forgery: forgery)
        let expected = [Forgery.wrongBundle: 0, .wrongEnvironment: 21008][forgery] ?? 21003
        #expect(verify(["receipt-data": base64], host: "sandbox.itunes.apple.com")["status"] as? Int == expected)
    }
}
