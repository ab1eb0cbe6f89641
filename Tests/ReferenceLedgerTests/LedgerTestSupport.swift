import AppStoreModel
import Foundation
import HTTPServer
import PayStormTestKit
import TargetContract
import Testing

@testable import ReferenceLedger

/// A blocking HTTP/1.1 exchange on a fresh loopback connection (`Connection: close`).
func http(_ port: UInt16, _ method: String, _ path: String, body: [UInt8] = []) throws -> (status: Int, body: [UInt8]) {
    try RawHTTPClient.exchange(port: port, method, path, body: body, timeoutSeconds: 20)
}

struct TestFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// An unsigned compact JWS around a JSON object; the signature segment is a marker for `FakeVerifier`.
func fakeJWS(_ object: [String: Any], signature: String = "valid") -> String {
    let header = JWSBase64.encode(Array(#"{"alg":"ES256"}"#.utf8))
    let payload = JWSBase64.encode(Array(try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])))
    return "\(header).\(payload).\(signature)"
}

enum JWSBase64 {
    static func encode(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }
}

/// Stands in for the signature check: the signature segment `valid` passes, anything else fails; the app
/// identity and environment are checked like Apple's verifier (after the signature).
struct FakeVerifier: PayloadVerifier {
    var bundleId = "com.paystorm.test"
    var environment = "Sandbox"

    private func signature(_ jws: String) -> Rejection? {
        jws.split(separator: ".").last == "valid"
            ? nil : Rejection(reason: "VERIFICATION_FAILURE", detail: "signature does not verify")
    }

    func notification(_ jws: String) -> Result<ResponseBodyV2DecodedPayload, Rejection> {
        if let rejection = signature(jws) { return .failure(rejection) }
        return UnverifiedJWS.decode(ResponseBodyV2DecodedPayload.self, jws).flatMap { facts in
            if facts.data?.bundleId != bundleId {
                return .failure(Rejection(reason: "INVALID_APP_IDENTIFIER", detail: "bundle"))
            }
            if facts.data?.environment?.rawValue != environment {
                return .failure(Rejection(reason: "INVALID_ENVIRONMENT", detail: "env"))
            }
            return .success(facts)
        }
    }

    func transaction(_ jws: String) -> Result<JWSTransactionDecodedPayload, Rejection> {
        if let rejection = signature(jws) { return .failure(rejection) }
        return UnverifiedJWS.decode(JWSTransactionDecodedPayload.self, jws).flatMap { facts in
            if facts.bundleId != bundleId {
                return .failure(Rejection(reason: "INVALID_APP_IDENTIFIER", detail: "bundle"))
            }
            if facts.environment?.rawValue != environment {
                return .failure(Rejection(reason: "INVALID_ENVIRONMENT", detail: "env"))
            }
            return .success(facts)
        }
    }

    func renewal(_ jws: String) -> Result<JWSRenewalInfoDecodedPayload, Rejection> {
        if let rejection = signature(jws) { return .failure(rejection) }
        return UnverifiedJWS.decode(JWSRenewalInfoDecodedPayload.self, jws).flatMap { facts in
            facts.environment?.rawValue == environment
                ? .success(facts) : .failure(Rejection(reason: "INVALID_ENVIRONMENT", detail: "env"))
        }
    }
}

/// Builds related payloads for one account, like a tiny App Store.
struct Shop {
    var bundleId = "com.paystorm.test"
    var environment = "Sandbox"
    var token = UUID().uuidString.lowercased()
    let now = Int64(Date().timeIntervalSince1970 * 1000)

    func transaction(
        _ id: String,
        product: String,
        type: String,
        original: String? = nil,
        signedDate: Int64? = nil,
        expires: Int64? = nil,
        revoked: Int64? = nil,
        quantity: Int = 1,
        signature: String = "valid",
        bundle: String? = nil,
        environment env: String? = nil,
        purchased: Int64? = nil
    ) -> String {
        var object: [String: Any] = [
            "transactionId": id, "originalTransactionId": original ?? id, "bundleId": bundle ?? bundleId,
            "environment": env ?? environment, "productId": product, "type": type, "appAccountToken": token,
            "purchaseDate": purchased ?? now - 1000, "quantity": quantity, "signedDate": signedDate ?? now,
        ]
        if let expires { object["expiresDate"] = expires }
        if let revoked { object["revocationDate"] = revoked }
        return fakeJWS(object, signature: signature)
    }

    func renewal(original: String, signedDate: Int64? = nil, grace: Int64? = nil) -> String {
        var object: [String: Any] = [
            "originalTransactionId": original, "environment": environment, "autoRenewStatus": 1,
            "signedDate": signedDate ?? now,
        ]
        if let grace { object["gracePeriodExpiresDate"] = grace }
        return fakeJWS(object)
    }

    func notification(
        _ type: String,
        subtype: String? = nil,
        uuid: String = UUID().uuidString,
        signedDate: Int64? = nil,
        transaction: String? = nil,
        renewal: String? = nil,
        status: Int? = nil,
        signature: String = "valid",
        bundle: String? = nil
    ) -> [UInt8] {
        var data: [String: Any] = ["bundleId": bundle ?? bundleId, "environment": environment]
        if let transaction { data["signedTransactionInfo"] = transaction }
        if let renewal { data["signedRenewalInfo"] = renewal }
        if let status { data["status"] = status }
        var object: [String: Any] = [
            "notificationType": type, "notificationUUID": uuid, "signedDate": signedDate ?? now, "data": data,
            "version": "2.0",
        ]
        if let subtype { object["subtype"] = subtype }
        return body(["signedPayload": fakeJWS(object, signature: signature)])
    }

    func device(_ transaction: String) -> [UInt8] { body(["signedTransaction": transaction]) }

    /// A device report of a purchase outcome for `pro`, claiming transaction `t9`.
    func report(_ result: String) -> [UInt8] {
        body(["purchaseResult": result, "productId": "pro", "appAccountToken": token, "transactionId": "t9"])
    }

    func body(_ object: [String: Any]) -> [UInt8] {
        Array(try! JSONSerialization.data(withJSONObject: object))
    }
}

/// A ledger on a temporary database with the fake verifier, listening on 127.0.0.1:0.
final class LedgerFixture: Sendable {
    let ledger: ReferenceLedger
    let port: UInt16
    let directory: String

    init(
        flaws: Set<LedgerFlaw> = [],
        lateCommitDelay: Duration = .milliseconds(200),
        maxBodyBytes: Int = 1 << 20
    ) throws {
        directory = NSTemporaryDirectory() + "ledger-test-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let configuration = LedgerConfiguration(
            databasePath: directory + "/ledger.sqlite",
            trustedRoots: [],
            bundleId: "com.paystorm.test",
            flaws: flaws,
            threads: 4,
            maxBodyBytes: maxBodyBytes,
            lateCommitDelay: lateCommitDelay
        )
        ledger = try ReferenceLedger(configuration: configuration, verifier: FakeVerifier())
        let address = try ledger.start()
        port = UInt16(address.split(separator: ":").last!)!
    }

    deinit {
        ledger.stop()
        try? FileManager.default.removeItem(atPath: directory)
    }

    func post(_ path: String, _ body: [UInt8]) throws -> (status: Int, json: [String: Any]) {
        let response = try http(port, "POST", path, body: body)
        let json = (try? JSONSerialization.jsonObject(with: Data(response.body))) as? [String: Any] ?? [:]
        return (response.status, json)
    }

    func account(_ token: String) throws -> AccountState {
        let response = try http(port, "GET", "/accounts/\(token)")
        guard response.status == 200 else { throw TestFailure("probe answered \(response.status)") }
        return try JSONDecoder().decode(AccountState.self, from: Data(response.body))
    }
}

extension AccountState {
    func count(_ transactionId: String) -> Int { grants?.first { $0.transactionId == transactionId }?.count ?? 0 }
    func entitled(_ productId: String) -> Bool { entitlements.contains { $0.productId == productId } }
}

extension LedgerFixture {
    /// A subscription `o1` of `monthly`, bought and signed at `bought` (its period ended an hour ago), renewed
    /// as `t2` signed at `renewed` (current for another hour), each by its webhook.
    func subscribeAndRenew(_ shop: Shop, bought: Int64, renewed: Int64) throws {
        let first = shop.transaction(
            "o1",
            product: "monthly",
            type: "Auto-Renewable Subscription",
            original: "o1",
            signedDate: bought,
            expires: shop.now - 3_600_000
        )
        let second = shop.transaction(
            "t2",
            product: "monthly",
            type: "Auto-Renewable Subscription",
            original: "o1",
            signedDate: renewed,
            expires: shop.now + 3_600_000
        )
        let subscribed = shop.notification(
            "SUBSCRIBED",
            subtype: "INITIAL_BUY",
            signedDate: bought,
            transaction: first,
            status: 1
        )
        guard try post("/notifications", subscribed).status == 200,
            try post(
                "/notifications",
                shop.notification("DID_RENEW", signedDate: renewed, transaction: second, status: 1)
            )
            .status == 200
        else { throw TestFailure("the subscription's webhooks were not acknowledged") }
    }
}
