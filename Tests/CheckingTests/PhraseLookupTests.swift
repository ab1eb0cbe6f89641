import Chaos
import Profile
import Simulation
import Synchronization
import Testing

@testable import Checking

/// The oracle looks most history phrases up by what they depend on (``PhraseKey``) instead of writing them for
/// every delivery: the phrase table it builds is the one writing each phrase would build, in the same order.
struct PhraseLookupTests {
    /// Books every delivery of a faulty stream (dispatched, then answered in turn 200, 409 "already had it", 500,
    /// 503 and no answer) and lists the phrases writing each one would have interned, in order.
    static func play(_ profile: Profile) -> (checker: Checker, written: [String]) {
        let checker = Checker(profile: profile, startMillis: start)
        var written: [String] = []
        var known: Set<String> = []
        let outcomes: [DeliveryOutcome] = [
            .acknowledged(status: 200), .acknowledged(status: 409, alreadyHad: true), .rejected(status: 500),
            .deferred(status: 503), .indeterminate(reason: "timed out"),
        ]
        let planned = Array(ChaosStream(World(profile: profile, startMillis: start), profile: profile))
        for (index, delivery) in planned.enumerated() {
            checker.sent(delivery, at: delivery.at)
            written.append(checker.describe(delivery) + checker.dispatched(delivery))
            known.insert(delivery.action.appAccountToken)
            guard delivery.sends else { continue }
            let outcome = outcomes[index % outcomes.count]
            checker.record(delivery, outcome: outcome, at: delivery.at + 0.01)
            written.append(checker.describe(delivery) + " " + checker.describe(outcome))
        }
        var seen: Set<String> = []
        return (checker, written.filter { seen.insert($0).inserted })
    }

    @Test(arguments: [UInt64(5), 6])
    func phrasesLookedUpAreTheOnesWrittenInTheSameOrder(seed: UInt64) throws {
        let profile = try checkingProfile(
            faults: """
                { forgery: { probability: 0.2 }, askToBuy: { probability: 0.2, pendingSeconds: 2 },
                  duplicate: { probability: 0.2, afterSuccess: 0.3, concurrent: 0.3 },
                  lostResponse: { probability: 0.05 } }
                """,
            seed: seed
        )
        let (checker, written) = Self.play(profile)
        let interned = checker.state.withLock { $0.phrases }
        try #require(written.count > 20)
        #expect(interned == written)
    }
}
