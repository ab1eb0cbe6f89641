import Profile
import Testing

@testable import Simulation

/// Every transition of a one-time purchase as one table: how it is bought, refunded and its refund reversed,
/// the state it leads to and the effects the world carries out, in order.
struct OneTimePurchaseTests {
    typealias Effect = OneTimePurchase.Effect

    static let bought = Effect.announce(event: 5, device: 1, approved: false)

    static func purchase(
        _ kind: ProductKind,
        familyShares: Bool = false,
        approved: Bool = false
    ) -> (
        OneTimePurchase, [Effect]
    ) {
        OneTimePurchase.purchase(
            product: 2,
            kind: kind,
            transaction: 90,
            event: 5,
            purchaseMs: 1_000,
            quantity: kind == .consumable ? 3 : 1,
            device: 1,
            approved: approved,
            familyShares: familyShares
        )
    }

    @Test(arguments: [
        (ProductKind.consumable, false, [bought, .remember, .drawMidStreamRefund]),
        (.consumable, true, [bought, .remember, .drawMidStreamRefund]),
        (.nonRenewing, false, [bought, .remember, .drawMidStreamRefund]),
        (.nonConsumable, false, [bought, .holdOwnership, .remember, .drawMidStreamRefund]),
        (.nonConsumable, true, [bought, .holdOwnership, .shareWithFamily, .remember, .drawMidStreamRefund]),
    ])
    func aPurchaseIsAnnouncedOwnedSharedAndRemembered(kind: ProductKind, familyShares: Bool, effects: [Effect]) {
        let (purchase, made) = Self.purchase(kind, familyShares: familyShares)
        #expect(made == effects && !purchase.isRefunded && purchase.quantity == (kind == .consumable ? 3 : 1))
    }

    @Test func anAskToBuyApprovalIsAnnouncedAsApproved() {
        let (_, made) = Self.purchase(.consumable, approved: true)
        #expect(made.first == .announce(event: 5, device: 1, approved: true))
    }

    @Test(arguments: [
        (ProductKind.consumable, UInt64?.none, 1, true, [Effect.moveToRefunded, .notifyRefund]),
        (.nonRenewing, nil, 1, true, [.moveToRefunded, .notifyRefund]),
        (.nonConsumable, nil, 1, true, [.moveToRefunded, .releaseOwnership, .notifyRefund]),
        (
            .nonConsumable, 91, 1, true,
            [.moveToRefunded, .releaseOwnership, .notifyRefund, .revokeFamilyCopy(transaction: 91)]
        ),
        (.nonConsumable, 91, 2, true, []),
    ])
    func aRefundRevokesOnce(
        kind: ProductKind,
        familyCopy: UInt64?,
        refunds: Int,
        refunded: Bool,
        last: [Effect]
    ) {
        var (purchase, _) = Self.purchase(kind, familyShares: familyCopy != nil)
        if let familyCopy { purchase.recordFamilyCopy(familyCopy) }
        var effects: [Effect] = []
        for _ in 0..<refunds { effects = purchase.refund() }
        #expect(purchase.isRefunded == refunded && effects == last && purchase.shared == familyCopy)
    }

    @Test(arguments: [
        (ProductKind.consumable, 0, 1, false, [Effect]()),
        (.consumable, 1, 1, false, [.restore, .notifyReversal]),
        (.nonConsumable, 1, 1, false, [.restore, .holdOwnership, .notifyReversal]),
        (.nonConsumable, 1, 2, false, []),
        (.nonConsumable, 2, 1, false, [.restore, .holdOwnership, .notifyReversal]),
    ])
    func aReversalReinstatesOnlyARefundedPurchase(
        kind: ProductKind,
        refunds: Int,
        reversals: Int,
        refunded: Bool,
        last: [Effect]
    ) {
        var (purchase, _) = Self.purchase(kind)
        for _ in 0..<refunds { _ = purchase.refund() }
        var effects: [Effect] = []
        for _ in 0..<reversals { effects = purchase.reverseRefund() }
        #expect(purchase.isRefunded == refunded && effects == last)
    }

    @Test func aReversalReinstatesThePartnersCopyAfterThePurchase() {
        var (purchase, _) = Self.purchase(.nonConsumable, familyShares: true)
        purchase.recordFamilyCopy(91)
        _ = purchase.refund()
        #expect(
            purchase.reverseRefund() == [
                .restore, .holdOwnership, .notifyReversal, .reinstateFamilyCopy(transaction: 91),
            ]
        )
    }

    @Test func aRefundAfterAReversalRevokesAgain() {
        var (purchase, _) = Self.purchase(.nonConsumable)
        _ = purchase.refund()
        _ = purchase.reverseRefund()
        #expect(purchase.refund() == [.moveToRefunded, .releaseOwnership, .notifyRefund] && purchase.isRefunded)
    }

    @Test func aPurchaseFitsInThirtyTwoBytes() {
        #expect(MemoryLayout<OneTimePurchase>.stride == 32)
    }
}
