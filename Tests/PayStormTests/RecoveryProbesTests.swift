import Testing

@testable import PayStorm

/// Reads after recovery: queued when the target answers again, first in line, and holding their accounts'
/// follow-ups until they answer (or for a bounded time).
struct RecoveryProbesTests {
    @Test func readsEachAccountOnceWhenTheTargetIsBack() {
        var recovery = RecoveryProbes()
        #expect(recovery.firstTime == nil)
        recovery.targetBack(down: 4, at: 6, accounts: ["a", "b", "a"])
        #expect(recovery.firstTime == 6)
        #expect(recovery.pop() == .init(account: "a", down: 4, at: 6))
        #expect(recovery.pop() == .init(account: "b", down: 4, at: 6))
        #expect(recovery.pop() == nil)
        #expect(recovery.firstTime == nil)
        #expect(recovery.recoveries == 1 && recovery.accountsRead == 2)
    }

    /// (account asked about, seconds after the target came back, answered first, held)
    @Test(arguments: [
        ("a", 0.1, false, true),
        ("a", 9.9, false, true),
        ("a", 10.1, false, false),
        ("a", 0.1, true, false),
        ("other", 0.1, false, false),
    ])
    func holdsAnAccountsFollowUpsUntilItsReadAnswers(account: String, after: Double, answered: Bool, held: Bool) {
        var recovery = RecoveryProbes()
        recovery.targetBack(down: 4, at: 6, accounts: ["a"])
        _ = recovery.pop()
        if answered { recovery.answered("a") }
        #expect(recovery.holds(account, at: 6 + after) == held)
    }

    @Test func anOutageOutsideThePlanEndsWithTheFirstAnswer() {
        var recovery = RecoveryProbes()
        #expect(recovery.answered(at: 1) == nil)
        recovery.refused(at: 5)
        recovery.refused(at: 5.5)
        #expect(recovery.outageSince == 5)
        // An answer to a request sent before the outage began says nothing of its end.
        #expect(recovery.answered(at: 4.9) == nil)
        #expect(recovery.answered(at: 7) == 5)
        #expect(recovery.outageSince == nil)
        #expect(recovery.answered(at: 8) == nil)
    }
}
