import AppStoreModel
import Chaos
import Checking
import Foundation
import Profile
import Simulation
import Testing

/// no-lost-notification: a genuine notification of any type the target refuses until the App Store gives up.
struct LostNotificationTests {
    /// A played run's first genuine `REFUND_REVERSED`, its checker with everything before it acknowledged, and
    /// the App Store's policy.
    static func reversal() throws -> (Checker, PlannedDelivery, ChaosPolicy) {
        let profile = try checkingProfile()
        let planned = Array(ChaosStream(World(profile: profile, startMillis: start), profile: profile))
        let found = planned.first { delivery in
            guard !delivery.isForged, case .notification(let note) = delivery.action.delivery else { return false }
            return "\(note.notificationType)" == "REFUND_REVERSED"
        }
        let reversal = try #require(found)
        let checker = Checker(profile: profile, startMillis: start)
        for delivery in planned where delivery.at < reversal.at || delivery.id == reversal.id {
            checker.sent(delivery, at: delivery.at)
            if delivery.sends && delivery.id != reversal.id {
                checker.record(delivery, outcome: .acknowledged(status: 200), at: delivery.at)
            }
        }
        return (checker, reversal, ChaosPolicy(profile: profile))
    }

    /// Answers `delivery` and each App Store retry of it with what `answer` says for that attempt (0-based),
    /// until an answer is not followed by a retry. Returns how many attempts were made.
    @discardableResult
    static func attempts(
        _ delivery: PlannedDelivery,
        _ checker: Checker,
        _ policy: ChaosPolicy,
        answer: (Int) -> DeliveryOutcome
    ) -> Int {
        var current: PlannedDelivery? = delivery
        var count = 0
        while let attempt = current {
            let outcome = answer(count)
            if count > 0 { checker.sent(attempt, at: attempt.at) }
            checker.record(attempt, outcome: outcome, at: attempt.at)
            count += 1
            current = policy.followUps(after: attempt, outcome: outcome, at: attempt.at).first { $0.copy == .retry }
        }
        return count
    }

    @Test func aNotificationRefusedOnEveryAttemptIsLost() throws {
        let (checker, reversal, policy) = try Self.reversal()
        let count = Self.attempts(reversal, checker, policy) { _ in .rejected(status: 500) }
        #expect(count == 6)
        let verdict = checker.verdict(unchecked: [])
        #expect(verdict.outcome == .fail)
        #expect(verdict.tallies[.noLostNotification]?.failed == 1)
        #expect(verdict.lostNotifications == ["REFUND_REVERSED": 1])
        let witness = try #require(verdict.violations.first { $0.invariant == .noLostNotification })
        #expect(witness.account == reversal.action.appAccountToken)
        #expect(witness.summary.hasPrefix("the target refused genuine notification REFUND_REVERSED of transaction"))
        #expect(witness.summary.contains("(attempt 6, 6 refused)"))
        #expect(witness.entries.count == 6)
        #expect(witness.entries.allSatisfy { $0.sentence.contains("was rejected with 500") })
    }

    @Test func aNotificationAcknowledgedOnARetryIsNotLost() throws {
        let (checker, reversal, policy) = try Self.reversal()
        let count = Self.attempts(reversal, checker, policy) {
            $0 < 3 ? .rejected(status: 503) : .acknowledged(status: 200)
        }
        #expect(count == 4)
        let verdict = checker.verdict(unchecked: [])
        #expect(verdict.tallies[.noLostNotification]?.failed ?? 0 == 0)
        #expect(verdict.lostNotifications.isEmpty)
    }

    /// "Retry later" is a refusal to the App Store: it keeps its own schedule.
    @Test func aNotificationDeferredOnEveryAttemptIsLost() throws {
        let (checker, reversal, policy) = try Self.reversal()
        Self.attempts(reversal, checker, policy) { _ in .deferred(status: 429) }
        #expect(checker.verdict(unchecked: []).tallies[.noLostNotification]?.failed == 1)
    }

    /// A last attempt that got no answer may have been committed: nothing is decided.
    @Test func aLastAttemptWithoutAnAnswerDecidesNothing() throws {
        let (checker, reversal, policy) = try Self.reversal()
        var last = reversal
        var current: PlannedDelivery? = reversal
        while let attempt = current {
            last = attempt
            current = policy.followUps(after: attempt, outcome: .rejected(status: 500), at: attempt.at).first {
                $0.copy == .retry
            }
        }
        Self.attempts(reversal, checker, policy) { attempt in
            attempt == last.attempt ? .indeterminate(reason: "timeout") : .rejected(status: 500)
        }
        #expect(checker.verdict(unchecked: []).tallies[.noLostNotification]?.failed ?? 0 == 0)
    }

    /// Two copies of one notification (a duplicate and its original), each refused until the App Store gave up:
    /// one notification lost.
    @Test func copiesOfOneLostNotificationCountOnce() throws {
        let (checker, reversal, policy) = try Self.reversal()
        Self.attempts(reversal, checker, policy) { _ in .rejected(status: 500) }
        var duplicate = reversal
        duplicate.id = ChaosPolicy.followUpID(of: reversal.id, 9)
        duplicate.copy = .delayedDuplicate
        checker.sent(duplicate, at: duplicate.at)
        Self.attempts(duplicate, checker, policy) { _ in .rejected(status: 500) }
        let verdict = checker.verdict(unchecked: [])
        #expect(verdict.tallies[.noLostNotification]?.failed == 1)
        #expect(verdict.lostNotifications == ["REFUND_REVERSED": 1])
        #expect(verdict.violations.first { $0.invariant == .noLostNotification }?.sightings == 2)
    }
}
