import Chaos
import Checking
import Profile
import Simulation
import Testing

/// A final probe that came within the boundary of an expiry decides nothing: the example backend at 10× its
/// length left subscription-state undecided for about half its accounts, each probed 1–2 s from the end of its
/// last period. Such a check waits (nothing counted) so that the account is probed again past the boundary.
struct FinalCheckWaitTests {
    @Test func checkNearAnExpiryWaitsAndALaterOneDecides() throws {
        var script = try Script(try scriptProfile())
        // Owed until 110 (the pass's catalog period is 100 s).
        script.play(.grant, "1001", "season.pass", .nonRenewing, at: 10)
        // Not shown a second before its end: lost, or just ended.
        let ended = AccountState()
        let before = script.checker.liveTallies().tallies
        #expect(script.checker.checkFinal(account: script.token, state: ended, at: 109) == nil)
        #expect(script.checker.liveTallies().tallies == before)
        // Past the boundary the same answer is decided: the period is over.
        let t = 109 + script.checker.waitSeconds
        let results = try #require(script.checker.checkFinal(account: script.token, state: ended, at: t))
        #expect(results.allSatisfy { if case .pass = $0.outcome { true } else { false } }, "\(results)")
        #expect(script.checker.verdict(unchecked: []).outcome == .pass)
    }

    /// Every account buys a 30 s pass every few seconds, so some pass always ends near each probe: a product the target
    /// shows is not lost, however near one of its passes ends, so no-lost-purchase decides.
    @Test func passNearItsEndOfAProductTheTargetShowsDecides() throws {
        var script = try Script(try scriptProfile())
        script.play(.grant, "1001", "season.pass", .nonRenewing, at: 10)
        script.play(.grant, "1002", "season.pass", .nonRenewing, at: 50)
        let shown = AccountState(entitlements: [.init(productId: "season.pass", transactionId: "1002")])
        let results = try #require(script.checker.checkFinal(account: script.token, state: shown, at: 109))
        #expect(results.allSatisfy { if case .pass = $0.outcome { true } else { false } }, "\(results)")
        // Not shown, a pass that ends near the probe beside one owed long after it is a lost purchase.
        var lost = try Script(try scriptProfile())
        lost.play(.grant, "1001", "season.pass", .nonRenewing, at: 10)
        lost.play(.grant, "1002", "season.pass", .nonRenewing, at: 50)
        let missing = try #require(lost.checker.checkFinal(account: lost.token, state: AccountState(), at: 109))
        #expect(failures(missing) == [.noLostPurchase])
    }

    @Test func checkNearAnExpiryThatFailsElsewhereDoesNotWait() throws {
        var script = try Script(try scriptProfile())
        script.play(.grant, "1001", "season.pass", .nonRenewing, at: 10)
        // Entitled to a product never bought: a failure now, whatever the boundary says.
        let state = AccountState(entitlements: [.init(productId: "season.pass"), .init(productId: "pro")])
        let results = try #require(script.checker.checkFinal(account: script.token, state: state, at: 109))
        #expect(failures(results) == [.noUnlockWithoutVerifiedPurchase])
    }

    @Test func undecidedForAnotherReasonDoesNotWait() throws {
        var script = try Script(try scriptProfile())
        script.play(.grant, "1001", "pro", .nonConsumable, at: 1)
        // A refund that got no answer stays undecided however long one waits.
        script.play(.revoke, "1001", "pro", .nonConsumable, at: 2, outcome: .indeterminate(reason: "timeout"))
        let results = try #require(script.checker.checkFinal(account: script.token, state: AccountState(), at: 30))
        #expect(
            results.contains { if case .unknown = $0.outcome { $0.invariant == .revocationHonored } else { false } }
        )
    }
}
