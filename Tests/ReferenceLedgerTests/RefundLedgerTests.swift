import Foundation
import TargetContract
import Testing

@testable import ReferenceLedger

/// The ledger books each refund once, and says so in the probe's `refunds`; the `double-refund` flaw books one
/// for every delivery that carries it.
struct RefundLedgerTests {
    /// Buys `pro` as `p1`, then delivers its refund three times: the notification, the same notification again
    /// (a duplicate), and the device's copy of the refunded transaction. Returns the refunds the probe lists.
    func refundDeliveredThreeTimes(flaws: Set<LedgerFlaw>) throws -> [AccountState.Refund]? {
        let fixture = try LedgerFixture(flaws: flaws)
        let shop = Shop()
        #expect(
            try fixture.post("/transactions", shop.device(shop.transaction("p1", product: "pro", type: nonConsumable)))
                .status == 200
        )
        let refunded = shop.transaction("p1", product: "pro", type: nonConsumable, revoked: shop.now)
        let refund = shop.notification("REFUND", uuid: UUID().uuidString, transaction: refunded)
        #expect(try fixture.post("/notifications", refund).status == 200)
        #expect(try fixture.post("/notifications", refund).status == 200)
        #expect(try fixture.post("/transactions", shop.device(refunded)).status == 200)
        let state = try fixture.account(shop.token)
        #expect(!state.entitled("pro"))
        return state.refunds
    }

    @Test func aRefundDeliveredThreeTimesIsBookedOnce() throws {
        #expect(try refundDeliveredThreeTimes(flaws: []) == [.init(transactionId: "p1", count: 1)])
    }

    @Test func theDoubleRefundFlawBooksEveryDeliveryOfIt() throws {
        let refunds = try #require(try refundDeliveredThreeTimes(flaws: [.doubleRefund]))
        #expect(refunds.count == 1 && refunds[0].transactionId == "p1" && refunds[0].count > 1, "\(refunds)")
    }

    @Test func anAccountWithoutRefundsListsNone() throws {
        let fixture = try LedgerFixture()
        let shop = Shop()
        #expect(
            try fixture.post("/transactions", shop.device(shop.transaction("p1", product: "pro", type: nonConsumable)))
                .status == 200
        )
        #expect(try fixture.account(shop.token).refunds == [])
    }
}
