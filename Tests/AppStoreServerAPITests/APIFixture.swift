import AppStoreModel
import AppStoreServerAPI
import Foundation
import HTTPServer
import Signing
import Simulation
import Synchronization

/// What the API handed to its delivery hook.
final class Deliveries: Sendable {
    let list = Mutex<[APINotification]>([])
    var all: [APINotification] { list.withLock { $0 } }
}

/// The world's time, moved by the tests.
final class WorldClock: Sendable {
    let value = Atomic<Int64>(APIFixture.start)
}

/// One API on a fixed, movable world clock, with a bearer key and a verifier that trusts the test root.
final class APIFixture: Sendable {
    static let bundleId = "com.example.paystorm"
    static let start: Int64 = 1_800_000_000_000
    static let pki = try! TestPKI.generate()
    static let bearerKey = try! SigningKey.generate(.p256)

    let store = APIStore()
    let api: AppStoreServerAPI
    let clock: WorldClock
    let delivered: Deliveries
    let verifier: SignedDataVerifier

    init(faults: APIFaults = APIFaults(), publicKeys: [String: String] = [:], delivers: Bool = true) throws {
        let clock = WorldClock()
        let box = Deliveries()
        let record: @Sendable (APINotification) -> Void = { notification in
            box.list.withLock { $0.append(notification) }
        }
        let deliver = delivers ? record : nil
        self.clock = clock
        self.delivered = box
        api = try AppStoreServerAPI(
            store: store,
            configuration: APIConfiguration(bundleId: Self.bundleId, publicKeys: publicKeys, faults: faults),
            pki: Self.pki,
            clock: { clock.value.load(ordering: .relaxed) },
            deliver: deliver
        )
        verifier = try SignedDataVerifier(
            rootCertificates: [Self.pki.root.der],
            enableOnlineChecks: false,
            environment: .sandbox,
            bundleId: Self.bundleId,
            appAppleId: 1_234_567_890
        )
    }

    func advance(seconds: Double) { clock.value.add(Int64(seconds * 1000), ordering: .relaxed) }

    /// A bearer token as Apple's libraries make it (no `iat`), or with the claims given.
    static func token(
        claims: [String: Any]? = nil,
        kid: String = "KEY123",
        alg: String = "ES256",
        key: SigningKey = bearerKey,
        nowSeconds: Int64 = start / 1000
    ) -> String {
        let body =
            claims ?? [
                "iss": "57246542-96fe-1a63-e053-0824d011072a", "aud": "appstoreconnect-v1", "bid": bundleId,
                "exp": nowSeconds + 300,
            ]
        let header = try! JSONSerialization.data(withJSONObject: ["alg": alg, "kid": kid, "typ": "JWT"])
        let payload = try! JSONSerialization.data(withJSONObject: body)
        return try! JWS.sign(payload: Array(payload), headerJSON: Array(header), key: key)
    }

    func request(
        _ method: String,
        _ path: String,
        query: String? = nil,
        body: Any? = nil,
        token: String? = APIFixture.token()
    ) -> APIAnswer {
        var headers: [String: String] = [:]
        if let token { headers["authorization"] = "Bearer " + token }
        let bytes = body.map { Array(try! JSONSerialization.data(withJSONObject: $0)) } ?? []
        return api.answer(HTTPRequest(method: method, path: path, query: query, headers: headers, body: bytes))
    }

    /// A JSON value written as text, for test arguments (which must be Sendable).
    static func value(_ json: String) -> Any {
        try! JSONSerialization.jsonObject(with: Data(json.utf8), options: .fragmentsAllowed)
    }

    func json(_ answer: APIAnswer) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(answer.response.body))) as? [String: Any] ?? [:]
    }

    func transaction(_ jws: Any?) -> JWSTransactionDecodedPayload? {
        guard let jws = jws as? String else { return nil }
        return try? verifier.verifyAndDecodeTransaction(jws).get()
    }

    /// Transaction facts as the world makes them (the memberwise initializer is internal to Simulation).
    static func facts(
        id: String,
        original: String? = nil,
        product: String = "coins.100",
        type: String = "Consumable",
        purchase: Int64 = start,
        expires: Int64? = nil,
        group: String? = nil,
        revoked: Int64? = nil,
        ownership: String = "PURCHASED"
    ) -> TransactionFacts {
        var fields: [String: Any] = [
            "transactionId": id, "originalTransactionId": original ?? id, "bundleId": bundleId, "productId": product,
            "purchaseDate": purchase, "originalPurchaseDate": purchase, "quantity": 1, "type": type,
            "inAppOwnershipType": ownership, "signedDate": purchase, "environment": "Sandbox", "storefront": "USA",
            "storefrontId": "143441", "transactionReason": "PURCHASE", "currency": "USD", "price": 990,
            "appTransactionId": "704000000000000001", "webOrderLineItemId": "9" + id,
        ]
        if let expires { fields["expiresDate"] = expires }
        if let group { fields["subscriptionGroupIdentifier"] = group }
        if let revoked {
            fields["revocationDate"] = revoked
            fields["revocationReason"] = 0
            fields["signedDate"] = revoked  // a refund is a newer view of the transaction
        }
        let data = try! JSONSerialization.data(withJSONObject: fields)
        return TransactionFacts(try! JSONDecoder().decode(JWSTransactionDecodedPayload.self, from: data))
    }

    static func renewal(
        original: String,
        product: String,
        renewalDate: Int64,
        billingRetry: Bool = false
    ) -> JWSRenewalInfoDecodedPayload {
        let fields: [String: Any] = [
            "originalTransactionId": original, "autoRenewProductId": product, "productId": product,
            "autoRenewStatus": 1, "signedDate": start, "environment": "Sandbox",
            "recentSubscriptionStartDate": start, "renewalDate": renewalDate, "currency": "USD", "renewalPrice": 990,
            "appTransactionId": "704000000000000001", "isInBillingRetryPeriod": billingRetry,
        ]
        let data = try! JSONSerialization.data(withJSONObject: fields)
        return try! JSONDecoder().decode(JWSRenewalInfoDecodedPayload.self, from: data)
    }

    static func notification(type: String, uuid: String, transaction: TransactionFacts? = nil) -> NotificationFacts {
        let fields: [String: Any] = [
            "notificationType": type, "notificationUUID": uuid, "signedDate": start, "version": "2.0",
            "data": ["bundleId": bundleId, "appAppleId": 1_234_567_890, "environment": "Sandbox"],
        ]
        let payload = try! JSONDecoder().decode(
            ResponseBodyV2DecodedPayload.self,
            from: try! JSONSerialization.data(withJSONObject: fields)
        )
        return NotificationFacts(payload, transaction: transaction)
    }
}
