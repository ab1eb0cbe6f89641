import Checking
import Foundation
import Profile
import Simulation
import Testing

/// A violation is one (invariant, account, transaction or product): the probes that see it again add to its
/// witness, not to the count.
struct CountOnceTests {
    /// An account of a played run with at least two granted transactions, its ideal state at `t`, and the run.
    static func accountWithGrants() throws -> (Checker, String, AccountState, Double) {
        let (checker, ideal, _) = play(try checkingProfile())
        let t = try checkingProfile().durationSeconds + 7
        let found = checker.knownAccounts().lazy.map { ($0, ideal.state($0, at: t)) }.first {
            ($0.1.grants ?? []).count >= 2
        }
        let (token, state) = try #require(found)
        return (checker, token, state, t)
    }

    @Test func aDoubleGrantSeenByThreeProbesCountsOnce() throws {
        let (checker, token, ideal, t) = try Self.accountWithGrants()
        var state = ideal
        state.grants![state.grants!.count - 1].count = 2
        for round in 0..<3 {
            let results = checker.check(account: token, state: state, at: t + Double(round), final: round == 2)
            #expect(failures(results).contains(.noDoubleGrant))
        }
        let verdict = checker.verdict(unchecked: [])
        #expect(verdict.violationCount == 1)
        #expect(verdict.tallies[.noDoubleGrant]?.failed == 1)
        let witness = try #require(verdict.violations.first)
        #expect(verdict.violations.count == 1)
        #expect(witness.at == t)
        #expect(witness.sightings == 3)
        #expect(witness.lastSeenAt == t + 2)
        #expect(witness.prose.contains("seen again by 2 later probes, the last at t=\(Int(t) + 2).000s"))
    }

    @Test func anotherTransactionDoubleGrantedIsAnotherViolation() throws {
        let (checker, token, ideal, t) = try Self.accountWithGrants()
        var first = ideal
        first.grants![first.grants!.count - 1].count = 2
        checker.check(account: token, state: first, at: t, final: false)
        var second = ideal
        second.grants![second.grants!.count - 2].count = 3
        checker.check(account: token, state: second, at: t + 1, final: false)
        let verdict = checker.verdict(unchecked: [])
        #expect(verdict.violationCount == 2)
        #expect(verdict.tallies[.noDoubleGrant]?.failed == 2)
        #expect(verdict.violations.allSatisfy { $0.sightings == 1 && $0.lastSeenAt == nil })
    }

    @Test func aViolationPastTheWitnessLimitStillCountsOnce() throws {
        var options = Checker.Options()
        options.maxWitnesses = 0
        let profile = try checkingProfile()
        let checker = Checker(profile: profile, startMillis: start, options: options)
        let state = AccountState(grants: [.init(transactionId: "999", count: 1)])
        for round in 0..<3 { checker.check(account: "A", state: state, at: Double(round), final: false) }
        let verdict = checker.verdict(unchecked: [])
        #expect(verdict.violationCount == 1)
        #expect(verdict.violations.isEmpty)
        #expect(checker.liveTallies().violations == 1)
    }
}
