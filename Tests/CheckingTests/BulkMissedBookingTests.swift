import Chaos
import Checking
import Foundation
import Profile
import Simulation
import Testing

/// Shed deliveries booked in bulk (``Checker/bookMissed(_:reason:)``, what an overloaded run does) are judged
/// exactly as when each is booked dispatched and then missed by the harness, one at a time.
struct BulkMissedBookingTests {
    /// What a check decided, without its witness (whose trail leaves out deliveries booked in bulk).
    enum Decision: Hashable {
        case pass, fail
        case unknown(String)
    }

    /// Plays a run in which every third delivery that sends is shed and every seventh of the others is rejected,
    /// into one checker booking the shed ones one at a time and another booking each run of them in bulk.
    static func play(_ profile: Profile) -> (single: Checker, bulk: Checker, ideal: IdealTarget, shed: Int) {
        let single = Checker(profile: profile, startMillis: start)
        let bulk = Checker(profile: profile, startMillis: start)
        var ideal = IdealTarget()
        let planned = Array(ChaosStream(World(profile: profile, startMillis: start), profile: profile))
        let reason = "missed: minting fell behind"
        var run: [PlannedDelivery] = []
        var shed = 0
        for (index, delivery) in planned.enumerated() {
            if delivery.sends && index % 3 == 0 {
                single.sent(delivery, at: delivery.at)
                single.record(delivery, outcome: .notSent(reason: reason, harnessLimited: true), at: delivery.at)
                run.append(delivery)
                shed += 1
                continue
            }
            bulk.bookMissed(run[...], reason: reason)
            run.removeAll()
            let outcome: DeliveryOutcome = index % 7 == 0 ? .rejected(status: 500) : .acknowledged(status: 200)
            if outcome.isAcknowledged { ideal.apply(delivery) }
            for checker in [single, bulk] {
                checker.sent(delivery, at: delivery.at)
                if delivery.sends { checker.record(delivery, outcome: outcome, at: delivery.at + 0.01) }
            }
        }
        bulk.bookMissed(run[...], reason: reason)
        return (single, bulk, ideal, shed)
    }

    static func decisions(_ results: [CheckResult]) -> [Invariant: Decision] {
        var decided: [Invariant: Decision] = [:]
        for result in results {
            switch result.outcome {
            case .pass: decided[result.invariant] = .pass
            case .fail: decided[result.invariant] = .fail
            case .unknown(let reason): decided[result.invariant] = .unknown(reason)
            }
        }
        return decided
    }

    @Test(arguments: [UInt64(5), 6, 7])
    func shedDeliveriesBookedInBulkAreJudgedAsWhenBookedOneByOne(seed: UInt64) throws {
        let profile = try checkingProfile(seed: seed)
        let (single, bulk, ideal, shed) = Self.play(profile)
        try #require(shed > 50)
        let accounts = single.knownAccounts()
        #expect(bulk.knownAccounts() == accounts)
        // A correct target's state and an empty one (which shows lost purchases), both judged the same way.
        for t in [30.0, 50.0] {
            for account in accounts {
                for state in [ideal.state(account, at: t), AccountState()] {
                    let one = Self.decisions(single.check(account: account, state: state, at: t, final: t > 40))
                    let many = Self.decisions(bulk.check(account: account, state: state, at: t, final: t > 40))
                    #expect(one == many, "\(account) at \(t) s")
                }
            }
        }
        let verdicts = (single.verdict(unchecked: []), bulk.verdict(unchecked: []))
        #expect(verdicts.0.outcome == verdicts.1.outcome)
        #expect(verdicts.0.tallies == verdicts.1.tallies)
        #expect(verdicts.0.violationCount == verdicts.1.violationCount)
        // The empty state does break invariants: the comparison covers failures, not only passes.
        #expect(verdicts.0.violationCount > 0)
    }
}
