import Chaos
import Checking
import Profile
import Simulation
import TargetContract
import Testing

/// The windows between probes: a read right after the target comes back from an outage, and subscription state
/// read during the run. Each failing case has a control that a correct target passes.
struct WindowCheckingTests {
    let pro = AccountState(entitlements: [.init(productId: "pro")])

    // MARK: - Read after recovery

    @Test func aGrantAcknowledgedBeforeTheTargetWentDownAndMissingAfterItCameBackIsLost() throws {
        var script = try Script(try scriptProfile())
        script.play(.grant, "1001", "pro", .nonConsumable, at: 1)
        let lost = try #require(
            witness(
                script.checker.checkAfterRecovery(
                    account: script.token,
                    state: AccountState(),
                    at: 6,
                    asked: 5.9,
                    down: 2
                ),
                .noLostPurchase
            )
        )
        #expect(lost.summary.contains("acknowledged purchase 1001 of pro at t=1.010s, went down at t=2.000s"))
        #expect(lost.entries.contains { $0.transactionId == "1001" })
        // Control: the grant survived.
        let kept = script.checker.checkAfterRecovery(account: script.token, state: pro, at: 6, asked: 5.9, down: 2)
        #expect(failures(kept).isEmpty)
        #expect(kept.contains { $0.invariant == .noLostPurchase && $0.outcome == .pass })
    }

    @Test func whatTheTargetAcknowledgedAfterItWentDownIsLeftToLaterProbes() throws {
        var script = try Script(try scriptProfile())
        script.play(.grant, "1001", "pro", .nonConsumable, at: 3)
        let results = script.checker.checkAfterRecovery(
            account: script.token,
            state: AccountState(),
            at: 6,
            asked: 5.9,
            down: 2
        )
        #expect(failures(results).isEmpty)
        #expect(!results.contains { $0.invariant == .noLostPurchase })
    }

    @Test func aPurchaseWithARefundInItsPastIsLeftToTheFinalProbe() throws {
        var script = try Script(try scriptProfile())
        script.play(.grant, "1001", "pro", .nonConsumable, at: 1)
        script.play(.revoke, "1001", "pro", .nonConsumable, at: 1.5)
        script.play(.reinstate, "1001", "pro", .nonConsumable, at: 1.8)
        let results = script.checker.checkAfterRecovery(
            account: script.token,
            state: AccountState(),
            at: 6,
            asked: 5.9,
            down: 2
        )
        #expect(!failures(results).contains(.noLostPurchase))
    }

    @Test func aBalanceBelowWhatWasAcknowledgedBeforeTheOutageIsLost() throws {
        var script = try Script(try scriptProfile())
        script.play(.grant, "1001", "coins", .consumable, at: 1)
        script.play(.grant, "1002", "coins", .consumable, at: 1.2)
        let one = AccountState(balances: ["coins": 1])
        let lost = try #require(
            witness(
                script.checker.checkAfterRecovery(account: script.token, state: one, at: 6, asked: 5.9, down: 2),
                .noLostPurchase
            )
        )
        #expect(lost.proof.contains("balance of 1 coins, below the 2 it had acknowledged"))
        let both = AccountState(balances: ["coins": 2])
        #expect(
            failures(script.checker.checkAfterRecovery(account: script.token, state: both, at: 6, asked: 5.9, down: 2))
                .isEmpty
        )
    }

    @Test func aReadAfterRecoveryJudgedOnceLaterPurchasesFoldedOwesOnlyWhatWasAcknowledgedBeforeTheOutage() throws {
        // The example backend's correct-restarts row (seed 7): a read judged after later purchases were
        // acknowledged and folded away with an earlier one counted them as owed before the outage.
        // Booked in this order, the purchases acknowledged after the outage fold and the one before it stays kept.
        var script = try Script(try scriptProfile(), foldAbove: 4)
        for index in 0..<6 { script.play(.grant, "\(1002 + index)", "coins", .consumable, at: 3 + Double(index) / 10) }
        script.play(.grant, "1001", "coins", .consumable, at: 1)
        let one = AccountState(balances: ["coins": 1])
        let results = script.checker.checkAfterRecovery(account: script.token, state: one, at: 4, asked: 2.5, down: 2)
        #expect(failures(results).isEmpty)
    }

    @Test func unitsFoldedAwayThatWereAllAcknowledgedBeforeTheOutageAreStillOwed() throws {
        var script = try Script(try scriptProfile(), foldAbove: 4)
        for index in 0..<6 { script.play(.grant, "\(1001 + index)", "coins", .consumable, at: 1 + Double(index) / 10) }
        let two = AccountState(balances: ["coins": 2])
        let lost = try #require(
            witness(
                script.checker.checkAfterRecovery(account: script.token, state: two, at: 4, asked: 2.5, down: 2),
                .noLostPurchase
            )
        )
        #expect(lost.proof.contains("balance of 2 coins, below the 6 it had acknowledged"))
    }

    @Test func theAccountsToReadAreThoseAcknowledgedBeforeTheOutageAndUnreadSince() throws {
        var script = try Script(try scriptProfile())
        script.play(.grant, "1001", "pro", .nonConsumable, at: 1)
        #expect(script.checker.accountsAcknowledgedUnprobed(before: 2) == [script.token])
        // Acknowledged only after the outage began: nothing it could have lost.
        #expect(script.checker.accountsAcknowledgedUnprobed(before: 0.5).isEmpty)
        // Acknowledged again in the moment before the outage: still to be read.
        script.play(.grant, "1002", "coins", .consumable, at: 2.5)
        #expect(script.checker.accountsAcknowledgedUnprobed(before: 2) == [script.token])
        // Read since: the probe saw what was acknowledged.
        _ = script.checker.check(account: script.token, state: pro, at: 3.1, final: false, asked: 3)
        #expect(script.checker.accountsAcknowledgedUnprobed(before: 4).isEmpty)
    }

    // MARK: - Subscription state during the run

    @Test func aSubscriptionTheTargetAcknowledgedAsRunningIsEntitledDuringTheRun() throws {
        var script = try Script(try scriptProfile())
        script.play(.grant, "1001", "gold", .autoRenewable, at: 1, expires: 100)
        let dropped = try #require(
            witness(script.check(AccountState(), at: 10, final: false), .subscriptionState)
        )
        #expect(dropped.summary.contains("runs until \(start + 100_000) by what the target acknowledged"))
        let gold = AccountState(entitlements: [.init(productId: "gold", expiresDate: start + 100_000)])
        #expect(failures(script.check(gold, at: 10, final: false)).isEmpty)
    }

    /// A backend that applies `EXPIRED` without comparing `signedDate`: the expiry of the older period, retried,
    /// reaches it after the renewal, and it stops entitling a subscription the renewal runs. The next renewal
    /// would repair the row, so only a probe while it lasts sees it.
    @Test func aStaleExpiryTakenAfterTheRenewalIsCaughtWhileItLasts() throws {
        var script = try Script(try scriptProfile())
        script.play(.grant, "1001", "gold", .autoRenewable, at: 1, expires: 20)
        script.play(.grant, "1002", "gold", .autoRenewable, at: 19, expires: 120, original: "1001")
        script.play(
            .subscriptionStatus,
            "1001",
            "gold",
            .autoRenewable,
            at: 22,
            notification: "EXPIRED",
            expires: 20,
            original: "1001",
            signedAt: 18,
            status: .expired
        )
        let stale = try #require(witness(script.check(AccountState(), at: 25, final: false), .subscriptionState))
        #expect(stale.entries.contains { $0.transactionId == "1002" })
        let renewed = AccountState(entitlements: [.init(productId: "gold", expiresDate: start + 120_000)])
        #expect(failures(script.check(renewed, at: 25, final: false)).isEmpty)
    }

    /// The target may read its state before applying what it acknowledged while the probe was in flight: here an
    /// extension of the period it holds, answered after the probe asked.
    @Test func anExtensionAcknowledgedWhileTheProbeWasInFlightDecidesNothing() throws {
        var script = try Script(try scriptProfile())
        script.play(.grant, "1001", "gold", .autoRenewable, at: 1, expires: 9)
        let extended = script.play(
            .grant,
            "1001",
            "gold",
            .autoRenewable,
            at: 8,
            outcome: nil,
            notification: "RENEWAL_EXTENDED",
            expires: 120
        )
        script.checker.record(extended, outcome: .acknowledged(status: 200), at: 12.05)
        let early = script.checker.check(
            account: script.token,
            state: AccountState(),
            at: 12.1,
            final: false,
            asked: 12
        )
        #expect(!failures(early).contains(.subscriptionState))
        // Control: asked after the acknowledgment.
        let late = script.checker.check(
            account: script.token,
            state: AccountState(),
            at: 12.3,
            final: false,
            asked: 12.2
        )
        #expect(failures(late).contains(.subscriptionState))
    }

    @Test func anEndStillInFlightIsNotOwed() throws {
        for ending in [Truth.Kind.revoke, .subscriptionStatus] {
            var script = try Script(try scriptProfile())
            script.play(.grant, "1001", "gold", .autoRenewable, at: 1, expires: 100)
            script.play(
                ending,
                "1001",
                "gold",
                .autoRenewable,
                at: 9,
                outcome: nil,
                notification: ending == .revoke ? "REFUND" : "DID_FAIL_TO_RENEW",
                expires: 100,
                status: ending == .revoke ? .revoked : .billingRetry
            )
            #expect(!failures(script.check(AccountState(), at: 15, final: false)).contains(.subscriptionState))
        }
    }
}
