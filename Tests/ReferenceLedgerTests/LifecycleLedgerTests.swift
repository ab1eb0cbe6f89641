import Foundation
import TargetContract
import Testing

@testable import ReferenceLedger

/// The ledger's part of the lifecycles that change a subscription without a plain purchase, and the
/// `refund-by-product` flaw that refunds the wrong period.
struct LifecycleLedgerTests {
    /// Apple's REFUND of the older period `o1`: the subscription stays active (status 1).
    func refundOfTheOlderPeriod(_ shop: Shop) -> [UInt8] {
        let refunded = shop.transaction(
            "o1",
            product: "monthly",
            type: autoRenewable,
            original: "o1",
            signedDate: shop.now - 1000,
            expires: shop.now - hour,
            revoked: shop.now - 1000
        )
        return shop.notification("REFUND", signedDate: shop.now - 1000, transaction: refunded, status: 1)
    }

    @Test func aRefundOfAnOlderPeriodKeepsTheCurrentOne() throws {
        let fixture = try LedgerFixture()
        let shop = Shop()
        try fixture.subscribeAndRenew(shop, bought: shop.now - 2 * hour, renewed: shop.now - hour)
        #expect(try fixture.post("/notifications", refundOfTheOlderPeriod(shop)).status == 200)
        let state = try fixture.account(shop.token)
        #expect(state.entitlements.map(\.transactionId) == ["t2"])
    }

    /// The device path's view of the refunded older period (no `data.status`), signed after every other view.
    @Test func aDeviceRefundOfAnOlderPeriodKeepsTheCurrentOne() throws {
        let fixture = try LedgerFixture()
        let shop = Shop()
        try fixture.subscribeAndRenew(shop, bought: shop.now - 2 * hour, renewed: shop.now - hour)
        let refunded = shop.transaction(
            "o1",
            product: "monthly",
            type: autoRenewable,
            original: "o1",
            signedDate: shop.now,
            expires: shop.now - hour,
            revoked: shop.now - 1000
        )
        #expect(try fixture.post("/transactions", shop.device(refunded)).status == 200)
        #expect(try fixture.account(shop.token).entitlements.map(\.transactionId) == ["t2"])
    }

    @Test func refundByProductFlawEndsTheCurrentPeriod() throws {
        let fixture = try LedgerFixture(flaws: [.refundByProduct])
        let shop = Shop()
        try fixture.subscribeAndRenew(shop, bought: shop.now - 2 * hour, renewed: shop.now - hour)
        #expect(try fixture.post("/notifications", refundOfTheOlderPeriod(shop)).status == 200)
        #expect(try fixture.account(shop.token).entitlements.isEmpty)
    }

    @Test(arguments: [[], [LedgerFlaw.refundByProduct]])
    func refundOfAnOlderConsumableTakesBackItsOwnUnits(flaws: [LedgerFlaw]) throws {
        let fixture = try LedgerFixture(flaws: Set(flaws))
        let shop = Shop()
        for (id, quantity) in [("c1", 1), ("c2", 3)] {
            let bought = shop.transaction(id, product: "coins", type: consumable, quantity: quantity)
            #expect(try fixture.post("/transactions", shop.device(bought)).status == 200)
        }
        let refunded = shop.transaction("c1", product: "coins", type: consumable, revoked: shop.now)
        #expect(try fixture.post("/notifications", shop.notification("REFUND", transaction: refunded)).status == 200)
        // Correct: the 3 units of c2 remain. The flaw takes back c2 (the latest of the product) instead.
        #expect(try fixture.account(shop.token).balances["coins"] == (flaws.isEmpty ? 3 : 1))
    }

    @Test func aReversedSubscriptionRefundEntitlesAgain() throws {
        let fixture = try LedgerFixture()
        let shop = Shop()
        func current(signedDate: Int64, revoked: Int64? = nil) -> String {
            shop.transaction(
                "s1",
                product: "monthly",
                type: autoRenewable,
                original: "s1",
                signedDate: signedDate,
                expires: shop.now + hour,
                revoked: revoked
            )
        }
        let steps: [(String, Int64, Int64?, Int)] = [
            ("SUBSCRIBED", shop.now - 3000, nil, 1), ("REFUND", shop.now - 2000, shop.now - 2000, 5),
            ("REFUND_REVERSED", shop.now - 1000, nil, 1),
        ]
        var entitled: [Bool] = []
        for (type, signed, revoked, status) in steps {
            let transaction = current(signedDate: signed, revoked: revoked)
            let note = shop.notification(type, signedDate: signed, transaction: transaction, status: status)
            #expect(try fixture.post("/notifications", note).status == 200)
            entitled.append(try fixture.account(shop.token).entitled("monthly"))
        }
        #expect(entitled == [true, false, true])
    }

    /// An upgrade takes effect at once, by an offer or by a change of plan, also when the period it cuts short
    /// ends later (renewal-extended) than the upgrade's own.
    @Test(arguments: [
        ("OFFER_REDEEMED", "SUBSCRIBED", hour, 2 * hour),
        ("DID_CHANGE_RENEWAL_PREF", "RENEWAL_EXTENDED", 3 * hour, hour),
    ])
    func anUpgradeEntitlesTheHigherLevelAtOnce(
        upgrade: String,
        before: String,
        silverEnd: Int64,
        goldEnd: Int64
    )
        throws
    {
        let fixture = try LedgerFixture()
        let shop = Shop()
        let ends = [("s1", "silver", shop.now - 2 * hour, silverEnd), ("g2", "gold", shop.now - 1000, goldEnd)]
        for (index, (id, product, purchased, end)) in ends.enumerated() {
            let signed = shop.now - Int64(2 - index) * 1000
            let transaction = shop.transaction(
                id,
                product: product,
                type: autoRenewable,
                original: "s1",
                signedDate: signed,
                expires: shop.now + end,
                purchased: purchased
            )
            let type = index == 0 ? before : upgrade
            let note = shop.notification(
                type,
                subtype: index == 0 ? nil : "UPGRADE",
                signedDate: signed,
                transaction: transaction,
                status: 1
            )
            #expect(try fixture.post("/notifications", note).status == 200)
        }
        let state = try fixture.account(shop.token)
        #expect(state.entitlements.map(\.productId) == ["gold"])
        #expect(state.entitlements.first?.expiresDate == shop.now + goldEnd)
        #expect(state.count("g2") == 1)
    }
    /// A notification about the older period signed with (or after) the upgrade may reach the ledger first (a
    /// CONSUMPTION_REQUEST for the silver period, say). Its status is as new as the upgrade's, but the upgrade is still
    /// the later purchase: it becomes the current period when it arrives.
    @Test(arguments: [0, 500])
    func anUpgradeArrivingAfterANewerNotificationOfTheOlderPeriodStillTakesEffect(newerBy: Int64) throws {
        let fixture = try LedgerFixture()
        let shop = Shop()
        let upgradeSigned = shop.now - 1000
        func silver(signed: Int64) -> String {
            shop.transaction(
                "s1",
                product: "silver",
                type: autoRenewable,
                original: "s1",
                signedDate: signed,
                expires: shop.now + hour,
                purchased: shop.now - hour
            )
        }
        let subscribed = shop.notification(
            "SUBSCRIBED",
            signedDate: shop.now - 3000,
            transaction: silver(signed: shop.now - 3000),
            status: 1
        )
        let consumption = shop.notification(
            "CONSUMPTION_REQUEST",
            signedDate: upgradeSigned + newerBy,
            transaction: silver(signed: upgradeSigned + newerBy),
            status: 1
        )
        let gold = shop.transaction(
            "g2",
            product: "gold",
            type: autoRenewable,
            original: "s1",
            signedDate: upgradeSigned,
            expires: shop.now + 2 * hour,
            purchased: upgradeSigned
        )
        for (path, body) in [
            ("/notifications", subscribed), ("/notifications", consumption), ("/transactions", shop.device(gold)),
        ] {
            #expect(try fixture.post(path, body).status == 200)
        }
        let state = try fixture.account(shop.token)
        #expect(state.entitlements.map(\.productId) == ["gold"])
        #expect(state.entitlements.first?.expiresDate == shop.now + 2 * hour)
    }
    /// Posts notifications about one subscription's only transaction, `s1`: each step is its type, signed date,
    /// expiry, revocation date and `data.status`. Returns whether the account is entitled after each step.
    func entitlement(
        after steps: [(String, Int64, Int64, Int64?, Int)],
        _ fixture: LedgerFixture,
        _ shop: Shop
    ) throws
        -> [Bool]
    {
        var entitled: [Bool] = []
        for (type, signed, expires, revoked, status) in steps {
            let transaction = shop.transaction(
                "s1",
                product: "monthly",
                type: autoRenewable,
                original: "s1",
                signedDate: signed,
                expires: expires,
                revoked: revoked
            )
            let note = shop.notification(type, signedDate: signed, transaction: transaction, status: status)
            #expect(try fixture.post("/notifications", note).status == 200)
            entitled.append(try fixture.account(shop.token).entitled("monthly"))
        }
        return entitled
    }

    /// A refund and its reversal that both trail a newer view of the subscription (an extension), as the App Store's
    /// retries of both may: the refund ends the entitlement, the reversal restores it with the newer view's period.
    @Test func aReversalTrailingANewerViewLiftsTheRefundThatTrailedIt() throws {
        let fixture = try LedgerFixture()
        let shop = Shop()
        let entitled = try entitlement(
            after: [
                ("SUBSCRIBED", shop.now - 4000, shop.now + hour, nil, 1),
                ("RENEWAL_EXTENDED", shop.now - 1000, shop.now + 2 * hour, nil, 1),
                ("REFUND", shop.now - 3000, shop.now + hour, shop.now - 3000, 5),
                ("REFUND_REVERSED", shop.now - 2000, shop.now + hour, nil, 1),
            ],
            fixture,
            shop
        )
        #expect(entitled == [true, true, false, true])
        #expect(try fixture.account(shop.token).entitlements.first?.expiresDate == shop.now + 2 * hour)
    }

    /// A newer view, signed after the reversal, that reaches the ledger between the refund and the reversal: the
    /// transaction is still revoked there when it arrives, but the view does not make the subscription's status
    /// revoked; the trailing reversal lifts the refund.
    @Test func aNewerViewArrivingBetweenARefundAndItsReversalDoesNotKeepTheRefund() throws {
        let fixture = try LedgerFixture()
        let shop = Shop()
        let entitled = try entitlement(
            after: [
                ("SUBSCRIBED", shop.now - 4000, shop.now + hour, nil, 1),
                ("REFUND", shop.now - 3000, shop.now + hour, shop.now - 3000, 5),
                ("DID_CHANGE_RENEWAL_STATUS", shop.now - 1000, shop.now + hour, nil, 1),
                ("REFUND_REVERSED", shop.now - 2000, shop.now + hour, nil, 1),
            ],
            fixture,
            shop
        )
        #expect(entitled == [true, false, false, true])
    }
}
