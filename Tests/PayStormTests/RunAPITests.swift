import AppStoreServerAPI
import Chaos
import Foundation
import HTTPServer
import Load
import Profile
import Signing
import Simulation
import Synchronization
import Testing

@testable import PayStorm

/// The App Store Server API inside a run: fed by the world, and its notifications shaped like the run's webhooks
/// (issue 13, item 1).
struct RunAPITests {
    static let target = """
        { webhook: { url: "http://127.0.0.1:1/hooks/{appAccountToken}", headers: { "X-Source": "apple" },
                     body: { payload: "{signedPayload}", v: 2 } },
          deviceURL: "http://127.0.0.1:1/t" }
        """

    @Test func feedRecordsEveryActionOfTheWorldVisibleFromItsIntendedTime() throws {
        let profile = try DeliveryRequestsTests.profile(target: Self.target)
        let start: Int64 = 1_800_000_000_000
        let store = APIStore()
        var feed = APIFeed(World(profile: profile, startMillis: start), store: store)
        var ids: [String: Int64] = [:]
        let world = World(profile: profile, startMillis: start)
        while let action = feed.next() {
            if let id = action.transaction?.transactionId, ids[id] == nil { ids[id] = world.millis(action.at) }
        }
        #expect(!ids.isEmpty)
        let known = store.transactions(at: .max)
        #expect(Set(known.map(\.transaction.transactionId)) == Set(ids.keys))
        for entry in known { #expect(entry.firstSeen == ids[entry.transaction.transactionId]) }
        // Nothing is visible before it happened: the API never answers from the world's future.
        #expect(store.transactions(at: start - 1).isEmpty)
    }

    @Test func feedWithoutAStorePassesTheWorldOnUnchanged() throws {
        let profile = try DeliveryRequestsTests.profile(target: Self.target)
        var feed = APIFeed(World(profile: profile, startMillis: 0), store: nil)
        var world = World(profile: profile, startMillis: 0)
        for _ in 0..<200 {
            let (fed, plain) = (feed.next(), world.next())
            #expect(fed?.at == plain?.at && fed?.transaction?.transactionId == plain?.transaction?.transactionId)
            if plain == nil { break }
        }
    }

    @Test func apiNotificationGoesOutShapedByTheWebhookTemplate() throws {
        let profile = try DeliveryRequestsTests.profile(target: Self.target)
        let endpoints = try DeliveryRequestsTests.endpoints(profile, accounts: AccountDirectory())
        let request = APINotificationSender.request(signedPayload: "a.b.c", endpoints: endpoints)
        #expect(request.method == "POST" && request.url == "http://127.0.0.1:1/hooks/")
        #expect(request.headers.map(\.name) == ["Content-Type", "X-Key", "X-Source"])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(request.body)) as? [String: Any])
        #expect(object["payload"] as? String == "a.b.c" && object["v"] as? Int == 2)
    }
}

/// The API's own notifications reach the webhook through the dedicated sender, and each attempt is in the API's
/// notification history as Apple reports it.
struct APINotificationSenderTests {
    final class Received: Sendable {
        let bodies = Mutex<[String]>([])
    }

    static func bearer() throws -> String {
        let now = Int64(Date().timeIntervalSince1970)
        let claims: [String: Any] = [
            "iss": "issuer", "aud": "appstoreconnect-v1", "bid": "com.example.paystorm", "exp": now + 300,
        ]
        let header = try JSONSerialization.data(withJSONObject: ["alg": "ES256", "kid": "K1", "typ": "JWT"])
        let payload = try JSONSerialization.data(withJSONObject: claims)
        return try JWS.sign(payload: Array(payload), headerJSON: Array(header), key: try SigningKey.generate(.p256))
    }

    @Test(arguments: [(200, "SUCCESS"), (500, "UNSUCCESSFUL_HTTP_RESPONSE_CODE")])
    func testNotificationReachesTheWebhookAndItsAttemptIsRecorded(status: Int, attempt: String) throws {
        let received = Received()
        let server = try HTTPServer { request in
            received.bodies.withLock { $0.append(String(decoding: request.body, as: UTF8.self)) }
            return HTTPResponse(status: status)
        }
        defer { server.shutdown() }
        let profile = try DeliveryRequestsTests.profile(
            target: "{ webhook: { url: \"http://\(server.address)/hook\", body: { p: \"{signedPayload}\" } } }"
        )
        let endpoints = try DeliveryRequestsTests.endpoints(profile, accounts: AccountDirectory())
        let store = APIStore()
        let lines = APILines()
        let sender = APINotificationSender(
            endpoints: endpoints,
            engine: try PayStormRun.loadEngine(profile: profile),
            store: store,
            lines: lines
        )
        let api = try AppStoreServerAPI(
            store: store,
            configuration: APIConfiguration(),
            pki: try TestPKI.generate(),
            deliver: { sender.send($0) }
        )
        let headers = ["authorization": "Bearer " + (try Self.bearer())]
        let asked = api.answer(
            HTTPRequest(method: "POST", path: "/inApps/v1/notifications/test", query: nil, headers: headers, body: [])
        )
        #expect(asked.response.status == 200)
        sender.finish()
        let bodies = received.bodies.withLock { $0 }
        #expect(bodies.count == 1 && bodies.first?.hasPrefix(#"{"p":"ey"#) == true, "\(bodies)")
        let answer = try #require(
            try JSONSerialization.jsonObject(with: Data(asked.response.body)) as? [String: String]
        )
        let token = try #require(answer["testNotificationToken"])
        let checked = api.answer(
            HTTPRequest(
                method: "GET",
                path: "/inApps/v1/notifications/test/\(token)",
                query: nil,
                headers: headers,
                body: []
            )
        )
        let report = try #require(
            try JSONSerialization.jsonObject(with: Data(checked.response.body)) as? [String: Any]
        )
        let attempts = report["sendAttempts"] as? [[String: Any]] ?? []
        #expect(attempts.count == 1 && attempts.first?["sendAttemptResult"] as? String == attempt, "\(report)")
        #expect(sender.sent == 1)
        let (history, _) = lines.take { _ in [] }
        #expect(history.map(\.event) == ["notification"] && history.first?.status == status)
    }
}
