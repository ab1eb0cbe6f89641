import AppStoreModel
import Chaos
import Simulation
import TargetContract

// The App Store needs a 2xx for every notification it sends, whatever its type: one that grants nothing (a mass
// extension's `RENEWAL_EXTENSION`/`SUMMARY`, a `CONSUMPTION_REQUEST`, a `DID_CHANGE_RENEWAL_PREF`) still needs an
// acknowledgment, or Apple retries it and, after its last attempt, gives up: the backend lost it. That is known
// when the last attempt is answered, so no probe is needed: the target's own refusals prove it.

/// What became of one attempt of a genuine notification.
enum NotificationFate: Sendable, Equatable {
    case acknowledged
    /// Refused, and the App Store tries it again.
    case refusedForNow
    /// Refused on the App Store's last attempt: lost.
    case lost
    /// No answer, or never sent: whether the target has it is unknown.
    case undecided
}

/// A genuine notification's refused attempts so far, while the App Store still retries it.
struct RefusedAttempts: Sendable {
    /// The first few refusals, oldest first, and how many there were in all.
    var entries: [WitnessEntry] = []
    var count = 0

    /// Most entries kept: Apple's schedule has six attempts.
    static let kept = 6

    mutating func note(_ entry: WitnessEntry) {
        count += 1
        if entries.count < Self.kept { entries.append(entry) }
    }
}

extension Checker {
    /// The fate of an attempt of a genuine webhook notification; nil for any other delivery.
    func notificationFate(_ delivery: PlannedDelivery, outcome: DeliveryOutcome, at t: Double) -> NotificationFate? {
        guard !delivery.isForged, case .notification = delivery.action.delivery else { return nil }
        if outcome.isAcknowledged { return .acknowledged }
        // The App Store keeps its own schedule whatever the answer asks: "retry later" refuses it too.
        guard case .rejected = outcome.refusingDeferral else { return .undecided }
        return isTriedAgain(delivery, after: outcome, at: t) ? .refusedForNow : .lost
    }

    /// Books an attempt of a genuine notification: an acknowledgment is a check held, a refusal on the App Store's
    /// last attempt a violation of no-lost-notification (one per notification, whatever its copies), with the
    /// refused attempts as its witness.
    func noteNotification(
        _ delivery: PlannedDelivery,
        fate: NotificationFate,
        sentence: () -> String,
        at t: Double,
        in state: inout OracleState
    ) {
        let event = delivery.action.event
        switch fate {
        case .acknowledged:
            state.tallies[.noLostNotification, default: Tally()].passed += 1
            state.refusedNotifications[event] = nil
        case .undecided:
            break
        case .refusedForNow:
            state.refusedNotifications[event, default: RefusedAttempts()].note(entry(delivery, sentence(), at: t))
        case .lost:
            var attempts = state.refusedNotifications.removeValue(forKey: event) ?? RefusedAttempts()
            attempts.note(entry(delivery, sentence(), at: t))
            bookLost(delivery, attempts: attempts, at: t, in: &state)
        }
    }

    private func entry(_ delivery: PlannedDelivery, _ sentence: String, at t: Double) -> WitnessEntry {
        WitnessEntry(
            at: t,
            delivery: delivery.id,
            transactionId: delivery.action.truth.transactionId,
            sentence: "delivery \(delivery.id): " + sentence
        )
    }

    private func bookLost(
        _ delivery: PlannedDelivery,
        attempts: RefusedAttempts,
        at t: Double,
        in state: inout OracleState
    ) {
        guard case .notification(let note) = delivery.action.delivery else { return }
        let type = "\(note.notificationType)" + (note.payload.subtype.map { "/\($0)" } ?? "")
        let chain = delivery.attempt + 1
        let about = delivery.action.truth.transactionId.map { " of transaction \($0)" } ?? ""
        let witness = Witness(
            invariant: .noLostNotification,
            account: delivery.action.appAccountToken,
            at: t,
            summary: "the target refused genuine notification \(type)\(about) on the App Store's last attempt "
                + "(attempt \(chain), \(attempts.count) refused), so the App Store gave up on it",
            entries: attempts.entries,
            proof: "the App Store's retry schedule has no attempt after the one refused at t=\(format(t))s",
            observed: AccountState(),
            seed: seed
        )
        let key = ViolationKey(
            invariant: .noLostNotification,
            account: delivery.action.appAccountToken,
            subject: .notification(delivery.action.event)
        )
        let before = state.violationCount
        _ = state.book(witness, key: key, limit: options.maxWitnesses)
        if state.violationCount > before { state.lostNotifications[type, default: 0] += 1 }
    }
}
