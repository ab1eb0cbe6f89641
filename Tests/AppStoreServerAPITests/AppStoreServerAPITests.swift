import AppStoreModel
import AppStoreServerAPI
import Foundation
import HTTPServer
import Signing
import Simulation
import Testing

struct AppStoreServerAPITests {
    @Test func answersTransactionInfoThatTheVerifierAccepts() throws {
        let fixture = try APIFixture()
        fixture.store.insert(APIFixture.facts(id: "1000000000000001"), customer: 0, at: APIFixture.start)
        let answer = fixture.request("GET", "/inApps/v1/transactions/1000000000000001")
        #expect(answer.response.status == 200)
        let transaction = fixture.transaction(fixture.json(answer)["signedTransactionInfo"])
        #expect(transaction?.transactionId == "1000000000000001")
        #expect(transaction?.productId == "coins.100")
    }

    @Test func answersAnUnknownTransactionWithApplesNotFoundError() throws {
        let fixture = try APIFixture()
        let answer = fixture.request("GET", "/inApps/v1/transactions/1000000000000009")
        #expect(answer.response.status == 404)
        #expect(answer.response.headers["Content-Type"] == "application/json")
        #expect(fixture.json(answer)["errorCode"] as? Int == 4_040_010)
        #expect(fixture.json(answer)["errorMessage"] is String)
        let malformed = fixture.request("GET", "/inApps/v1/transactions/abc")
        #expect(fixture.json(malformed)["errorCode"] as? Int == 4_000_006)
    }

    @Test func showsNoFactBeforeItsWorldTime() throws {
        let fixture = try APIFixture()
        let id = "1000000000000002"
        fixture.store.insert(APIFixture.facts(id: id), customer: 0, at: APIFixture.start + 10_000)
        #expect(fixture.request("GET", "/inApps/v1/transactions/\(id)").response.status == 404)
        fixture.advance(seconds: 10)
        #expect(fixture.request("GET", "/inApps/v1/transactions/\(id)").response.status == 200)
    }

    @Test func showsARefundFromItsTimeInInfoAndRefundHistory() throws {
        let fixture = try APIFixture()
        let id = "1000000000000003"
        fixture.store.insert(APIFixture.facts(id: id), customer: 0, at: APIFixture.start)
        let refunded = APIFixture.facts(id: id, revoked: APIFixture.start + 5_000)
        fixture.store.insert(refunded, customer: 0, at: APIFixture.start + 5_000)
        let before = fixture.request("GET", "/inApps/v1/transactions/\(id)")
        #expect(fixture.transaction(fixture.json(before)["signedTransactionInfo"])?.revocationDate == nil)
        #expect(
            (fixture.json(fixture.request("GET", "/inApps/v2/refund/lookup/\(id)"))["signedTransactions"] as? [Any])?
                .isEmpty == true
        )
        fixture.advance(seconds: 5)
        let after = fixture.request("GET", "/inApps/v1/transactions/\(id)")
        #expect(
            fixture.transaction(fixture.json(after)["signedTransactionInfo"])?.revocationDate == APIFixture.start
                + 5_000
        )
        let refunds = fixture.json(fixture.request("GET", "/inApps/v2/refund/lookup/\(id)"))
        #expect((refunds["signedTransactions"] as? [Any])?.count == 1)
        #expect(refunds["hasMore"] as? Bool == false)
    }

    @Test func keepsARefundWhenAnOlderViewArrivesLater() throws {
        let fixture = try APIFixture()
        let id = "1000000000000004"
        fixture.store.insert(APIFixture.facts(id: id), customer: 0, at: APIFixture.start)
        fixture.store.insert(
            APIFixture.facts(id: id, revoked: APIFixture.start + 5_000),
            customer: 0,
            at: APIFixture.start + 5_000
        )
        // A device's late redelivery of the purchase, as the world's unfinished-transaction sweep sends it.
        fixture.store.insert(APIFixture.facts(id: id), customer: 0, at: APIFixture.start + 6_000)
        fixture.advance(seconds: 7)
        let answer = fixture.request("GET", "/inApps/v1/transactions/\(id)")
        #expect(fixture.transaction(fixture.json(answer)["signedTransactionInfo"])?.revocationDate != nil)
    }

    @Test func pagesHistoryTwentyAtATimeWithItsRevision() throws {
        let fixture = try APIFixture()
        for index in 0..<45 {
            let facts = APIFixture.facts(id: String(1_000_000_000_000_100 + index))
            fixture.store.insert(facts, customer: 7, at: APIFixture.start + Int64(index))
        }
        fixture.store.insert(APIFixture.facts(id: "1000000000000999"), customer: 8, at: APIFixture.start)
        fixture.advance(seconds: 1)
        var counts: [Int] = []
        var revision: String?
        var seen = Set<String>()
        for _ in 0..<4 {
            let answer = fixture.json(
                fixture.request("GET", "/inApps/v2/history/1000000000000100", query: revision.map { "revision=\($0)" })
            )
            let signed = answer["signedTransactions"] as? [Any] ?? []
            counts.append(signed.count)
            for jws in signed { seen.insert(fixture.transaction(jws)?.transactionId ?? "") }
            #expect(answer["bundleId"] as? String == APIFixture.bundleId)
            #expect(answer["environment"] as? String == "Sandbox")
            revision = answer["revision"] as? String
            if answer["hasMore"] as? Bool != true { break }
        }
        #expect(counts == [20, 20, 5])
        #expect(seen.count == 45 && !seen.contains("1000000000000999"))
        let bad = fixture.request("GET", "/inApps/v2/history/1000000000000100", query: "revision=nonsense")
        #expect(fixture.json(bad)["errorCode"] as? Int == 4_000_005)
    }

    @Test(arguments: [
        ("productType=CONSUMABLE", 1), ("productType=AUTO_RENEWABLE", 1), ("revoked=True", 1), ("revoked=false", 1),
        ("productId=coins.100&productId=pro.monthly", 2), ("startDate=1800000000001", 1),
        ("subscriptionGroupIdentifier=21000000", 1), ("inAppOwnershipType=FAMILY_SHARED", 0),
    ])
    func filtersHistoryByItsQueryParameters(query: String, expected: Int) throws {
        let fixture = try APIFixture()
        fixture.store.insert(APIFixture.facts(id: "11", revoked: APIFixture.start), customer: 0, at: APIFixture.start)
        let subscription = APIFixture.facts(
            id: "12",
            product: "pro.monthly",
            type: "Auto-Renewable Subscription",
            purchase: APIFixture.start + 1,
            expires: APIFixture.start + 60_000,
            group: "21000000"
        )
        fixture.store.insert(subscription, customer: 0, at: APIFixture.start)
        let answer = fixture.json(fixture.request("GET", "/inApps/v2/history/11", query: query))
        #expect((answer["signedTransactions"] as? [Any])?.count == expected)
    }

    @Test(arguments: [
        ("productType=GADGET", 4_000_022), ("sort=SIDEWAYS", 4_000_021), ("revoked=maybe", 4_000_030),
        ("inAppOwnershipType=STOLEN", 4_000_026), ("startDate=5&endDate=4", 4_000_013), ("startDate=x", 4_000_015),
    ])
    func refusesBadHistoryParametersWithApplesCodes(query: String, code: Int) throws {
        let fixture = try APIFixture()
        fixture.store.insert(APIFixture.facts(id: "11"), customer: 0, at: APIFixture.start)
        let answer = fixture.request("GET", "/inApps/v2/history/11", query: query)
        #expect(answer.response.status == 400)
        #expect(fixture.json(answer)["errorCode"] as? Int == code)
    }

    @Test func groupsSubscriptionStatusesWithTheirRenewalInfo() throws {
        let fixture = try APIFixture()
        let first = APIFixture.facts(
            id: "21",
            product: "pro.monthly",
            type: "Auto-Renewable Subscription",
            expires: APIFixture.start + 30_000,
            group: "G1"
        )
        let renewal = APIFixture.facts(
            id: "22",
            original: "21",
            product: "pro.monthly",
            type: "Auto-Renewable Subscription",
            purchase: APIFixture.start + 30_000,
            expires: APIFixture.start + 60_000,
            group: "G1"
        )
        fixture.store.insert(first, customer: 3, at: APIFixture.start)
        fixture.store.insert(renewal, customer: 3, at: APIFixture.start + 30_000)
        fixture.store.insert(
            APIFixture.renewal(original: "21", product: "pro.monthly", renewalDate: APIFixture.start + 30_000),
            at: APIFixture.start
        )
        fixture.advance(seconds: 31)
        let answer = fixture.json(fixture.request("GET", "/inApps/v1/subscriptions/21"))
        let groups = answer["data"] as? [[String: Any]] ?? []
        #expect(groups.count == 1 && groups.first?["subscriptionGroupIdentifier"] as? String == "G1")
        let last = (groups.first?["lastTransactions"] as? [[String: Any]])?.first
        #expect(last?["status"] as? Int == 1)
        #expect(last?["originalTransactionId"] as? String == "21")
        #expect(fixture.transaction(last?["signedTransactionInfo"])?.transactionId == "22")
        let renewalJWS = last?["signedRenewalInfo"] as? String ?? ""
        #expect((try? fixture.verifier.verifyAndDecodeRenewalInfo(renewalJWS).get())?.productId == "pro.monthly")
        fixture.advance(seconds: 30)
        let expired = fixture.json(fixture.request("GET", "/inApps/v1/subscriptions/21", query: "status=2"))
        #expect(((expired["data"] as? [[String: Any]])?.first?["lastTransactions"] as? [Any])?.count == 1)
        let bad = fixture.request("GET", "/inApps/v1/subscriptions/21", query: "status=9")
        #expect(fixture.json(bad)["errorCode"] as? Int == 4_000_031)
    }

    @Test func looksUpAnOrderIdAndAnswersInvalidForAnUnknownOne() throws {
        let fixture = try APIFixture()
        let facts = APIFixture.facts(id: "31")
        fixture.store.insert(facts, customer: 0, at: APIFixture.start)
        let found = fixture.json(fixture.request("GET", "/inApps/v1/lookup/\(APIStore.orderId(for: facts))"))
        #expect(found["status"] as? Int == 0)
        #expect(fixture.transaction((found["signedTransactions"] as? [Any])?.first)?.transactionId == "31")
        let unknown = fixture.request("GET", "/inApps/v1/lookup/NOSUCHORDR")
        #expect(unknown.response.status == 200 && fixture.json(unknown)["status"] as? Int == 1)
    }
}
