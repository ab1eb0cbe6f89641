import AppStoreServerAPI
import Chaos
import Foundation
import Load
import Profile
import Simulation
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
