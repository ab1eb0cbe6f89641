import Chaos
import Foundation
import Profile
import Simulation
import TargetContract
import Testing

@testable import Checking

/// Refunded purchases fold away once their refunds settle, so a soak's oracle keeps a bounded book per account
/// whatever its refunds, and every verdict on them stays what it was: the latest refunds of each product stay
/// whole, a folded refund still fails an entitlement or a listing through it, and a reversal brings it back.
struct FoldedRefundTests {
    /// Buys and refunds coins `count` times, a second apart from `t` on (IDs from `first`), every answer an
    /// acknowledgment.
    func buyAndRefundCoins(_ count: Int, from t: Double, first: Int, in script: inout Script) {
        for i in 0..<count {
            let id = String(first + i)
            script.play(.grant, id, "coins", .consumable, at: t + Double(i))
            script.play(.revoke, id, "coins", .consumable, at: t + Double(i) + 0.5)
        }
    }

    // Refunded purchases used to stay for the whole run (a reversal might come), about 270 bytes a refund.
    @Test func refundedPurchasesFoldOnceTheirRefundsSettle() throws {
        var script = try Script(try scriptProfile(), foldAbove: 8)
        buyAndRefundCoins(600, from: 1, first: 10_000, in: &script)
        let storage = script.checker.storage(of: script.token)
        // The last 90 s of refunds (not yet settled past the probe's 30 s timeout and a minute) stay, and the
        // product's latest two.
        #expect(storage.kept <= 2 * 92, "\(storage)")
        #expect(storage.foldedRefunds >= 600 - 2 * 92)
        #expect(failures(script.check(AccountState(balances: ["coins": 0]), at: 700)).isEmpty)
        // A refund not taken back is still caught, with only folded refunds and the latest ones to go by.
        #expect(failures(script.check(AccountState(balances: ["coins": 1]), at: 701)) == [.revocationHonored])
    }

    @Test func refundDoesNotFoldBeforeEveryProbeSawItStand() throws {
        var script = try Script(try scriptProfile(), foldAbove: 4)
        buyAndRefundCoins(3, from: 1, first: 10_000, in: &script)
        script.buyCoins(10, from: 50, first: 20_000)
        #expect(script.checker.storage(of: script.token).foldedRefunds == 0)
        // Asked before the first refund was acknowledged, answered at 60 s: it still shows the coin.
        let results = script.checker.check(
            account: script.token,
            state: AccountState(balances: ["coins": 11]),
            at: 60,
            final: true,
            asked: 1.2
        )
        #expect(!failures(results).contains(.revocationHonored), "\(results)")
        script.buyCoins(10, from: 200, first: 30_000)
        #expect(script.checker.storage(of: script.token).foldedRefunds == 1)
    }

    @Test func reversalOfAFoldedRefundMakesThePurchaseOwedAgain() throws {
        var script = try Script(try scriptProfile(), foldAbove: 4)
        buyAndRefundCoins(5, from: 1, first: 10_000, in: &script)
        script.buyCoins(10, from: 200, first: 20_000)
        #expect(script.checker.storage(of: script.token).foldedRefunds == 3)
        // A copy of the folded refund changes nothing: ten coins stay owed.
        script.play(.revoke, "10000", "coins", .consumable, at: 210)
        #expect(failures(script.check(AccountState(balances: ["coins": 10]), at: 211)).isEmpty)
        #expect(failures(script.check(AccountState(balances: ["coins": 9]), at: 212)) == [.noLostPurchase])
        // The reversal brings the first purchase back: eleven owed once the target acknowledged it.
        script.play(.reinstate, "10000", "coins", .consumable, at: 220, notification: "REFUND_REVERSED")
        #expect(script.checker.storage(of: script.token).foldedRefunds == 2)
        #expect(failures(script.check(AccountState(balances: ["coins": 11]), at: 221)).isEmpty)
        #expect(failures(script.check(AccountState(balances: ["coins": 10]), at: 222)) == [.noLostPurchase])
        #expect(failures(script.check(AccountState(balances: ["coins": 12]), at: 223)) == [.revocationHonored])
    }

    /// A refund of coins delayed (a reorder fault) past its own reversal, which comes after the purchase folded into
    /// the counts: the reversal of a folded purchase is remembered, so the refund, signed before it, takes nothing out
    /// of what the target owes, and a target that keeps the later-signed reversal passes revocation-honored.
    @Test func refundDelayedPastTheReversalOfAFoldedPurchaseChangesNothing() throws {
        var script = try Script(try scriptProfile(), foldAbove: 4)
        script.buyCoins(10, from: 1, first: 20_000)
        #expect(script.checker.storage(of: script.token).kept < 10)
        // The refund signed at 30 s reaches the books after its reversal, signed at 30.5 s.
        script.play(.reinstate, "20000", "coins", .consumable, at: 30.5, notification: "REFUND_REVERSED")
        script.play(.revoke, "20000", "coins", .consumable, at: 31, signedAt: 30)
        #expect(failures(script.check(AccountState(balances: ["coins": 10]), at: 40)).isEmpty)
        #expect(failures(script.check(AccountState(balances: ["coins": 9]), at: 41)) == [.noLostPurchase])
        // A refund signed after the reversal takes the purchase back.
        script.play(.revoke, "20000", "coins", .consumable, at: 50)
        #expect(failures(script.check(AccountState(balances: ["coins": 10]), at: 60)) == [.revocationHonored])
        #expect(failures(script.check(AccountState(balances: ["coins": 9]), at: 61)).isEmpty)
    }

    /// A purchase of coins whose deliveries all failed (refused during a restart, then missed at the harness's
    /// in-flight cap), and its refund too, while an acknowledged `CONSUMPTION_REQUEST` carried it: a target may credit
    /// the coins from that signed transaction, so they are allowed, not held as never reached.
    @Test func purchaseReachedOnlyByANotificationCarryingItMayBeCredited() throws {
        for requestReached in [true, false] {
            var script = try Script(try scriptProfile())
            script.play(.grant, "1001", "coins", .consumable, at: 1)
            script.play(.revoke, "1001", "coins", .consumable, at: 2)
            let missed = DeliveryOutcome.notSent(reason: "in-flight cap 4096 reached", harnessLimited: true)
            script.play(.grant, "2001", "coins", .consumable, at: 3, outcome: missed)
            script.play(.grant, "2001", "coins", .consumable, at: 3, outcome: missed, onDevice: true)
            script.play(
                .none,
                "2001",
                "coins",
                .consumable,
                at: 4,
                outcome: requestReached ? .acknowledged(status: 200) : missed,
                notification: "CONSUMPTION_REQUEST"
            )
            script.play(.revoke, "2001", "coins", .consumable, at: 5, outcome: missed)
            let failed = failures(script.check(AccountState(balances: ["coins": 1]), at: 10))
            #expect(failed == (requestReached ? [] : [.revocationHonored]), "request reached: \(requestReached)")
        }
    }

    /// A refund request signed after a purchase of coins whose own deliveries are still late (reordered, or waiting at
    /// the cap) carries the purchase to the target first, and the reference ledger credits it from there: the coins are
    /// no double grant. Only one more unit than that is.
    @Test func purchaseCarriedAheadOfItsOwnDeliveriesMayBeCredited() throws {
        for extra in [0, 1] {
            var script = try Script(try scriptProfile())
            script.play(.grant, "1001", "coins", .consumable, at: 1)
            script.play(.none, "2001", "coins", .consumable, at: 2, notification: "CONSUMPTION_REQUEST")
            let ahead = failures(script.check(AccountState(balances: ["coins": 2 + extra]), at: 3))
            #expect(ahead == (extra == 0 ? [] : [.noDoubleGrant]), "extra units: \(extra)")
            script.play(.grant, "2001", "coins", .consumable, at: 1.5, signedAt: 1.5)
            let booked = failures(script.check(AccountState(balances: ["coins": 2 + extra]), at: 5))
            #expect(booked == (extra == 0 ? [] : [.noDoubleGrant]), "extra units: \(extra)")
        }
    }

    @Test func reversalSignedBeforeAFoldedRefundChangesNothing() throws {
        var script = try Script(try scriptProfile(), foldAbove: 4)
        buyAndRefundCoins(5, from: 1, first: 10_000, in: &script)
        script.buyCoins(10, from: 200, first: 20_000)
        // A late copy of a reversal signed before the refund (say of an earlier refund of the same purchase).
        script.play(.reinstate, "10000", "coins", .consumable, at: 0.8, notification: "REFUND_REVERSED")
        #expect(script.checker.storage(of: script.token).foldedRefunds == 3)
        #expect(failures(script.check(AccountState(balances: ["coins": 11]), at: 221)) == [.revocationHonored])
    }

    /// A refund reversed, its purchase folded away, then a late copy of the refund (signed before the reversal: a
    /// delayed duplicate or an App Store retry) arrives. The reversal still stands, as the reference ledger has it, and
    /// the copy does not unfold the purchase as refunded anew.
    @Test func lateCopyOfARefundReversedBeforeItsPurchaseFoldedChangesNothing() throws {
        var script = try Script(try scriptProfile(), foldAbove: 4)
        script.play(.grant, "10000", "coins", .consumable, at: 1)
        script.play(.revoke, "10000", "coins", .consumable, at: 1.5)
        script.play(.reinstate, "10000", "coins", .consumable, at: 2, notification: "REFUND_REVERSED")
        script.buyCoins(10, from: 200, first: 20_000)
        #expect(script.checker.storage(of: script.token).kept < 11)
        script.play(.revoke, "10000", "coins", .consumable, at: 1.5, copy: .delayedDuplicate)
        #expect(failures(script.check(AccountState(balances: ["coins": 11]), at: 221)).isEmpty)
        #expect(!failures(script.check(AccountState(balances: ["coins": 12]), at: 222)).isEmpty)
        // A refund signed after the reversal is a refund again.
        script.play(.revoke, "10000", "coins", .consumable, at: 230)
        #expect(failures(script.check(AccountState(balances: ["coins": 10]), at: 231)).isEmpty)
        #expect(failures(script.check(AccountState(balances: ["coins": 11]), at: 232)) == [.revocationHonored])
    }

    /// Three purchases of `pro`, each refunded, the first long before the rest: it folds, the latest two stay.
    func threeRefundedUnlocks() throws -> Script {
        var script = try Script(try scriptProfile(), foldAbove: 4)
        for (i, at) in [1.0, 150, 160].enumerated() {
            script.play(.grant, String(1001 + i), "pro", .nonConsumable, at: at)
            script.play(.revoke, String(1001 + i), "pro", .nonConsumable, at: at + 1)
        }
        script.buyCoins(10, from: 200, first: 20_000)
        return script
    }

    @Test func entitlementThroughAFoldedRefundIsStillCaught() throws {
        let script = try threeRefundedUnlocks()
        #expect(script.checker.storage(of: script.token).foldedRefunds == 1)
        let entitled = AccountState(
            entitlements: [.init(productId: "pro", transactionId: "1001")],
            balances: ["coins": 10]
        )
        let found = try #require(witness(script.check(entitled, at: 230), .revocationHonored))
        #expect(found.summary == "the target still entitles pro through refunded transaction 1001")
        #expect(found.entries.first?.sentence.contains("transaction 1001 was refunded") == true)
        let listed = AccountState(
            balances: ["coins": 10],
            transactions: [.init(transactionId: "1001", productId: "pro", state: .granted)]
        )
        // The same refunded transaction is the same violation however it shows: a fresh run sees this form.
        let books = try #require(witness(try threeRefundedUnlocks().check(listed, at: 231), .revocationHonored))
        #expect(books.summary.contains("books still show refunded transaction 1001 of pro as granted"))
    }

    @Test func foldedRefundThatComesBackIsAStaleRegression() throws {
        var script = try threeRefundedUnlocks()
        // Bought again: the product stays owed, so only the folded transaction itself tells.
        script.play(.grant, "1004", "pro", .nonConsumable, at: 240)
        let owed = AccountState.Entitlement(productId: "pro", transactionId: "1004")
        let shown = AccountState(entitlements: [owed], balances: ["coins": 10])
        #expect(failures(script.check(shown, at: 241, final: false)).isEmpty)
        let back = AccountState(
            entitlements: [owed, .init(productId: "pro", transactionId: "1001")],
            balances: ["coins": 10]
        )
        let results = script.check(back, at: 242)
        let found = try #require(witness(results, .noStaleRegression))
        #expect(found.summary.contains("transaction 1001 of pro was revoked, disappeared, then came back"))
        #expect(Set(failures(results)) == [.revocationHonored, .noStaleRegression])
    }

    /// A reversal that does not sign the period again (the App Store's `REFUND_REVERSED` of a non-renewing
    /// subscription) leaves the purchase owed for its catalog period: lost if the target does not entitle it.
    @Test func reversedNonRenewingPurchaseIsOwedForItsPeriodAgain() throws {
        var script = try Script(try scriptProfile())
        script.play(.grant, "1001", "season.pass", .nonRenewing, at: 1)
        script.play(.revoke, "1001", "season.pass", .nonRenewing, at: 2)
        script.play(.reinstate, "1001", "season.pass", .nonRenewing, at: 3, notification: "REFUND_REVERSED")
        #expect(failures(script.check(AccountState(), at: 50)) == [.noLostPurchase])
        let owed = AccountState(entitlements: [.init(productId: "season.pass", transactionId: "1001")])
        #expect(failures(script.check(owed, at: 51)).isEmpty)
    }

    /// A purchase's device delivery and its refund's reversal both dropped by the harness over its in-flight cap, while
    /// the refund and then the purchase's webhook reach the target: a target that took the refund first keeps the
    /// purchase refunded, so the webhook's acknowledgment does not make it owed again; only the reversal's does.
    @Test func purchaseAcknowledgedAfterItsRefundIsNotOwedUntilTheReversalIs() throws {
        for reversalReached in [false, true] {
            var script = try Script(try scriptProfile())
            let missed = DeliveryOutcome.notSent(reason: "missed")
            script.play(.grant, "1001", "coins", .consumable, at: 1, outcome: missed, onDevice: true)
            script.play(.revoke, "1001", "coins", .consumable, at: 1.1)
            let reversal = script.play(
                .reinstate,
                "1001",
                "coins",
                .consumable,
                at: 2,
                outcome: nil,
                notification: "REFUND_REVERSED"
            )
            script.checker.record(reversal, outcome: reversalReached ? .acknowledged(status: 200) : missed, at: 2)
            let webhook = script.play(.grant, "1001", "coins", .consumable, at: 1, outcome: nil)
            script.checker.record(webhook, outcome: .acknowledged(status: 200), at: 3)
            let lost = failures(script.check(AccountState(balances: ["coins": 0]), at: 10))
            #expect(lost == (reversalReached ? [.noLostPurchase] : []), "reversal reached: \(reversalReached)")
        }
    }

    /// A season pass refunded, the refund reversed, and the pass refunded again, the second refund dropped by the
    /// harness over its in-flight cap; the first refund and the reversal reach the target in that order, so its last
    /// word is the reversal. Only an acknowledgment of a refund signed after the reversal makes the second refund one
    /// the target must show.
    @Test func refundAcknowledgedBeforeItsReversalDoesNotStandForALaterRefund() throws {
        for secondReached in [false, true] {
            var script = try Script(try scriptProfile())
            script.play(.grant, "1001", "pro", .nonConsumable, at: 1)
            let refund = script.play(.revoke, "1001", "pro", .nonConsumable, at: 1.1, outcome: nil)
            let reversal = script.play(
                .reinstate,
                "1001",
                "pro",
                .nonConsumable,
                at: 1.2,
                outcome: nil,
                notification: "REFUND_REVERSED"
            )
            let second = script.play(.revoke, "1001", "pro", .nonConsumable, at: 2, outcome: nil)
            script.checker.record(
                second,
                outcome: secondReached ? .acknowledged(status: 200) : .notSent(reason: "missed"),
                at: 2
            )
            script.checker.record(refund, outcome: .acknowledged(status: 200), at: 3)
            script.checker.record(reversal, outcome: .acknowledged(status: 200), at: 3.1)
            let shown = AccountState(
                entitlements: [AccountState.Entitlement(productId: "pro", transactionId: "1001")],
                balances: [:]
            )
            let failed = failures(script.check(shown, at: 10))
            #expect(failed == (secondReached ? [.revocationHonored] : []), "second refund reached: \(secondReached)")
        }
    }

    /// A refund of a purchase that folded unrefunded (a consumable folds as soon as it is sent): its units leave
    /// the folded counts for a kept, refunded transaction, so a refund not taken back shows, and the refund
    /// itself folds once settled. Its units used to stay counted as unrefunded, and the refund stayed kept.
    @Test func refundOfAFoldedPurchaseIsTakenBackAndFoldsItself() throws {
        var script = try Script(try scriptProfile(), foldAbove: 4)
        script.buyCoins(10, from: 1, first: 10_000)
        script.play(.revoke, "10000", "coins", .consumable, at: 5)
        #expect(failures(script.check(AccountState(balances: ["coins": 9]), at: 10)).isEmpty)
        #expect(failures(script.check(AccountState(balances: ["coins": 10]), at: 11)) == [.revocationHonored])
        script.buyCoins(10, from: 200, first: 20_000)
        for i in 1...2 { script.play(.revoke, String(20_000 + i), "coins", .consumable, at: 210 + Double(i)) }
        script.buyCoins(10, from: 300, first: 30_000)
        #expect(script.checker.storage(of: script.token).foldedRefunds == 1)
        #expect(failures(script.check(AccountState(balances: ["coins": 27]), at: 400)).isEmpty)
        #expect(failures(script.check(AccountState(balances: ["coins": 28]), at: 401)) == [.revocationHonored])
    }

    /// `unlockAfterARefundAndAReplayOfThePurchaseIsARefundNotHonored` with the replayed purchase folded away:
    /// the replay taken after the pending report still outweighs it.
    @Test func replayOfAFoldedRefundStillOutweighsAPendingReport() throws {
        var script = try Script(try scriptProfile(), foldAbove: 4)
        script.play(.grant, "1001", "pro", .nonConsumable, at: 1)
        script.play(.pending, "1005", "pro", .nonConsumable, at: 2)
        script.play(.revoke, "1001", "pro", .nonConsumable, at: 3)
        script.play(.grant, "1001", "pro", .nonConsumable, at: 4, copy: .delayedDuplicate)
        for (i, at) in [150.0, 160].enumerated() {
            script.play(.grant, String(1002 + i), "pro", .nonConsumable, at: at)
            script.play(.revoke, String(1002 + i), "pro", .nonConsumable, at: at + 1)
        }
        script.buyCoins(10, from: 200, first: 20_000)
        #expect(script.checker.storage(of: script.token).foldedRefunds == 1)
        let results = script.check(
            AccountState(entitlements: [.init(productId: "pro")], balances: ["coins": 10]),
            at: 230
        )
        #expect(failures(results) == [.revocationHonored])
        let found = try #require(witness(results, .revocationHonored))
        #expect(found.summary.contains("(or the Ask to Buy of it reported pending unlocked it)"))
    }

    /// A few accounts refunding and reversing for 25 minutes, 40 times the whole-run test's length per account
    /// (`CheckingTests.correctTargetPasses`): each account's books stay flat while its refunds fold by the
    /// hundred, a correct target still passes every check, and one that never takes a refund back still fails.
    @Test func longRefundHeavyRunKeepsFlatBooksAndTrueVerdicts() throws {
        let profile = try scriptProfile(
            faults: "{ duplicate: { probability: 0.1, afterSuccess: 0.5 } }",
            accounts: 3,
            actionMix:
                "{ consumable: 3, nonConsumable: 1, nonRenewing: 1, subscribe: 0.5, refund: 2, refundReversal: 0.5 }",
            schedule: #"[{ kind: "constant", rate: 3, seconds: 1500 }]"#
        )
        let (checker, ideal, _) = play(profile, foldAbove: 8)
        let t = profile.durationSeconds + 7
        var folded = 0
        for token in checker.knownAccounts() {
            let storage = checker.storage(of: token)
            folded += storage.foldedRefunds
            // The latest two refunds of each product and those of the last 90 s stay; everything else folds.
            #expect(storage.kept <= 64, "\(storage)")
            let results = checker.check(account: token, state: ideal.state(token, at: t), at: t, final: true)
            #expect(failures(results).isEmpty, "\(results)")
        }
        #expect(folded >= 300)
        #expect(checker.verdict(unchecked: []).outcome == .pass)
        var keepsRefunds = ideal
        for token in keepsRefunds.accounts.keys { keepsRefunds.accounts[token]?.revoked = [] }
        for token in checker.knownAccounts() {
            let results = checker.check(account: token, state: keepsRefunds.state(token, at: t), at: t, final: true)
            #expect(failures(results).contains(.revocationHonored), "\(results)")
        }
    }
    /// A resubscription the target acknowledged, then an upgrade of it and the upgrade's refund, both missed at the
    /// harness's cap: the target rightly still holds the resubscription as current, so the books do not fold it as a
    /// past period. A period folds only once the target acknowledged a later transaction of its series (or a minute
    /// after it ended).
    @Test func periodTheTargetStillHoldsAsCurrentDoesNotFold() throws {
        for upgradeReached in [false, true] {
            var script = try Script(try scriptProfile(), foldAbove: 3)
            let reached: DeliveryOutcome =
                upgradeReached
                ? .acknowledged(status: 200) : .notSent(reason: "in-flight cap 4096 reached", harnessLimited: true)
            // An earlier period, refunded (kept: its extended end is past the upgrade's).
            script.play(.grant, "1000", "gold", .autoRenewable, at: 0.5, expires: 300)
            script.play(.revoke, "1000", "gold", .autoRenewable, at: 0.8, expires: 300)
            script.play(.grant, "1001", "gold", .autoRenewable, at: 1, expires: 200, original: "1000")
            script.play(
                .grant,
                "1002",
                "gold",
                .autoRenewable,
                at: 3,
                outcome: reached,
                expires: 205,
                original: "1000",
                supersedes: "1001"
            )
            script.play(
                .revoke,
                "1002",
                "gold",
                .autoRenewable,
                at: 4,
                outcome: reached,
                expires: 205,
                original: "1000"
            )
            // A fourth transaction makes the books fold.
            script.play(.grant, "3001", "coins", .consumable, at: 5)
            let shown = AccountState(
                entitlements: [.init(productId: "gold", transactionId: "1001", expiresDate: start + 200_000)],
                balances: ["coins": 1]
            )
            let failed = failures(script.check(shown, at: 10, final: true))
            #expect(failed == (upgradeReached ? [.revocationHonored] : []), "upgrade reached: \(upgradeReached)")
        }
    }
}
