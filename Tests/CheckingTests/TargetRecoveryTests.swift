import Chaos
import Checking
import Foundation
import Profile
import Simulation
import Testing

/// target-recovers: every planned restart happens and the target answers again, and at the end of the run.
struct TargetRecoveryTests {
    static func checker() throws -> Checker {
        Checker(profile: try checkingProfile(), startMillis: start)
    }

    @Test func aRestartThatCameBackAndAnAnsweringTargetPass() throws {
        let checker = try Self.checker()
        checker.restartPlayed(index: 0, of: 1, plannedAt: 3, at: 4.2, failure: nil, log: [])
        checker.targetAtEnd(at: 30, failure: nil, log: [])
        let verdict = checker.verdict(unchecked: [])
        #expect(verdict.tallies[.targetRecovers]?.passed == 2)
        #expect(verdict.tallies[.targetRecovers]?.failed == 0)
        #expect(verdict.violationCount == 0)
    }

    @Test func aRestartThatDidNotHappenFailsWithItsLogAsWitness() throws {
        let checker = try Self.checker()
        checker.restartPlayed(
            index: 1,
            of: 2,
            plannedAt: 12,
            at: 12.5,
            failure: "the start command 'start.sh' exited 4 (output in restart.log)",
            log: ["starting server", "error: port in use"]
        )
        let verdict = checker.verdict(unchecked: [])
        #expect(verdict.outcome == .fail)
        #expect(verdict.tallies[.targetRecovers]?.failed == 1)
        let witness = try #require(verdict.violations.first)
        #expect(witness.invariant == .targetRecovers)
        #expect(witness.account == "")
        #expect(witness.summary.hasPrefix("planned restart 2 of 2 (at t=12.000s) did not complete: the start command"))
        #expect(witness.entries.map(\.sentence) == ["restart.log: starting server", "restart.log: error: port in use"])
        #expect(witness.prose.contains("The target: planned restart 2 of 2"))
    }

    /// The deliveries that found the target gone are its witness: when it last answered, how many could not
    /// reach it since.
    @Test func aTargetDownAtTheEndFailsWithWhenItLastAnswered() throws {
        let profile = try checkingProfile()
        let checker = Checker(profile: profile, startMillis: start)
        let planned = Array(ChaosStream(World(profile: profile, startMillis: start), profile: profile).prefix(40))
            .filter(\.sends)
        for (i, delivery) in planned.enumerated() {
            checker.sent(delivery, at: delivery.at)
            let outcome: DeliveryOutcome =
                i < 10 ? .acknowledged(status: 200) : .notSent(reason: "refused: connection refused")
            checker.record(delivery, outcome: outcome, at: delivery.at)
        }
        checker.targetAtEnd(at: 50, failure: "refused: connection refused", log: ["fatal: cannot open database"])
        let verdict = checker.verdict(unchecked: [])
        #expect(verdict.outcome == .fail)
        let witness = try #require(verdict.violations.first { $0.invariant == .targetRecovers })
        #expect(witness.summary == "the target was unreachable at the end of the run: refused: connection refused")
        let sentences = witness.entries.map(\.sentence)
        #expect(sentences.first == "the target answered a delivery for the last time")
        #expect(witness.entries.first?.at == planned[9].at)
        #expect(
            sentences.contains { $0.hasPrefix("\(planned.count - 10) deliveries since could not reach the target") }
        )
        #expect(sentences.last == "restart.log: fatal: cannot open database")
    }

    /// A final probe that failed leaves the probed invariants unknown, not target-recovers.
    @Test func aFailedProbeLeavesTargetRecoversAlone() throws {
        let checker = try Self.checker()
        checker.probeFailed(account: "A", error: ProbeError.transport("refused"), at: 10, final: true)
        #expect(checker.verdict(unchecked: []).tallies[.targetRecovers] == nil)
        let unchecked = Checker.unchecked(target: try checkingProfile().target, probeReturnsGrants: true)
        #expect(!unchecked.contains { $0.invariant == .targetRecovers })
    }
}
