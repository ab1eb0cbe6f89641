import AppStoreModel
import AppStoreServerAPI
import Foundation
import HTTPServer
import Minting
import Signing
import Testing

/// `verifyReceipt`'s shared secret (21004) and the API's faults on it: 21005, 21199 with `is-retryable`, HTTP
/// 500 and slow answers, drawn from the fault seed like every endpoint's (issue 45, item 3).
struct VerifyReceiptFaultTests {
    static func api(faults: APIFaults = APIFaults(), sharedSecret: String? = nil) throws -> AppStoreServerAPI {
        try AppStoreServerAPI(
            store: APIStore(),
            configuration: APIConfiguration(bundleId: APIFixture.bundleId, faults: faults, sharedSecret: sharedSecret),
            pki: APIFixture.pki
        )
    }

    /// A receipt with one purchase of `type`.
    static func receipt(_ type: ProductType) throws -> String {
        var purchase = Minter.impliedTransaction(by: nil, productType: type, signedDate: APIFixture.start)
        purchase.transactionId = "2000000000000001"
        purchase.originalTransactionId = "2000000000000001"
        let app = AppIdentity(bundleId: APIFixture.bundleId, environment: .sandbox)
        return try AppReceipt(app: app, inApp: [purchase], creationDate: APIFixture.start).base64(
            signedBy: APIFixture.pki
        )
    }

    static func post(_ api: AppStoreServerAPI, _ fields: [String: Any]) throws -> (APIAnswer, [String: Any]) {
        let body = Array(try JSONSerialization.data(withJSONObject: fields))
        let answer = api.answer(HTTPRequest(method: "POST", path: "/verifyReceipt", headers: [:], body: body))
        let json = (try? JSONSerialization.jsonObject(with: Data(answer.response.body))) as? [String: Any] ?? [:]
        return (answer, json)
    }

    @Test func aSubscriptionReceiptWithoutTheSharedSecretIs21004() throws {
        let api = try Self.api(sharedSecret: "s3cret")
        let subscription = try Self.receipt(.autoRenewableSubscription)
        #expect(try Self.post(api, ["receipt-data": subscription]).1["status"] as? Int == 21004)
        #expect(try Self.post(api, ["receipt-data": subscription, "password": "other"]).1["status"] as? Int == 21004)
        #expect(try Self.post(api, ["receipt-data": subscription, "password": "s3cret"]).1["status"] as? Int == 0)
        // Apple asks it of auto-renewable receipts only, and an API without a secret asks it of none.
        #expect(try Self.post(api, ["receipt-data": try Self.receipt(.nonConsumable)]).1["status"] as? Int == 0)
        #expect(try Self.post(try Self.api(), ["receipt-data": subscription]).1["status"] as? Int == 0)
    }

    @Test func theAPIsFaultsStrikeVerifyReceipt() throws {
        let receipt = ["receipt-data": try Self.receipt(.nonConsumable)]
        let (retryable, body) = try Self.post(try Self.api(faults: APIFaults(retryableErrorProbability: 1)), receipt)
        #expect(retryable.response.status == 200 && body["status"] as? Int == 21199)
        #expect(body["is-retryable"] as? Bool == true)
        let limited = try Self.post(try Self.api(faults: APIFaults(rateLimitProbability: 1)), receipt)
        #expect(limited.1["status"] as? Int == 21005)
        let internalError = try Self.post(try Self.api(faults: APIFaults(internalErrorProbability: 1)), receipt)
        #expect(internalError.0.response.status == 500)
        let slowAPI = try Self.api(faults: APIFaults(slowProbability: 1, slowSeconds: 3))
        let slow = try Self.post(slowAPI, receipt)
        #expect(slow.0.delaySeconds == 3 && slow.1["status"] as? Int == 0)
        #expect(slowAPI.faultLog.map(\.endpoint) == ["verifyReceipt"] && slowAPI.faultLog.first?.kind == .slow)
    }

    @Test func theSameFaultSeedStrikesTheSameRequests() throws {
        let receipt = ["receipt-data": try Self.receipt(.nonConsumable)]
        let faults = APIFaults(
            seed: 7,
            rateLimitProbability: 0.2,
            retryableErrorProbability: 0.2,
            internalErrorProbability: 0.2
        )
        func statuses(_ api: AppStoreServerAPI) throws -> [String] {
            try (0..<30).map { _ in
                let (answer, body) = try Self.post(api, receipt)
                return "\(answer.response.status)/\(body["status"] as? Int ?? -1)"
            }
        }
        let first = try statuses(try Self.api(faults: faults))
        #expect(first == (try statuses(try Self.api(faults: faults))))
        #expect(Set(first).count == 4, "\(first)")
    }
}
