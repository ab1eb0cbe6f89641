import AppStoreModel
import AppStoreServerAPI
import Foundation
import HTTPServer
import Minting
import Signing
import Simulation
import Synchronization
import Testing

struct APIChangeTests {
    private static var consumption: [String: Any] {
        [
            "customerConsented": true, "consumptionStatus": 1, "platform": 1, "sampleContentProvided": false,
            "deliveryStatus": 0, "appAccountToken": "", "accountTenure": 2, "playTime": 3,
            "lifetimeDollarsRefunded": 0, "lifetimeDollarsPurchased": 4, "userStatus": 1, "refundPreference": 2,
        ]
    }

    @Test func sendsATestNotificationThroughTheHookAndReportsItsAttempts() throws {
        let fixture = try APIFixture()
        let answer = fixture.request("POST", "/inApps/v1/notifications/test")
        let token = fixture.json(answer)["testNotificationToken"] as? String ?? ""
        let sent = fixture.delivered.all
        #expect(sent.count == 1 && sent.first?.facts.notificationType == "TEST")
        let payload = try fixture.verifier.verifyAndDecodeNotification(sent.first?.signedPayload ?? "").get()
        #expect(payload.notificationType == "TEST")
        fixture.store.recordSendAttempt(
            notificationUUID: sent.first?.facts.notificationUUID ?? "",
            at: APIFixture.start,
            result: "SUCCESS"
        )
        let status = fixture.json(fixture.request("GET", "/inApps/v1/notifications/test/\(token)"))
        #expect(status["signedPayload"] is String)
        #expect((status["sendAttempts"] as? [[String: Any]])?.first?["sendAttemptResult"] as? String == "SUCCESS")
        let unknown = fixture.request("GET", "/inApps/v1/notifications/test/\(UUID().uuidString)_1")
        #expect(fixture.json(unknown)["errorCode"] as? Int == 4_040_008)
        let malformed = fixture.request("GET", "/inApps/v1/notifications/test/garbage")
        #expect(fixture.json(malformed)["errorCode"] as? Int == 4_000_020)
        // Foundation on Linux parses a sign or "0x" in place of a digit; Apple's token is the canonical form.
        let lax = fixture.request("GET", "/inApps/v1/notifications/test/+\(token.dropFirst())")
        #expect(fixture.json(lax)["errorCode"] as? Int == 4_000_020)
    }

    @Test func answersNoNotificationURLWithoutAHook() throws {
        let fixture = try APIFixture(delivers: false)
        let answer = fixture.request("POST", "/inApps/v1/notifications/test")
        #expect(fixture.json(answer)["errorCode"] as? Int == 4_040_007)
    }

    @Test func filtersNotificationHistoryByDateTypeAndTransaction() throws {
        let fixture = try APIFixture()
        let facts = APIFixture.facts(id: "41")
        fixture.store.insert(facts, customer: 1, at: APIFixture.start)
        fixture.store.recordNotification(
            APIFixture.notification(type: "ONE_TIME_CHARGE", uuid: "a", transaction: facts),
            at: APIFixture.start
        )
        fixture.store.recordNotification(APIFixture.notification(type: "TEST", uuid: "b"), at: APIFixture.start + 1)
        fixture.store.recordNotification(APIFixture.notification(type: "TEST", uuid: "c"), at: APIFixture.start + 9_000)
        fixture.advance(seconds: 5)
        func count(_ body: [String: Any]) -> Int? {
            (fixture.json(fixture.request("POST", "/inApps/v1/notifications/history", body: body))[
                "notificationHistory"
            ] as? [Any])?.count
        }
        let window: [String: Any] = ["startDate": APIFixture.start - 1, "endDate": APIFixture.start + 10_000]
        #expect(count(window) == 2)  // the third is in the world's future
        #expect(count(window.merging(["notificationType": "TEST"]) { $1 }) == 1)
        #expect(count(window.merging(["transactionId": "41"]) { $1 }) == 1)
        let both = fixture.request(
            "POST",
            "/inApps/v1/notifications/history",
            body: window.merging(["transactionId": "41", "notificationType": "TEST"]) { $1 }
        )
        #expect(fixture.json(both)["errorCode"] as? Int == 4_000_019)
        let backwards = fixture.request(
            "POST",
            "/inApps/v1/notifications/history",
            body: ["startDate": APIFixture.start, "endDate": APIFixture.start - 1]
        )
        #expect(fixture.json(backwards)["errorCode"] as? Int == 4_000_013)
    }

    /// `onlyFailures` lists what the backend never acknowledged: attempted, and no attempt a success. A
    /// notification acknowledged on a retry, or not attempted yet, is none.
    @Test func onlyFailuresListsNotificationsNoAttemptOfWhichSucceeded() throws {
        let fixture = try APIFixture()
        for uuid in ["acked-on-retry", "refused", "timed-out", "not-yet-sent"] {
            fixture.store.recordNotification(APIFixture.notification(type: "TEST", uuid: uuid), at: APIFixture.start)
        }
        let attempts: [(String, SendAttemptResult)] = [
            ("acked-on-retry", .unsuccessfulHTTPResponseCode), ("acked-on-retry", .success),
            ("refused", .socketIssue), ("refused", .unsuccessfulHTTPResponseCode), ("timed-out", .timedOut),
            ("forged", .success),
        ]
        for (offset, (uuid, result)) in attempts.enumerated() {
            fixture.store.recordSendAttempt(
                notificationUUID: uuid,
                at: APIFixture.start + Int64(offset),
                result: result
            )
        }
        #expect(fixture.store.sendAttempts(notificationUUID: "forged").isEmpty)
        fixture.advance(seconds: 5)
        let body: [String: Any] = [
            "startDate": APIFixture.start - 1, "endDate": APIFixture.start + 10_000, "onlyFailures": true,
        ]
        let items =
            fixture.json(fixture.request("POST", "/inApps/v1/notifications/history", body: body))[
                "notificationHistory"
            ] as? [[String: Any]] ?? []
        let results = items.map {
            ($0["sendAttempts"] as? [[String: Any]] ?? []).compactMap { $0["sendAttemptResult"] }
        }
        #expect(
            results.map { $0.map { "\($0)" } } == [
                ["SOCKET_ISSUE", "UNSUCCESSFUL_HTTP_RESPONSE_CODE"], ["TIMED_OUT"],
            ]
        )
        let dates = items.compactMap { ($0["sendAttempts"] as? [[String: Any]])?.first?["attemptDate"] as? Int }
        #expect(dates == [Int(APIFixture.start) + 2, Int(APIFixture.start) + 4])
    }

    @Test(arguments: [
        ("customerConsented", "false", 4_000_035), ("consumptionStatus", "4", 4_000_034),
        ("platform", "3", 4_000_039), ("deliveryStatus", "6", 4_000_036),
        ("accountTenure", "8", 4_000_032), ("playTime", "-1", 4_000_040),
        ("lifetimeDollarsRefunded", "8", 4_000_038), ("lifetimeDollarsPurchased", "8", 4_000_037),
        ("userStatus", "5", 4_000_042), ("appAccountToken", "\"not-a-uuid\"", 4_000_033),
        ("sampleContentProvided", "1", 4_000_041),
    ])
    func refusesConsumptionFieldsOutsideApplesRanges(field: String, value: String, code: Int) throws {
        let fixture = try APIFixture()
        fixture.store.insert(APIFixture.facts(id: "51"), customer: 0, at: APIFixture.start)
        var body = Self.consumption
        body[field] = APIFixture.value(value)
        let answer = fixture.request("PUT", "/inApps/v1/transactions/consumption/51", body: body)
        #expect(answer.response.status == 400)
        #expect(fixture.json(answer)["errorCode"] as? Int == code)
        #expect(fixture.store.consumptionRecords(for: "51").isEmpty)
    }

    @Test func recordsValidConsumptionInformation() throws {
        let fixture = try APIFixture()
        fixture.store.insert(APIFixture.facts(id: "52"), customer: 0, at: APIFixture.start)
        let answer = fixture.request("PUT", "/inApps/v1/transactions/consumption/52", body: Self.consumption)
        #expect(answer.response.status == 202)
        #expect(fixture.store.consumptionRecords(for: "52").first?.fields["consumptionStatus"] == "1")
        let unknown = fixture.request("PUT", "/inApps/v1/transactions/consumption/59", body: Self.consumption)
        #expect(fixture.json(unknown)["errorCode"] as? Int == 4_040_010)
    }

    @Test func extendsASubscriptionInLaterAnswersAndNotifiesRenewalExtended() throws {
        let fixture = try APIFixture()
        let expires = APIFixture.start + 60_000
        let facts = APIFixture.facts(
            id: "61",
            product: "pro.monthly",
            type: "Auto-Renewable Subscription",
            expires: expires,
            group: "G1"
        )
        fixture.store.insert(facts, customer: 0, at: APIFixture.start)
        let body: [String: Any] = ["extendByDays": 3, "extendReasonCode": 1, "requestIdentifier": "r-1"]
        let answer = fixture.json(fixture.request("PUT", "/inApps/v1/subscriptions/extend/61", body: body))
        let extended = expires + 3 * Minter.dayMilliseconds
        #expect(answer["success"] as? Bool == true && answer["effectiveDate"] as? Int64 == extended)
        let info = fixture.json(fixture.request("GET", "/inApps/v1/transactions/61"))
        #expect(fixture.transaction(info["signedTransactionInfo"])?.expiresDate == extended)
        // The same request identifier again extends nothing more and notifies once.
        _ = fixture.request("PUT", "/inApps/v1/subscriptions/extend/61", body: body)
        #expect(fixture.store.extensions(for: "61").count == 1)
        let sent = fixture.delivered.all
        #expect(sent.map(\.facts.notificationType) == ["RENEWAL_EXTENDED"])
        #expect(sent.first?.facts.transaction?.payload.expiresDate == extended)
        _ = try fixture.verifier.verifyAndDecodeNotification(sent.first?.signedPayload ?? "").get()
    }

    @Test(arguments: [
        (#"{"extendByDays": 91, "extendReasonCode": 1, "requestIdentifier": "x"}"#, "61", 4_000_009),
        (#"{"extendByDays": 1, "extendReasonCode": 4, "requestIdentifier": "x"}"#, "61", 4_000_010),
        (#"{"extendByDays": 1, "extendReasonCode": 1}"#, "61", 4_000_011),
        (#"{"extendByDays": 1, "extendReasonCode": 1, "requestIdentifier": "x"}"#, "69", 4_040_005),
        (#"{"extendByDays": 1, "extendReasonCode": 1, "requestIdentifier": "x"}"#, "62", 4_030_004),
    ])
    func refusesExtensionsAsAppleDoes(body: String, id: String, code: Int) throws {
        let fixture = try APIFixture()
        let subscription = APIFixture.facts(
            id: "61",
            type: "Auto-Renewable Subscription",
            expires: APIFixture.start + 60_000,
            group: "G1"
        )
        fixture.store.insert(subscription, customer: 0, at: APIFixture.start)
        fixture.store.insert(APIFixture.facts(id: "62"), customer: 0, at: APIFixture.start)
        let answer = fixture.request("PUT", "/inApps/v1/subscriptions/extend/\(id)", body: APIFixture.value(body))
        #expect(fixture.json(answer)["errorCode"] as? Int == code)
        #expect(fixture.delivered.all.isEmpty)
    }
}
