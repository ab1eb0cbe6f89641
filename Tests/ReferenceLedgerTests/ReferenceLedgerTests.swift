import Dispatch
import Foundation
import HTTPServer
import TargetContract
import Testing

@testable import ReferenceLedger

let consumable = "Consumable"
let nonConsumable = "Non-Consumable"
let autoRenewable = "Auto-Renewable Subscription"
let hour: Int64 = 3_600_000

struct ReferenceLedgerTests {
    // MARK: Correct mode

    @Test func grantsAConsumableOnceAcrossDuplicateWebhooks() throws {
        let fixture = try LedgerFixture()
        let shop = Shop()
        let body = shop.notification(
            "ONE_TIME_CHARGE",
            transaction: shop.transaction("t1", product: "coins", type: consumable, quantity: 5)
        )
        let first = try fixture.post("/notifications", body)
        #expect(first.status == 200)
        #expect(first.json["status"] as? String == "processed")
        let second = try fixture.post("/notifications", body)
        #expect(second.status == 200)
        #expect(second.json["status"] as? String == "duplicate")
        let state = try fixture.account(shop.token)
        #expect(state.balances["coins"] == 5)
        #expect(state.count("t1") == 1)
    }

    @Test func grantsOnceUnderConcurrentDuplicates() throws {
        let fixture = try LedgerFixture()
        let shop = Shop()
        let body = shop.notification(
            "ONE_TIME_CHARGE",
            transaction: shop.transaction("t1", product: "coins", type: consumable)
        )
        let device = shop.device(shop.transaction("t1", product: "coins", type: consumable))
        let statuses = StatusList()
        DispatchQueue.concurrentPerform(iterations: 16) { index in
            let status =
                (try? fixture.post(index % 2 == 0 ? "/notifications" : "/transactions", index % 2 == 0 ? body : device)
                    .status) ?? 0
            statuses.append(status)
        }
        #expect(statuses.values.allSatisfy { $0 == 200 })
        let state = try fixture.account(shop.token)
        #expect(state.balances["coins"] == 1)
        #expect(state.count("t1") == 1)
    }

    @Test func grantsOnceAcrossWebhookAndDevice() throws {
        let fixture = try LedgerFixture()
        let shop = Shop()
        let jws = shop.transaction("t1", product: "pro", type: nonConsumable)
        #expect(
            try fixture.post("/notifications", shop.notification("ONE_TIME_CHARGE", transaction: jws)).status == 200
        )
        #expect(try fixture.post("/transactions", shop.device(jws)).status == 200)
        let state = try fixture.account(shop.token)
        #expect(state.count("t1") == 1)
        #expect(state.entitled("pro"))
    }

    @Test(arguments: [
        ("bad signature", "forged", nil as String?, "VERIFICATION_FAILURE"),
        ("wrong bundle", "valid", "com.other.app", "INVALID_APP_IDENTIFIER"),
    ])
    func rejectsForgedNotifications(label: String, signature: String, bundle: String?, reason: String) throws {
        let fixture = try LedgerFixture()
        let shop = Shop()
        let body = shop.notification(
            "ONE_TIME_CHARGE",
            transaction: shop.transaction("t1", product: "pro", type: nonConsumable),
            signature: signature,
            bundle: bundle
        )
        let response = try fixture.post("/notifications", body)
        #expect(response.status == 422, "\(label)")
        #expect(response.json["reason"] as? String == reason)
        #expect(try fixture.account(shop.token).entitlements.isEmpty)
    }

    @Test(arguments: [
        ("forged inner transaction", "forged", nil as String?, nil as String?, "VERIFICATION_FAILURE"),
        ("inner wrong bundle", "valid", "com.other.app", nil, "INVALID_APP_IDENTIFIER"),
        ("inner wrong environment", "valid", nil, "Production", "INVALID_ENVIRONMENT"),
    ])
    func rejectsForgedNestedTransactions(
        label: String,
        signature: String,
        bundle: String?,
        env: String?,
        reason: String
    ) throws {
        let fixture = try LedgerFixture()
        let shop = Shop()
        let inner = shop.transaction(
            "t1",
            product: "pro",
            type: nonConsumable,
            signature: signature,
            bundle: bundle,
            environment: env
        )
        let response = try fixture.post("/notifications", shop.notification("ONE_TIME_CHARGE", transaction: inner))
        #expect(response.status == 422, "\(label)")
        #expect(response.json["reason"] as? String == reason)
        let device = try fixture.post("/transactions", shop.device(inner))
        #expect(device.status == 422)
        #expect(try fixture.account(shop.token).grants == [])
    }

    @Test func revokesARefundedPurchaseAndIgnoresAStaleReplay() throws {
        let fixture = try LedgerFixture()
        let shop = Shop()
        let purchase = shop.transaction("t1", product: "pro", type: nonConsumable, signedDate: shop.now - 2 * hour)
        #expect(try fixture.post("/transactions", shop.device(purchase)).status == 200)
        #expect(try fixture.account(shop.token).entitled("pro"))
        let refunded = shop.transaction("t1", product: "pro", type: nonConsumable, revoked: shop.now - hour)
        #expect(try fixture.post("/notifications", shop.notification("REFUND", transaction: refunded)).status == 200)
        #expect(try !fixture.account(shop.token).entitled("pro"))
        #expect(try fixture.post("/transactions", shop.device(purchase)).status == 200)
        let state = try fixture.account(shop.token)
        #expect(!state.entitled("pro"))
        #expect(state.count("t1") == 1)
    }

    @Test(arguments: [nonConsumable, consumable])
    func keepsARefundWhenTheDeviceRedeliversALaterSignedCopy(type: String) throws {
        let fixture = try LedgerFixture()
        let shop = Shop()
        let purchase = shop.transaction("t1", product: "item", type: type, signedDate: shop.now - 2 * hour)
        #expect(try fixture.post("/transactions", shop.device(purchase)).status == 200)
        let refunded = shop.transaction(
            "t1",
            product: "item",
            type: type,
            signedDate: shop.now - hour,
            revoked: shop.now - hour
        )
        #expect(
            try fixture.post(
                "/notifications",
                shop.notification("REFUND", signedDate: shop.now - hour, transaction: refunded)
            ).status == 200
        )
        // The device's copy is signed after the refund but, like any replay, says nothing about it.
        let resigned = shop.transaction("t1", product: "item", type: type, signedDate: shop.now)
        #expect(try fixture.post("/transactions", shop.device(resigned)).status == 200)
        let state = try fixture.account(shop.token)
        #expect(!state.entitled("item"))
        #expect(state.balances["item", default: 0] == 0)
        #expect(state.count("t1") == 1)
    }

    @Test func keepsARefundedSubscriptionRevokedAgainstALaterDeviceCopy() throws {
        let fixture = try LedgerFixture()
        let shop = Shop()
        let buy = shop.transaction(
            "o1",
            product: "monthly",
            type: autoRenewable,
            signedDate: shop.now - 2 * hour,
            expires: shop.now + hour
        )
        _ = try fixture.post(
            "/notifications",
            shop.notification(
                "SUBSCRIBED",
                subtype: "INITIAL_BUY",
                signedDate: shop.now - 2 * hour,
                transaction: buy,
                status: 1
            )
        )
        let refund = shop.transaction(
            "o1",
            product: "monthly",
            type: autoRenewable,
            signedDate: shop.now - hour,
            expires: shop.now + hour,
            revoked: shop.now - hour
        )
        _ = try fixture.post(
            "/notifications",
            shop.notification("REFUND", signedDate: shop.now - hour, transaction: refund, status: 5)
        )
        let copy = shop.transaction(
            "o1",
            product: "monthly",
            type: autoRenewable,
            signedDate: shop.now,
            expires: shop.now + hour
        )
        #expect(try fixture.post("/transactions", shop.device(copy)).status == 200)
        #expect(try !fixture.account(shop.token).entitled("monthly"))
    }

    @Test(arguments: [true, false])
    func revokesWhenARefundTiesWithAnotherView(refundFirst: Bool) throws {
        let fixture = try LedgerFixture()
        let shop = Shop()
        let buy = shop.transaction(
            "t1",
            product: "coins",
            type: consumable,
            signedDate: shop.now - 2 * hour,
            quantity: 3
        )
        _ = try fixture.post("/transactions", shop.device(buy))
        let refund = shop.notification(
            "REFUND",
            signedDate: shop.now - hour,
            transaction: shop.transaction(
                "t1",
                product: "coins",
                type: consumable,
                signedDate: shop.now - hour,
                revoked: shop.now - hour,
                quantity: 3
            )
        )
        let request = shop.notification(
            "CONSUMPTION_REQUEST",
            signedDate: shop.now - hour,
            transaction: shop.transaction(
                "t1",
                product: "coins",
                type: consumable,
                signedDate: shop.now - hour,
                quantity: 3
            )
        )
        for body in refundFirst ? [refund, request] : [request, refund] {
            #expect(try fixture.post("/notifications", body).status == 200)
        }
        #expect(try fixture.account(shop.token).balances["coins", default: 0] == 0)
    }

    @Test func ignoresARefundOlderThanItsReversal() throws {
        let fixture = try LedgerFixture()
        let shop = Shop()
        _ = try fixture.post(
            "/transactions",
            shop.device(shop.transaction("t1", product: "pro", type: nonConsumable, signedDate: shop.now - 3 * hour))
        )
        let reversed = shop.transaction("t1", product: "pro", type: nonConsumable, signedDate: shop.now - hour)
        _ = try fixture.post(
            "/notifications",
            shop.notification("REFUND_REVERSED", signedDate: shop.now - hour, transaction: reversed)
        )
        let refund = shop.transaction(
            "t1",
            product: "pro",
            type: nonConsumable,
            signedDate: shop.now - 2 * hour,
            revoked: shop.now - 2 * hour
        )
        _ = try fixture.post(
            "/notifications",
            shop.notification("REFUND", signedDate: shop.now - 2 * hour, transaction: refund)
        )
        #expect(try fixture.account(shop.token).entitled("pro"))
    }

    @Test func migratesAVersionOneDatabase() throws {
        let directory = NSTemporaryDirectory() + "ledger-migrate-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/l.sqlite"
        do {
            let database = try Database(path: path)
            try database.execute(Schema.migrations[0])
            try database.execute("PRAGMA user_version = 1")
            try database.execute(
                """
                INSERT INTO transactions (transaction_id, original_transaction_id, app_account_token, product_id,
                    product_type, quantity, revocation_date, signed_date) VALUES ('t1', 't1', 'a', 'p', 'Non-Consumable', 1, 5, 7)
                """
            )
        }
        let store = try LedgerStore(path: path, flaws: [])
        #expect(store.schemaVersion == Schema.currentVersion)
        let rows = try Database(path: path).query("SELECT revocation_signed_date FROM transactions")
        #expect(rows.first?.first?.int == 7)
    }

    @Test func debitsARefundedConsumableAndRestoresItOnReversal() throws {
        let fixture = try LedgerFixture()
        let shop = Shop()
        let buy = shop.transaction(
            "t1",
            product: "coins",
            type: consumable,
            signedDate: shop.now - 3 * hour,
            quantity: 10
        )
        #expect(try fixture.post("/transactions", shop.device(buy)).status == 200)
        let refund = shop.transaction(
            "t1",
            product: "coins",
            type: consumable,
            signedDate: shop.now - 2 * hour,
            revoked: shop.now - 2 * hour,
            quantity: 10
        )
        #expect(
            try fixture.post(
                "/notifications",
                shop.notification("REFUND", signedDate: shop.now - 2 * hour, transaction: refund)
            ).status == 200
        )
        #expect(try fixture.account(shop.token).balances["coins", default: 0] == 0)
        let reversed = shop.transaction(
            "t1",
            product: "coins",
            type: consumable,
            signedDate: shop.now - hour,
            quantity: 10
        )
        #expect(
            try fixture.post(
                "/notifications",
                shop.notification("REFUND_REVERSED", signedDate: shop.now - hour, transaction: reversed)
            ).status == 200
        )
        let state = try fixture.account(shop.token)
        #expect(state.balances["coins"] == 10)
        #expect(state.count("t1") == 1)
    }

    @Test func followsASubscriptionThroughGraceRetryAndExpiry() throws {
        let fixture = try LedgerFixture()
        let shop = Shop()
        func send(
            _ type: String,
            _ subtype: String?,
            _ id: String,
            at offset: Int64,
            expires: Int64,
            status: Int,
            grace: Int64? = nil
        ) throws {
            let signed = shop.now + offset
            let tx = shop.transaction(
                id,
                product: "monthly",
                type: autoRenewable,
                original: "o1",
                signedDate: signed,
                expires: expires
            )
            let renewal = shop.renewal(original: "o1", signedDate: signed, grace: grace)
            let response = try fixture.post(
                "/notifications",
                shop.notification(
                    type,
                    subtype: subtype,
                    signedDate: signed,
                    transaction: tx,
                    renewal: renewal,
                    status: status
                )
            )
            #expect(response.status == 200)
        }
        try send("SUBSCRIBED", "INITIAL_BUY", "o1", at: -5 * hour, expires: shop.now + hour, status: 1)
        #expect(try fixture.account(shop.token).entitled("monthly"))
        try send(
            "DID_FAIL_TO_RENEW",
            "GRACE_PERIOD",
            "o1",
            at: -4 * hour,
            expires: shop.now - hour,
            status: 4,
            grace: shop.now + hour
        )
        #expect(try fixture.account(shop.token).entitled("monthly"))
        try send("GRACE_PERIOD_EXPIRED", nil, "o1", at: -3 * hour, expires: shop.now - hour, status: 3)
        #expect(try !fixture.account(shop.token).entitled("monthly"))
        try send("DID_RENEW", "BILLING_RECOVERY", "t2", at: -2 * hour, expires: shop.now + 2 * hour, status: 1)
        let renewed = try fixture.account(shop.token)
        #expect(renewed.entitlements.first?.transactionId == "t2")
        #expect(renewed.count("t2") == 1)
        // An EXPIRED signed before the recovery arrives late: stale, ignored.
        try send("EXPIRED", "BILLING_RETRY", "o1", at: -2 * hour - 1, expires: shop.now - hour, status: 2)
        #expect(try fixture.account(shop.token).entitled("monthly"))
        try send("EXPIRED", "VOLUNTARY", "t2", at: -hour, expires: shop.now - 1, status: 2)
        #expect(try !fixture.account(shop.token).entitled("monthly"))
    }

    @Test func keepsTheLatestPeriodWhenANewerNotificationCarriesAnOlderTransaction() throws {
        let fixture = try LedgerFixture()
        let shop = Shop()
        try fixture.subscribeAndRenew(shop, bought: shop.now - 3 * hour, renewed: shop.now - 2 * hour)
        let old = shop.transaction(
            "o1",
            product: "monthly",
            type: autoRenewable,
            original: "o1",
            signedDate: shop.now - hour,
            expires: shop.now - hour
        )
        let request = shop.notification("CONSUMPTION_REQUEST", signedDate: shop.now - hour, transaction: old, status: 1)
        #expect(try fixture.post("/notifications", request).status == 200)
        let state = try fixture.account(shop.token)
        #expect(state.entitlements.first?.transactionId == "t2")
        #expect(state.entitlements.first?.expiresDate == shop.now + hour)
    }

    @Test func neverGrantsOnADeviceReport() throws {
        let fixture = try LedgerFixture()
        let shop = Shop()
        for result in ["pending", "userCancelled", "success"] {
            #expect(try fixture.post("/transactions", shop.report(result)).status == 202)
        }
        let state = try fixture.account(shop.token)
        #expect(state.entitlements.isEmpty)
        #expect(state.grants == [])
    }

    @Test(arguments: [
        ("POST", "/notifications", Array("not json".utf8), 400),
        ("POST", "/notifications", Array(#"{"other":1}"#.utf8), 400),
        ("POST", "/notifications", Array(#"{"signedPayload":"a.b"}"#.utf8), 422),
        (
            "POST", "/transactions", Array(#"{"purchaseResult":"pending","productId":"p","appAccountToken":"x"}"#.utf8),
            400
        ),
        ("POST", "/transactions", Array("[]".utf8), 400),
        // Foundation's parser on Linux takes a sign for a digit; a UUID here is the canonical form only.
        (
            "POST", "/transactions",
            Array(
                #"{"purchaseResult":"pending","productId":"p","appAccountToken":"+f2504e0-4f89-11d3-9a0c-0305e82c3301"}"#
                    .utf8
            ),
            400
        ),
        ("GET", "/accounts/not-a-uuid", [], 400),
        ("GET", "/accounts/+f2504e0-4f89-11d3-9a0c-0305e82c3301", [], 400),
        ("GET", "/nowhere", [], 404),
        ("DELETE", "/notifications", [], 405),
        ("GET", "/transactions", [], 405),
        ("POST", "/accounts/3f2504e0-4f89-11d3-9a0c-0305e82c3301", Array("{}".utf8), 405),
    ])
    func answersBadInputWithAClearError(method: String, path: String, body: [UInt8], status: Int) throws {
        let fixture = try LedgerFixture()
        let response = try http(fixture.port, method, path, body: body)
        #expect(response.status == status)
        let json = try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any]
        #expect(json?["error"] is String)
    }

    /// The span between the quotes, and whether it is plain (base64url and dots, so no JSON escape in it).
    @Test(arguments: [
        (#"{"signedPayload":"aGk.eyJ9.c2ln"}"#, "aGk.eyJ9.c2ln" as String?, true),
        (#"{"signedPayload":"a\u002eb"}"#, #"a\u002eb"#, false),
        (#"{"signedPayload": "abc"}"#, nil, false),
        (#"{"signedPayload":""}"#, nil, false),
        (#"{"other":"abc"}"#, nil, false),
        (#"{"signedPayload":"aGk.eyJ9.c2l+"}"#, "aGk.eyJ9.c2l+", false),
        ("{\"signedPayload\":\"aGk.\u{e9}.c2ln\"}", "aGk.\u{e9}.c2ln", false),
        (#"{"signedPayload":"aGk.eyJ9.c2ln"} "#, nil, false),
    ])
    func readsThePlainWebhookBodyWithoutAParser(body: String, span expected: String?, plain: Bool) {
        Array(body.utf8).withUnsafeBufferPointer { bytes in
            let span = ReferenceLedger.plainSpan(bytes)
            #expect(span.map { String(decoding: $0, as: UTF8.self) } == expected)
            #expect(span.map(ReferenceLedger.isPlainJWS) ?? false == plain)
        }
    }

    @Test(arguments: [("processed", 1), ("duplicate", 0), ("recorded", 0), ("processed", 12_345)])
    func writesTheCommitAnswerAsTheJSONEncoderWould(status: String, granted: Int) {
        let body = CommitBody(status: status, granted: granted)
        let fast = body.response(200)
        let encoded = HTTPResponse.json(200, body)
        #expect(fast.status == encoded.status)
        #expect(fast.headers == encoded.headers)
        #expect(String(decoding: fast.body, as: UTF8.self) == String(decoding: encoded.body, as: UTF8.self))
    }

    @Test func answers413ForAnOversizedBody() throws {
        let fixture = try LedgerFixture(maxBodyBytes: 4096)
        let response = try http(fixture.port, "POST", "/notifications", body: [UInt8](repeating: 32, count: 5000))
        #expect(response.status == 413)
    }

    @Test func servesHealthAndMetrics() throws {
        let fixture = try LedgerFixture()
        let health = try http(fixture.port, "GET", "/health")
        #expect(health.status == 200)
        #expect(String(decoding: health.body, as: UTF8.self).contains(#""schemaVersion":\#(Schema.currentVersion)"#))
        _ = try http(fixture.port, "POST", "/notifications", body: Array("{}".utf8))
        let metrics = String(decoding: try http(fixture.port, "GET", "/metrics").body, as: UTF8.self)
        #expect(metrics.contains(#"paystorm_ledger_rejections_total{reason="BAD_REQUEST"} 1"#))
        #expect(metrics.contains("paystorm_ledger_request_duration_seconds_count"))
    }

    @Test func keepsStateAcrossReopenAndMigratesOnce() throws {
        let directory = NSTemporaryDirectory() + "ledger-reopen-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let configuration = LedgerConfiguration(
            databasePath: directory + "/l.sqlite",
            trustedRoots: [],
            bundleId: "com.paystorm.test"
        )
        let shop = Shop()
        do {
            let ledger = try ReferenceLedger(configuration: configuration, verifier: FakeVerifier())
            let response = ledger.handle(
                HTTPRequest(
                    method: "POST",
                    path: "/transactions",
                    body: shop.device(shop.transaction("t1", product: "pro", type: nonConsumable))
                )
            )
            #expect(response.status == 200)
            ledger.stop()
        }
        let reopened = try ReferenceLedger(configuration: configuration, verifier: FakeVerifier())
        #expect(reopened.store.schemaVersion == Schema.currentVersion)
        #expect(try reopened.store.account(shop.token, now: shop.now).entitled("pro"))
    }

    @Test func stopCheckpointsSoTheDatabaseFileIsCompleteOnItsOwn() throws {
        let directory = NSTemporaryDirectory() + "ledger-stop-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/l.sqlite"
        let shop = Shop()
        let ledger = try ReferenceLedger(
            configuration: LedgerConfiguration(databasePath: path, trustedRoots: [], bundleId: "com.paystorm.test"),
            verifier: FakeVerifier()
        )
        let body = shop.device(shop.transaction("t1", product: "pro", type: nonConsumable))
        #expect(ledger.handle(HTTPRequest(method: "POST", path: "/transactions", body: body)).status == 200)
        ledger.stop()
        #expect(!FileManager.default.fileExists(atPath: path + "-wal"))
        #expect(!FileManager.default.fileExists(atPath: path + "-shm"))
        // The file alone, where no WAL can follow it, holds the grant.
        let copy = directory + "/copy.sqlite"
        try FileManager.default.copyItem(atPath: path, toPath: copy)
        let store = try LedgerStore(path: copy, flaws: [])
        #expect(try store.account(shop.token, now: shop.now).entitled("pro"))
        // Stopped means closed: in-process requests fail cleanly instead of writing behind its back.
        #expect(ledger.handle(HTTPRequest(method: "GET", path: "/accounts/\(shop.token)")).status == 500)
    }

    @Test func refusesASecondLedgerOnTheSameDatabase() throws {
        let directory = NSTemporaryDirectory() + "ledger-lock-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/l.sqlite"
        let first = try LedgerStore(path: path, flaws: [])
        #expect {
            _ = try LedgerStore(path: path, flaws: [])
        } throws: { error in
            (error as? LedgerError)?.kind == .databaseInUse && "\(error)".contains(path)
        }
        first.close()
        // Released at close: the next ledger opens it.
        _ = try LedgerStore(path: path, flaws: [])
    }

    @Test(arguments: ["", ":memory:", "file:x?mode=memory"])
    func refusesADatabasePathThatKeepsNothing(path: String) {
        #expect(throws: LedgerError.self) { _ = try LedgerStore(path: path, flaws: []) }
    }

    // MARK: Flaws

    @Test func doubleGrantFlawGrantsEveryRedelivery() throws {
        let fixture = try LedgerFixture(flaws: [.doubleGrant])
        let shop = Shop()
        let body = shop.notification(
            "ONE_TIME_CHARGE",
            transaction: shop.transaction("t1", product: "coins", type: consumable)
        )
        _ = try fixture.post("/notifications", body)
        _ = try fixture.post("/notifications", body)
        let state = try fixture.account(shop.token)
        #expect(state.count("t1") == 2)
        #expect(state.balances["coins"] == 2)
    }

    @Test func dualPathFlawGrantsOncePerPath() throws {
        let fixture = try LedgerFixture(flaws: [.dualPathDoubleGrant])
        let shop = Shop()
        let jws = shop.transaction("t1", product: "coins", type: consumable)
        _ = try fixture.post("/notifications", shop.notification("ONE_TIME_CHARGE", transaction: jws))
        _ = try fixture.post("/notifications", shop.notification("ONE_TIME_CHARGE", transaction: jws))
        _ = try fixture.post("/transactions", shop.device(jws))
        _ = try fixture.post("/transactions", shop.device(jws))
        let state = try fixture.account(shop.token)
        #expect(state.count("t1") == 2)
        #expect(state.balances["coins"] == 2)
    }

    @Test func trustUnverifiedFlawGrantsAForgery() throws {
        let fixture = try LedgerFixture(flaws: [.trustUnverified])
        let shop = Shop()
        let forged = shop.transaction(
            "t1",
            product: "pro",
            type: nonConsumable,
            signature: "forged",
            bundle: "com.other"
        )
        #expect(try fixture.post("/transactions", shop.device(forged)).status == 200)
        #expect(try fixture.account(shop.token).entitled("pro"))
    }

    @Test func ignoreBundleEnvironmentFlawGrantsAnotherAppsPurchaseButNotABadSignature() throws {
        let fixture = try LedgerFixture(flaws: [.ignoreBundleEnvironment])
        let shop = Shop()
        let other = shop.transaction(
            "t1",
            product: "pro",
            type: nonConsumable,
            bundle: "com.other",
            environment: "Production"
        )
        #expect(try fixture.post("/transactions", shop.device(other)).status == 200)
        let forged = shop.transaction("t2", product: "gold", type: nonConsumable, signature: "forged")
        #expect(try fixture.post("/transactions", shop.device(forged)).status == 422)
        let state = try fixture.account(shop.token)
        #expect(state.entitled("pro"))
        #expect(!state.entitled("gold"))
    }

    @Test func ignoreRefundFlawKeepsARefundedPurchase() throws {
        let fixture = try LedgerFixture(flaws: [.ignoreRefund])
        let shop = Shop()
        _ = try fixture.post(
            "/transactions",
            shop.device(shop.transaction("t1", product: "pro", type: nonConsumable, signedDate: shop.now - hour))
        )
        let refunded = shop.transaction("t1", product: "pro", type: nonConsumable, revoked: shop.now - 1)
        #expect(try fixture.post("/notifications", shop.notification("REFUND", transaction: refunded)).status == 200)
        #expect(try fixture.account(shop.token).entitled("pro"))
    }

    @Test func staleOverwriteFlawMovesExpiryBack() throws {
        let shop = Shop()
        for flawed in [false, true] {
            let fixture = try LedgerFixture(flaws: flawed ? [.staleOverwrite] : [])
            let newer = shop.transaction(
                "t2",
                product: "monthly",
                type: autoRenewable,
                original: "o1",
                signedDate: shop.now - hour,
                expires: shop.now + hour
            )
            let older = shop.transaction(
                "o1",
                product: "monthly",
                type: autoRenewable,
                original: "o1",
                signedDate: shop.now - 2 * hour,
                expires: shop.now - hour
            )
            _ = try fixture.post(
                "/notifications",
                shop.notification("DID_RENEW", signedDate: shop.now - hour, transaction: newer, status: 1)
            )
            _ = try fixture.post(
                "/notifications",
                shop.notification(
                    "SUBSCRIBED",
                    subtype: "INITIAL_BUY",
                    signedDate: shop.now - 2 * hour,
                    transaction: older,
                    status: 1
                )
            )
            #expect(try fixture.account(shop.token).entitled("monthly") == !flawed)
        }
    }

    @Test func resurrectFlawRegrantsARefundedPurchaseOnReplay() throws {
        let fixture = try LedgerFixture(flaws: [.resurrectAfterRefund])
        let shop = Shop()
        let purchase = shop.transaction("t1", product: "pro", type: nonConsumable, signedDate: shop.now - 2 * hour)
        _ = try fixture.post("/transactions", shop.device(purchase))
        let refunded = shop.transaction("t1", product: "pro", type: nonConsumable, revoked: shop.now - hour)
        _ = try fixture.post("/notifications", shop.notification("REFUND", transaction: refunded))
        #expect(try !fixture.account(shop.token).entitled("pro"))
        _ = try fixture.post("/transactions", shop.device(purchase))
        let state = try fixture.account(shop.token)
        #expect(state.entitled("pro"))
        #expect(state.count("t1") == 2)
    }

    @Test func unlockOnPendingFlawGrantsOnAReport() throws {
        let fixture = try LedgerFixture(flaws: [.unlockOnPending])
        let shop = Shop()
        #expect(try fixture.post("/transactions", shop.report("pending")).status == 202)
        #expect(try fixture.account(shop.token).entitled("pro"))
    }

    @Test func trustClientClaimsFlawGrantsAClaimedPurchase() throws {
        let fixture = try LedgerFixture(flaws: [.trustClientClaims])
        let shop = Shop()
        for result in ["pending", "success"] {
            #expect(try fixture.post("/transactions", shop.report(result)).status == 202)
        }
        let state = try fixture.account(shop.token)
        #expect(state.entitled("pro"))
        #expect(state.count("t9") == 1)
        #expect(state.grants?.count == 1)
    }

    @Test func ackBeforeCommitFlawAnswersBeforeTheGrantIsStored() throws {
        let fixture = try LedgerFixture(flaws: [.ackBeforeCommit], lateCommitDelay: .seconds(600))
        let shop = Shop()
        let response = try fixture.post(
            "/transactions",
            shop.device(shop.transaction("t1", product: "pro", type: nonConsumable))
        )
        #expect(response.status == 200)
        #expect(try fixture.account(shop.token).grants == [])
    }

    @Test func everyFlawHasADescriptionAndAnInvariant() {
        for flaw in LedgerFlaw.allCases {
            #expect(!flaw.summary.isEmpty)
            #expect(!flaw.invariant.isEmpty)
            #expect(LedgerFlaw(rawValue: flaw.rawValue) == flaw)
        }
    }
}

final class StatusList: @unchecked Sendable {
    // @unchecked: every access holds the lock.
    private let lock = NSLock()
    private var list: [Int] = []
    func append(_ value: Int) { lock.withLock { list.append(value) } }
    var values: [Int] { lock.withLock { list } }
}
