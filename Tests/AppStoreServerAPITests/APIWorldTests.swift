import AppStoreModel
import AppStoreServerAPI
import Foundation
import Profile
import Signing
import Simulation
import Testing

/// The store fed the way the run path feeds it: a profile's world, action by action.
struct APIWorldTests {
    private static let smoke = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../Profiles/smoke.json5").standardized.path

    @Test func answersEveryTransactionOfTheWorldAsItsNewestViewAtTheWorldsTime() throws {
        let fixture = try APIFixture()
        var world = World(profile: try Profile.load(path: Self.smoke), startMillis: APIFixture.start)
        var newest: [String: TransactionFacts] = [:]
        var notifications = 0
        var last = APIFixture.start
        for _ in 0..<400 {
            guard let action = world.next() else { break }
            last = world.millis(action.at)
            fixture.store.record(action, at: last)
            if let transaction = action.transaction { newest[transaction.transactionId] = transaction }
            if case .notification = action.delivery { notifications += 1 }
        }
        fixture.advance(seconds: Double(last - APIFixture.start) / 1000)
        #expect(newest.count > 20)
        for (id, facts) in newest {
            let answer = fixture.request("GET", "/inApps/v1/transactions/\(id)")
            let signed = fixture.transaction(fixture.json(answer)["signedTransactionInfo"])
            #expect(signed?.productId == facts.productId, "transaction \(id)")
            #expect(signed?.revocationDate == facts.payload.revocationDate, "transaction \(id)")
        }
        let history = fixture.request(
            "POST",
            "/inApps/v1/notifications/history",
            body: ["startDate": APIFixture.start, "endDate": last + 1]
        )
        #expect(fixture.json(history)["hasMore"] as? Bool == (notifications > 20))
    }
}
