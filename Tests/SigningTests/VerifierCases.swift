import AppStoreModel
import Foundation

@testable import Signing

/// One verification scenario: a JWS, the verifier configuration, and the status Python gives.
struct VerifierCase: Sendable, CustomStringConvertible {
    enum Method: String, Sendable { case notification, transaction, renewal, appTransaction }

    var name: String
    var method: Method
    var jws: String
    var environment: Environment = .sandbox
    var appAppleId: Int64? = nil
    var root: [UInt8]
    /// "OK", a Python status name, or "EXCEPTION" (Python raises a non-verification error).
    var python: String
    /// What the Swift verifier answers (differs from `python` only where Python raises a raw exception).
    var swift: String

    var description: String { name }
}

enum VerifierFixtures {
    static let bundle = "com.paystorm.test"
    static let appleId: Int64 = 1_234_567_890
    static let nowMs = Int64(Date().timeIntervalSince1970 * 1000)
    static let day: Int64 = 86_400_000

    static func transaction(
        environment: String = "Sandbox",
        bundle: String = bundle,
        signedDate: String? = nil,
        extra: String = ""
    ) -> String {
        let date = signedDate.map { #","signedDate":\#($0)"# } ?? #","signedDate":\#(nowMs)"#
        return #"{"bundleId":"\#(bundle)","environment":"\#(environment)","transactionId":"2000000001","#
            + #""originalTransactionId":"2000000001","productId":"coins.100","type":"Consumable","quantity":1,"#
            + #""price":990,"currency":"USD","purchaseDate":\#(nowMs)\#(date)\#(extra)}"#
    }

    static func renewal(environment: String = "Sandbox") -> String {
        #"{"environment":"\#(environment)","signedDate":\#(nowMs),"originalTransactionId":"1","productId":"p","#
            + #""autoRenewProductId":"p","autoRenewStatus":1}"#
    }

    static func notification(body: String, type: String = "SUBSCRIBED") -> String {
        #"{"notificationType":"\#(type)","subtype":"INITIAL_BUY","notificationUUID":"\#(UUID().uuidString.lowercased())","#
            + #""version":"2.0","signedDate":\#(nowMs),\#(body)}"#
    }

    static func data(environment: String = "Sandbox", bundle: String = bundle, appleId: Int64 = appleId) -> String {
        #""data":{"appAppleId":\#(appleId),"bundleId":"\#(bundle)","environment":"\#(environment)","status":1}"#
    }

    static func sign(
        _ payload: String,
        pki: TestPKI = sharedPKI,
        header: JWSHeader? = nil,
        key: SigningKey? = nil
    ) -> String {
        let header = header ?? JWSHeader(alg: "ES256", x5c: JWS.x5c(pki.chain))
        return try! JWS.sign(payload: Array(payload.utf8), header: header, key: key ?? pki.leafKey)
    }

    static func variant(_ options: PKIOptions) -> TestPKI { try! sharedPKI.variant(options) }

    static let cases: [VerifierCase] = {
        let root = sharedPKI.root.der
        let chain = JWS.x5c(sharedPKI.chain)
        var cases: [VerifierCase] = []
        func add(
            _ name: String,
            _ method: VerifierCase.Method,
            _ jws: String,
            environment: Environment = .sandbox,
            appAppleId: Int64? = nil,
            root trusted: [UInt8]? = nil,
            _ python: String,
            swift: String? = nil
        ) {
            cases.append(
                VerifierCase(
                    name: name,
                    method: method,
                    jws: jws,
                    environment: environment,
                    appAppleId: appAppleId,
                    root: trusted ?? root,
                    python: python,
                    swift: swift ?? python
                )
            )
        }

        // Accepted.
        add("transaction", .transaction, sign(transaction()), "OK")
        add("renewal info", .renewal, sign(renewal()), "OK")
        add("notification with data", .notification, sign(notification(body: data())), "OK")
        add(
            "production with matching appAppleId",
            .transaction,
            sign(transaction(environment: "Production")),
            environment: .production,
            appAppleId: appleId,
            "OK"
        )
        add(
            "production notification with matching appAppleId",
            .notification,
            sign(notification(body: data(environment: "Production"))),
            environment: .production,
            appAppleId: appleId,
            "OK"
        )
        add(
            "summary",
            .notification,
            sign(
                notification(
                    body: #""summary":{"environment":"Sandbox","appAppleId":1,"bundleId":"\#(bundle)","#
                        + #""productId":"p","requestIdentifier":"r","succeededCount":1,"failedCount":0}"#,
                    type: "RENEWAL_EXTENSION"
                )
            ),
            "OK"
        )
        add(
            "TEST shape",
            .notification,
            sign(
                #"{"notificationType":"TEST","notificationUUID":"u","signedDate":\#(nowMs),"#
                    + #""data":{"appAppleId":1,"bundleId":"\#(bundle)","environment":"Sandbox"}}"#
            ),
            "OK"
        )
        add("unknown notificationType", .notification, sign(notification(body: data(), type: "FUTURE_TYPE")), "OK")
        add(
            "external purchase token in sandbox",
            .notification,
            sign(
                notification(
                    body: #""externalPurchaseToken":{"externalPurchaseId":"SANDBOX_1","tokenCreationDate":1,"#
                        + #""appAppleId":1,"bundleId":"\#(bundle)"}"#,
                    type: "EXTERNAL_PURCHASE_TOKEN"
                )
            ),
            "OK"
        )
        add(
            "app data",
            .notification,
            sign(
                notification(
                    body: #""appData":{"appAppleId":1,"bundleId":"\#(bundle)","environment":"Sandbox"}"#,
                    type: "RESCIND_CONSENT"
                )
            ),
            "OK"
        )
        add(
            "app transaction dated by receiptCreationDate",
            .appTransaction,
            sign(#"{"bundleId":"\#(bundle)","receiptType":"Sandbox","appAppleId":1,"receiptCreationDate":\#(nowMs)}"#),
            "OK"
        )
        add(
            "garbage x5c[2]",
            .transaction,
            sign(transaction(), header: JWSHeader(alg: "ES256", x5c: [chain[0], chain[1], "AAAA"])),
            "OK"
        )
        add("typ JWT in the header", .transaction, sign(transaction(), header: JWSHeader(x5c: chain, typ: "JWT")), "OK")
        let expired = variant(
            PKIOptions(
                notBefore: Date() - 800 * 86_400,
                notAfter: Date() - 100 * 86_400
            )
        )
        add(
            "expired chain, signedDate in window",
            .transaction,
            sign(transaction(signedDate: "\(nowMs - 400 * day)"), pki: expired),
            "OK"
        )
        add(
            "notification wrapping a production transaction",
            .notification,
            sign(
                notification(
                    body: #""data":{"appAppleId":1,"bundleId":"\#(bundle)","environment":"Sandbox","#
                        + #""signedTransactionInfo":"\#(sign(transaction(environment: "Production")))"}"#
                )
            ),
            "OK"
        )

        // Identity.
        add("wrong bundleId", .transaction, sign(transaction(bundle: "com.other")), "INVALID_APP_IDENTIFIER")
        add(
            "wrong notification bundleId",
            .notification,
            sign(notification(body: data(bundle: "com.other"))),
            "INVALID_APP_IDENTIFIER"
        )
        add(
            "wrong appAppleId in production",
            .notification,
            sign(notification(body: data(environment: "Production", appleId: 7))),
            environment: .production,
            appAppleId: appleId,
            "INVALID_APP_IDENTIFIER"
        )
        add(
            "wrong appAppleId in sandbox is not checked",
            .notification,
            sign(notification(body: data(appleId: 7))),
            "OK"
        )
        add(
            "notification without data",
            .notification,
            sign(notification(body: #""version2":"x""#)),
            "INVALID_APP_IDENTIFIER"
        )
        add(
            "bundle checked before environment",
            .transaction,
            sign(transaction(environment: "Production", bundle: "com.other")),
            "INVALID_APP_IDENTIFIER"
        )
        add(
            "wrong environment",
            .transaction,
            sign(transaction(environment: "Production")),
            "INVALID_ENVIRONMENT"
        )
        add("wrong renewal environment", .renewal, sign(renewal(environment: "Production")), "INVALID_ENVIRONMENT")
        add(
            "environment is case-sensitive",
            .transaction,
            sign(transaction(environment: "sandbox")),
            "INVALID_ENVIRONMENT"
        )
        add(
            "external purchase token without SANDBOX prefix",
            .notification,
            sign(
                notification(
                    body:
                        #""externalPurchaseToken":{"externalPurchaseId":"X_1","appAppleId":1,"bundleId":"\#(bundle)"}"#,
                    type: "EXTERNAL_PURCHASE_TOKEN"
                )
            ),
            "INVALID_ENVIRONMENT"
        )

        // Chain shape and encoding.
        add(
            "two certificates",
            .transaction,
            sign(transaction(), header: JWSHeader(alg: "ES256", x5c: Array(chain.prefix(2)))),
            "INVALID_CHAIN_LENGTH"
        )
        add(
            "four certificates",
            .transaction,
            sign(transaction(), header: JWSHeader(alg: "ES256", x5c: chain + [chain[2]])),
            "INVALID_CHAIN_LENGTH"
        )
        let urlChain = sharedPKI.chain.map { JWS.base64URL($0.der) }
        add(
            "base64url x5c",
            .transaction,
            sign(transaction(), header: JWSHeader(alg: "ES256", x5c: urlChain)),
            "INVALID_CERTIFICATE"
        )
        add(
            "x5c[1] not a certificate",
            .transaction,
            sign(transaction(), header: JWSHeader(alg: "ES256", x5c: [chain[0], "AAAA", chain[2]])),
            "INVALID_CERTIFICATE"
        )
        add("no trusted root", .transaction, sign(transaction()), root: [], "INVALID_CERTIFICATE")

        // Header, signature and payload.
        add("no x5c", .transaction, sign(transaction(), header: JWSHeader(alg: "ES256")), "VERIFICATION_FAILURE")
        add(
            "empty x5c",
            .transaction,
            sign(transaction(), header: JWSHeader(alg: "ES256", x5c: [])),
            "VERIFICATION_FAILURE"
        )
        add(
            "alg ES384",
            .transaction,
            sign(transaction(), header: JWSHeader(alg: "ES384", x5c: chain)),
            "VERIFICATION_FAILURE"
        )
        add(
            "alg none",
            .transaction,
            sign(transaction(), header: JWSHeader(alg: "none", x5c: chain)),
            "VERIFICATION_FAILURE"
        )
        add(
            "foreign signing key",
            .transaction,
            sign(transaction(), key: try! SigningKey.generate(.p256)),
            "VERIFICATION_FAILURE"
        )
        let good = sign(transaction())
        let parts = good.split(separator: ".").map(String.init)
        let tampered = JWS.base64URL(Array(transaction(bundle: bundle, extra: #","quantity2":9"#).utf8))
        add("tampered payload", .transaction, "\(parts[0]).\(tampered).\(parts[2])", "VERIFICATION_FAILURE")
        add("no signature", .transaction, "\(parts[0]).\(parts[1]).", "VERIFICATION_FAILURE")
        add("four segments", .transaction, "a.b.c.d", "VERIFICATION_FAILURE")
        add("one segment", .transaction, "abc", "VERIFICATION_FAILURE")
        add("payload not JSON", .transaction, sign("not json"), "VERIFICATION_FAILURE")
        add(
            "expired exp claim",
            .transaction,
            sign(transaction(extra: #","exp":\#(nowMs / 1000 - 60)"#)),
            "VERIFICATION_FAILURE"
        )
        add("aud claim", .transaction, sign(transaction(extra: #","aud":"x""#)), "VERIFICATION_FAILURE")
        // The claims are read by a byte scan when the top level is plain; these probe its edges.
        add(
            "expired exp claim with an escaped key",
            .transaction,
            sign(transaction(extra: #","\u0065xp":\#(nowMs / 1000 - 60)"#)),
            "VERIFICATION_FAILURE"
        )
        add(
            "expired exp claim after a string with escaped quotes",
            .transaction,
            sign(transaction(extra: #","note":"a\"b\\","exp":\#(nowMs / 1000 - 60)"#)),
            "VERIFICATION_FAILURE"
        )
        add("null exp claim", .transaction, sign(transaction(extra: #","exp":null"#)), "VERIFICATION_FAILURE")
        add(
            "exp and aud nested below the top level",
            .transaction,
            sign(transaction(extra: #","note":{"exp":1,"aud":["x"],"s":"}\"{"},"list":[{"exp":1}],"flag":true"#)),
            "OK"
        )
        add(
            "signedDate before the chain, after whitespace",
            .transaction,
            sign(transaction(signedDate: " \(nowMs - 500 * day) ")),
            "VERIFICATION_FAILURE"
        )

        // Dates.
        add(
            "signedDate before the chain",
            .transaction,
            sign(transaction(signedDate: "\(nowMs - 500 * day)")),
            "VERIFICATION_FAILURE"
        )
        add(
            "signedDate in seconds",
            .transaction,
            sign(transaction(signedDate: "\(nowMs / 1000)")),
            "VERIFICATION_FAILURE"
        )
        add(
            "expired chain without signedDate",
            .renewal,
            sign(#"{"environment":"Sandbox","originalTransactionId":"1"}"#, pki: expired),
            "VERIFICATION_FAILURE"
        )
        add(
            "signedDate after the chain",
            .transaction,
            sign(transaction(signedDate: "\(nowMs + 800 * day)")),
            "VERIFICATION_FAILURE"
        )

        // Certificates.
        add(
            "missing leaf OID",
            .transaction,
            sign(transaction(), pki: variant(PKIOptions(leafAppleOID: false))),
            "VERIFICATION_FAILURE"
        )
        add(
            "missing intermediate OID",
            .transaction,
            sign(transaction(), pki: variant(PKIOptions(intermediateAppleOID: false))),
            "VERIFICATION_FAILURE"
        )
        add(
            "critical Apple OIDs",
            .transaction,
            sign(transaction(), pki: variant(PKIOptions(appleOIDsCritical: true))),
            "VERIFICATION_FAILURE"
        )
        add(
            "untrusted root",
            .transaction,
            sign(transaction(), pki: try! TestPKI.generate()),
            "VERIFICATION_FAILURE"
        )

        // Typing: Python raises a raw cattrs error after verifying; Swift reports a failure.
        add(
            "price as a string",
            .transaction,
            sign(transaction(extra: #","price":"9.99""#).replacingOccurrences(of: #""price":990,"#, with: "")),
            "EXCEPTION",
            swift: "VERIFICATION_FAILURE"
        )
        return cases
    }()
}
