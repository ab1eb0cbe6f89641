import AppStoreModel
import AppStoreServerAPI
import Foundation
import Signing
import Testing

/// Pages of history while the world moves on: a client that follows the tokens sees each item once.
struct APIPagingTests {
    /// Follows `paginationToken` to the end, moving the clock on before each later page.
    private static func notificationPages(_ fixture: APIFixture, between: () -> Void) -> [[String]] {
        var pages: [[String]] = []
        var token: String?
        let window: [String: Any] = ["startDate": APIFixture.start - 1, "endDate": APIFixture.start + 600_000]
        for _ in 0..<10 {
            let answer = fixture.json(
                fixture.request(
                    "POST",
                    "/inApps/v1/notifications/history",
                    query: token.map { "paginationToken=\($0)" },
                    body: window
                )
            )
            let items = answer["notificationHistory"] as? [[String: Any]] ?? []
            pages.append(
                items.map { item in
                    let jws = item["signedPayload"] as? String ?? ""
                    return (try? fixture.verifier.verifyAndDecodeNotification(jws).get())?.notificationUUID ?? "?"
                }
            )
            token = answer["paginationToken"] as? String
            guard answer["hasMore"] as? Bool == true else { break }
            between()
        }
        return pages
    }

    @Test func notificationHistoryRepeatsNothingWhenEarlierRecordsBecomeVisibleBetweenPages() throws {
        let fixture = try APIFixture()
        // The run path records a few notifications ahead of their time, before ones already due.
        for index in 0..<5 {
            fixture.store.recordNotification(
                APIFixture.notification(type: "TEST", uuid: "early-\(index)"),
                at: APIFixture.start + 3_000
            )
        }
        for index in 0..<40 {
            fixture.store.recordNotification(
                APIFixture.notification(type: "TEST", uuid: "due-\(index)"),
                at: APIFixture.start + Int64(index)
            )
        }
        fixture.advance(seconds: 1)
        let pages = Self.notificationPages(fixture) { fixture.advance(seconds: 5) }
        let seen = pages.flatMap { $0 }
        #expect(pages.map(\.count) == [20, 20])
        #expect(seen == (0..<40).map { "due-\($0)" })
        // A new request starts from the present, and sees the records that came due.
        let fresh = Self.notificationPages(fixture) {}
        #expect(Set(fresh.flatMap { $0 }).count == 45)
    }

    @Test func notificationHistoryTokenRefusesForeignAndMalformedTokens() throws {
        let fixture = try APIFixture()
        let body: [String: Any] = ["startDate": APIFixture.start - 1, "endDate": APIFixture.start + 1]
        let foreign = Data("other:1:2".utf8).base64EncodedString()
        for token in ["nonsense", foreign, "cGF5c3Rvcm06MQ"] {
            let answer = fixture.request(
                "POST",
                "/inApps/v1/notifications/history",
                query: "paginationToken=\(token)",
                body: body
            )
            #expect(fixture.json(answer)["errorCode"] as? Int == 4_000_014)
        }
    }

    @Test(arguments: [false, true])
    func transactionHistorySkipsNothingWhenAnEarlierTransactionChangesBetweenPages(descending: Bool) throws {
        let fixture = try APIFixture()
        let ids = (0..<45).map { String(1_000_000_000_000_100 + $0) }
        for (index, id) in ids.enumerated() {
            fixture.store.insert(APIFixture.facts(id: id), customer: 7, at: APIFixture.start + Int64(index))
        }
        fixture.advance(seconds: 1)
        var seen: [String] = []
        var revision: String?
        for page in 0..<5 {
            var query = descending ? ["sort=DESCENDING"] : []
            if let revision { query.append("revision=\(revision)") }
            let answer = fixture.json(
                fixture.request("GET", "/inApps/v2/history/\(ids[0])", query: query.joined(separator: "&"))
            )
            let signed = answer["signedTransactions"] as? [Any] ?? []
            seen += signed.map { fixture.transaction($0)?.transactionId ?? "?" }
            revision = answer["revision"] as? String
            guard answer["hasMore"] as? Bool == true else { break }
            if page == 0 {
                // A refund of a transaction on the first page is a newer view: it moves to the end of the order.
                let refunded = descending ? ids[44] : ids[3]
                fixture.store.insert(
                    APIFixture.facts(id: refunded, revoked: APIFixture.start + 1_000),
                    customer: 7,
                    at: APIFixture.start + 1_000
                )
                fixture.advance(seconds: 1)
            }
        }
        #expect(Set(seen) == Set(ids))
        if !descending { #expect(seen.count == 46 && seen.last == ids[3]) }
    }

    @Test func refundHistoryPagesEveryRefundOnce() throws {
        let fixture = try APIFixture()
        let ids = (0..<30).map { String(1_000_000_000_000_200 + $0) }
        for (index, id) in ids.enumerated() {
            let revoked = APIFixture.start + Int64(index)
            fixture.store.insert(APIFixture.facts(id: id, revoked: revoked), customer: 3, at: revoked)
        }
        fixture.advance(seconds: 1)
        var seen: [String] = []
        var revision: String?
        for _ in 0..<4 {
            let answer = fixture.json(
                fixture.request("GET", "/inApps/v2/refund/lookup/\(ids[0])", query: revision.map { "revision=\($0)" })
            )
            seen += (answer["signedTransactions"] as? [Any] ?? []).map { fixture.transaction($0)?.transactionId ?? "?" }
            revision = answer["revision"] as? String
            guard answer["hasMore"] as? Bool == true else { break }
        }
        #expect(seen == ids)
    }
}
