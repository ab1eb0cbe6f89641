import Chaos
import Profile
import Simulation
import TargetContract
import Testing

@testable import Checking

/// What the target's books say of refunds (the probe's `refunds` and `transactions`): each refund applied once
/// (no-double-refund), nothing refunded or revoked that the App Store did not refund (revocation-honored), and a
/// refunded period's end as the App Store signed it (subscription-state).
struct RefundBookkeepingTests {
    /// `pro` bought at 1 s and refunded at 2 s (both acknowledged); `coins` 1002 bought, never refunded.
    static func refunded() throws -> Script {
        var script = try Script(try scriptProfile())
        script.play(.grant, "1001", "pro", .nonConsumable, at: 1)
        script.play(.revoke, "1001", "pro", .nonConsumable, at: 2)
        script.play(.grant, "1002", "coins", .consumable, at: 3)
        return script
    }

    static let coins = ["coins": 1]

    @Test func aRefundAppliedOnceHolds() throws {
        let script = try Self.refunded()
        let state = AccountState(balances: Self.coins, refunds: [.init(transactionId: "1001", count: 1)])
        #expect(failures(script.check(state, at: 30)).isEmpty)
        let verdict = script.checker.verdict(unchecked: [])
        #expect(verdict.tallies[.noDoubleRefund]?.passed == 1)
        #expect(!verdict.unchecked.contains { $0.invariant == .noDoubleRefund })
    }

    /// Eight copies of one refund left eight refund rows: one refund, applied eight times.
    @Test func aRefundAppliedTwiceIsADoubleRefund() throws {
        let script = try Self.refunded()
        let state = AccountState(balances: Self.coins, refunds: [.init(transactionId: "1001", count: 8)])
        // Seen during the run too: no timing makes a refund applied more often than issued right.
        let found = try #require(witness(script.check(state, at: 10, final: false), .noDoubleRefund))
        #expect(
            found.summary
                == "the target applied the refund of transaction 1001 of pro 8 times, but the App Store refunded it once"
        )
        #expect(found.entries.contains { $0.sentence.contains("webhook REFUND") })
        // Two rows of one transaction add up.
        let rows = AccountState(
            balances: Self.coins,
            refunds: [.init(transactionId: "1001", count: 1), .init(transactionId: "1001", count: 1)]
        )
        #expect(failures(try Self.refunded().check(rows, at: 30)) == [.noDoubleRefund])
    }

    /// Refunded, reversed, refunded again: two refunds the App Store issued, both applied.
    @Test func aSecondRefundAfterAReversalIsNoDoubleRefund() throws {
        var script = try Self.refunded()
        script.play(.reinstate, "1001", "pro", .nonConsumable, at: 4, notification: "REFUND_REVERSED")
        script.play(.revoke, "1001", "pro", .nonConsumable, at: 5)
        let twice = AccountState(balances: Self.coins, refunds: [.init(transactionId: "1001", count: 2)])
        #expect(!failures(script.check(twice, at: 30)).contains(.noDoubleRefund))
        let thrice = AccountState(balances: Self.coins, refunds: [.init(transactionId: "1001", count: 3)])
        #expect(failures(script.check(thrice, at: 31)).contains(.noDoubleRefund))
    }

    /// Refunded, reversed, folded away with the account's settled purchases, then refunded again: the oracle
    /// rebuilt the transaction from the folded counts without its first refund, so the two refunds the target
    /// applied decide nothing (they did read as a double refund of the correct ledger at 30 times the rate).
    @Test(arguments: [false, true])
    func aTransactionRebuiltFromTheFoldedCountsDecidesNoDoubleRefund(refundedWhenFolded: Bool) throws {
        var script = try Script(try scriptProfile(), foldAbove: 4)
        script.play(.grant, "1001", "coins", .consumable, at: 1)
        script.play(.revoke, "1001", "coins", .consumable, at: 2)
        if !refundedWhenFolded {
            script.play(.reinstate, "1001", "coins", .consumable, at: 3, notification: "REFUND_REVERSED")
        }
        // A refund settles (and may fold) a minute and a half after it was acknowledged.
        let later = refundedWhenFolded ? 100.0 : 4
        script.buyCoins(8, from: later, first: 2001)
        if refundedWhenFolded {
            // Two later refunds of the product, so the first is no longer among its latest and folds.
            script.play(.revoke, "2001", "coins", .consumable, at: later + 1)
            script.play(.revoke, "2002", "coins", .consumable, at: later + 1.1)
            script.buyCoins(2, from: later + 1.5, first: 3001)
            script.play(.reinstate, "1001", "coins", .consumable, at: later + 2, notification: "REFUND_REVERSED")
        }
        script.play(.revoke, "1001", "coins", .consumable, at: later + 3)
        let twice = AccountState(balances: ["coins": 8], refunds: [.init(transactionId: "1001", count: 2)])
        #expect(script.checker.storage(of: script.token).foldedIDs > 0)
        #expect(!failures(script.check(twice, at: later + 4, final: false)).contains(.noDoubleRefund))
    }

    /// A copy of a refund (a duplicate, a retry) is no second refund.
    @Test func aCopyOfARefundIsTheSameRefund() throws {
        var script = try Self.refunded()
        script.play(.revoke, "1001", "pro", .nonConsumable, at: 2, copy: .delayedDuplicate, signedAt: 2)
        let twice = AccountState(balances: Self.coins, refunds: [.init(transactionId: "1001", count: 2)])
        #expect(failures(script.check(twice, at: 30)) == [.noDoubleRefund])
    }

    /// A refund applied to a purchase the App Store never refunded, or a transaction the books list as revoked
    /// without one: an over-revocation.
    @Test func aRefundOfAPurchaseNeverRefundedIsAnOverRevocation() throws {
        let refunds = AccountState(
            entitlements: [],
            balances: [:],
            refunds: [.init(transactionId: "1001", count: 1), .init(transactionId: "1002", count: 1)]
        )
        let found = try #require(witness(try Self.refunded().check(refunds, at: 30), .revocationHonored))
        #expect(
            found.summary
                == "the target revoked transaction 1002 of coins, which the App Store never refunded or revoked"
        )
        #expect(found.proof.hasSuffix("listed a refund of transaction 1002"))
        let listed = AccountState(
            balances: [:],
            transactions: [.init(transactionId: "1002", productId: "coins", state: .revoked)]
        )
        #expect(failures(try Self.refunded().check(listed, at: 30)).contains(.revocationHonored))
    }

    /// A refunded period whose end the books moved (a refund applied to the wrong period that stretched it).
    @Test func aRefundedPeriodWhoseEndMovedIsAWrongSubscriptionState() throws {
        var script = try Script(try scriptProfile())
        script.play(.grant, "2001", "gold", .autoRenewable, at: 1, expires: 20)
        script.play(.revoke, "2001", "gold", .autoRenewable, at: 2, expires: 20)
        let signedEnd = start + 20_000
        func listed(_ end: Int64) -> AccountState {
            AccountState(
                transactions: [.init(transactionId: "2001", productId: "gold", state: .revoked, periodEnd: end)]
            )
        }
        #expect(!failures(script.check(listed(signedEnd), at: 30)).contains(.subscriptionState))
        let found = try #require(witness(script.check(listed(signedEnd + 40_000), at: 31), .subscriptionState))
        #expect(found.summary.hasPrefix("the target's books give refunded transaction 2001 of gold a period ending at"))
    }

    /// Failed probes too: a target whose probe lists no refunds is not undecided about them (found by the example
    /// backend's correct row, seed 7: six failed safety probes made its verdict unknown).
    @Test func aProbeWithoutRefundsLeavesNoDoubleRefundUnchecked() throws {
        let script = try Self.refunded()
        for t in [10.0, 11, 12, 13, 14, 15] {
            script.checker.probeFailed(
                account: script.token,
                error: ProbeError.transport("timeout"),
                at: t,
                final: false
            )
        }
        #expect(failures(script.check(AccountState(balances: Self.coins), at: 30)).isEmpty)
        let verdict = script.checker.verdict(unchecked: [])
        let unchecked = try #require(verdict.unchecked.first { $0.invariant == .noDoubleRefund })
        #expect(unchecked.reason.contains("the probe lists no refunds"))
        #expect(verdict.tallies[.noDoubleRefund] == nil)
        #expect(verdict.reason?.contains("no-double-refund") != true, "\(verdict.reason ?? "")")
    }
}
