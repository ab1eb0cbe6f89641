import Chaos
import Checking
import Profile
import Simulation
import Testing

/// A PASS says every invariant was checked: one invariant mostly undecided (say no-lost-purchase for half its accounts)
/// makes the run unknown even when the share of undecided checks over all invariants is small, since each invariant's
/// own share counts too.
struct UndecidedInvariantTests {
    /// A whole run against the ideal target, in which every delivery to the first `unanswered` accounts timed
    /// out: the target shows them nothing, and whether it honoured their refunds cannot be decided. The
    /// rest are acknowledged and shown as the ideal target holds them. No check fails.
    private func verdict(unanswered: Int) throws -> Verdict {
        let profile = try checkingProfile()
        let checker = Checker(profile: profile, startMillis: start)
        var ideal = IdealTarget()
        let planned = Array(ChaosStream(World(profile: profile, startMillis: start), profile: profile))
        var accounts: [String] = []
        for delivery in planned where !accounts.contains(delivery.action.appAccountToken) {
            accounts.append(delivery.action.appAccountToken)
        }
        let silent = Set(accounts.prefix(unanswered))
        for delivery in planned {
            checker.sent(delivery, at: delivery.at)
            guard delivery.sends else { continue }
            if silent.contains(delivery.action.appAccountToken) {
                checker.record(delivery, outcome: .indeterminate(reason: "timeout"), at: delivery.at)
            } else {
                ideal.apply(delivery)
                checker.record(delivery, outcome: .acknowledged(status: 200), at: delivery.at)
            }
        }
        let t = profile.durationSeconds + 7
        for token in checker.knownAccounts() {
            let results = checker.check(account: token, state: ideal.state(token, at: t), at: t, final: true)
            #expect(failures(results).isEmpty, "\(results)")
        }
        return checker.verdict(unchecked: [])
    }

    @Test func invariantMostlyUndecidedMakesTheVerdictUnknownAndIsNamed() throws {
        let verdict = try verdict(unanswered: 12)
        // The probes' checks: the notifications acknowledged are decided as they come.
        let all = verdict.tallies.filter { Invariant.probed.contains($0.key) }.values.reduce(0) {
            $0 + $1.passed + $1.unknown
        }
        // Refunds that got no answer: 7 of revocation-honored's 30 checks, 7 of 180 in all.
        let refunds = try #require(verdict.tallies[.revocationHonored])
        #expect((refunds.passed, refunds.unknown) == (23, 7))
        #expect(all == 180)
        #expect(verdict.outcome == .unknown)
        #expect(
            verdict.reason
                == "revocation-honored: 7 of 30 checks could not decide (more than 20% of that invariant's)"
        )
        #expect(verdict.unknownSamples.first == verdict.reason)
    }

    /// A fifth of an invariant's checks undecided is what a verdict tolerates of all checks: still a pass.
    @Test func aFifthOfAnInvariantUndecidedLeavesAPass() throws {
        let verdict = try verdict(unanswered: 10)
        let refunds = try #require(verdict.tallies[.revocationHonored])
        #expect((refunds.passed, refunds.unknown) == (24, 6))
        #expect(verdict.outcome == .pass, "\(verdict.reason ?? "")")
    }

    @Test func mostUndecidedInvariantIsNamedWithHowManyOthers() {
        let reason = Checker.undecidedInvariantReason(
            [
                (name: "no-double-grant", passed: 100, unknown: 0),
                (name: "subscription-state", passed: 10, unknown: 10),
                (name: "no-lost-purchase", passed: 5, unknown: 15),
            ],
            above: 0.2
        )
        #expect(
            reason == "no-lost-purchase: 15 of 20 checks could not decide (more than 20% of that invariant's), "
                + "and 1 other invariant likewise"
        )
        #expect(Checker.undecidedInvariantReason([(name: "a", passed: 20, unknown: 5)], above: 0.2) == nil)
        // A few undecided checks are not a weak invariant, whatever their share of a small tally.
        let floor = Checker.undecidedFloorPerInvariant
        #expect(Checker.undecidedInvariantReason([(name: "a", passed: 1, unknown: floor - 1)], above: 0.2) == nil)
        #expect(Checker.undecidedInvariantReason([(name: "a", passed: 1, unknown: floor)], above: 0.2) != nil)
    }
}
