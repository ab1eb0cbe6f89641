import AppStoreModel
import Chaos
import Profile
import Simulation

/// How the oracle books a delivery's answer: what the target acknowledged, rejected or left unanswered.
extension Checker {
    /// Applies the outcome of a dispatched delivery to its account's book; `entry` (nil in bulk) goes into the
    /// trail, and `sentence` is made only for a refused notification's witness.
    func answer(
        _ delivery: PlannedDelivery,
        outcome: DeliveryOutcome,
        continues: Bool,
        notification: NotificationFate?,
        entry: LogEntry?,
        sentence: () -> String,
        at t: Double,
        in state: inout OracleState
    ) {
        let truth = delivery.action.truth
        let limit = options.entriesPerTransaction
        var isDevice = false
        switch delivery.action.delivery {
        case .device, .report: isDevice = true
        case .notification, .marker: break
        }
        let neverAttempted = isDevice && !devicesReachable
        // The App Store keeps its own schedule whatever a webhook's answer asks: "retry later" is a refusal to it.
        let outcome = isDevice ? outcome : outcome.refusingDeferral
        if !delivery.isForged, truth.kind != .pending, truth.kind != .none, !neverAttempted {
            state.tallyGenuine(outcome)
        }
        if let notification { noteNotification(delivery, fate: notification, sentence: sentence, at: t, in: &state) }
        // Taken out of the books while it changes (see `dispatch`); an account never dispatched has none.
        guard let slot = state.books.position(of: delivery.action.appAccountToken, index: delivery.action.account)
        else { return }
        var book = state.books.take(at: slot)
        defer { state.books.putBack(&book, at: slot) }
        let awaitsClaim = awaitsClaim(delivery, outcome: outcome, book: &book)
        if outcome.isAcknowledged, !delivery.isForged {
            noteAcknowledged(delivery, at: t, book: &book, state: &state)
        }
        guard let id = truth.transactionId else { return }
        let key = RecordKey(id)
        guard let position = book.txs.position(of: key) else {
            // A folded transaction: an acknowledged late copy means it was accepted after all.
            if outcome.isAcknowledged, let number = key.value { book.accepted(number) }
            return
        }
        var tx = book.txs[at: position]
        defer { book.txs[at: position] = tx }
        // An acknowledgment that owes nothing yet is no purchase's acknowledgment: it keeps out of the decisive part.
        let part = awaitsClaim ? Part.recent : Part.answering(truth.kind, outcome, forged: delivery.isForged)
        tx.trail.note(entry, as: part, limit: limit)
        if delivery.isForged {
            tx.noteForgedAnswer(outcome, claim: delivery.forgery == Faults.bareProductIDForgery)
        } else {
            noteGenuineAnswer(
                truth,
                outcome,
                continues: continues,
                neverAttempted: neverAttempted,
                awaitsClaim: awaitsClaim,
                at: t,
                to: &tx
            )
        }
    }

    /// Whether acknowledging `delivery` leaves its purchase not yet owed: a notification of a purchase minted
    /// without `appAccountToken` whose series no device of the account has claimed, since only the device's post
    /// can tell a target whose it is. A device's acknowledged post of such a purchase claims its series.
    private func awaitsClaim(_ delivery: PlannedDelivery, outcome: DeliveryOutcome, book: inout AccountBook) -> Bool {
        guard !delivery.isForged, let original = delivery.action.truth.originalTransactionId else { return false }
        switch delivery.action.delivery {
        case .device(let device):
            if outcome.isAcknowledged, device.transaction.payload.appAccountToken == nil {
                book.claimed.insert(original)
            }
            return false
        case .notification(let note):
            guard let transaction = note.transaction, transaction.payload.appAccountToken == nil else { return false }
            return !book.claimed.contains(original)
        case .report, .marker:
            return false
        }
    }

    /// An acknowledged genuine delivery: when the account (and the subscription series it names) last had
    /// something acknowledged, and whether the change opens a safety window.
    private func noteAcknowledged(
        _ delivery: PlannedDelivery,
        at t: Double,
        book: inout AccountBook,
        state: inout OracleState
    ) {
        // A window opens once the target took the change (a delivery can wait seconds for a connection).
        if changesSubscriptionState(delivery), followsWindows(delivery.action.appAccountToken) {
            state.mark(delivery.action.appAccountToken)
        }
        let millis = Int64((t * 1000).rounded(.up))
        book.lastAcknowledged = max(book.lastAcknowledged, millis)
        if book.firstUnread == 0 { book.firstUnread = millis }
        if let original = delivery.action.truth.originalTransactionId,
            let position = book.subs.position(of: RecordKey(original))
        {
            book.subs[at: position].lastAcknowledged = max(book.subs[at: position].lastAcknowledged, millis)
        }
    }

    /// A genuine delivery's answer on its kept transaction: the expiry it acknowledged, and the answer itself
    /// weighed against a reversal of the transaction's refund.
    private func noteGenuineAnswer(
        _ truth: Truth,
        _ outcome: DeliveryOutcome,
        continues: Bool,
        neverAttempted: Bool,
        awaitsClaim: Bool,
        at t: Double,
        to tx: inout OracleTransaction
    ) {
        // A purchase signed before a reversal the books hold carries the purchase, not the reversal: a target
        // that took the refund first rightly keeps the purchase refunded until the reversal reaches it. A
        // refund signed before it is the one the reversal undid, not a later refund the books hold.
        let predatesReversal =
            (truth.kind == .grant || truth.kind == .revoke) && truth.effectiveDate < tx.reinstatedDate
        // Data of the transaction signed after a reversal the target has not acknowledged (a
        // `RENEWAL_EXTENDED` after a dropped `REFUND_REVERSED`): a target may rightly keep the refund.
        // Likewise a purchase (or its reversal) no device has claimed: the target cannot yet know whose it is.
        let awaitsReversal =
            truth.kind == .grant && tx.reinstatedDate > 0 && tx.revokedDate > 0 && !tx.reversalAcked || awaitsClaim
        // Whatever carries the transaction (a purchase, a status or renewal preference change, an offer, a
        // refund or its reversal) tells the target the expiry signed in it, and no later one.
        if outcome.isAcknowledged, truth.kind != .pending, let expiry = truth.expiresDate {
            let acknowledges =
                (truth.kind == .grant || truth.kind == .reinstate) && !predatesReversal && !awaitsReversal
            tx.noteAcknowledged(expiry: expiry, acknowledgingTransaction: acknowledges)
        }
        tx.noteAnswer(
            truth.kind,
            outcome,
            continues: continues,
            neverAttempted: neverAttempted,
            predatesReversal: predatesReversal,
            awaitsReversal: awaitsReversal,
            at: t
        )
        if truth.kind == .reinstate, outcome.isAcknowledged, truth.effectiveDate >= tx.reinstatedDate {
            tx.reversalAcked = true
        }
    }
}

extension OracleState {
    /// Counts a genuine delivery's answer, for the run's totals.
    mutating func tallyGenuine(_ outcome: DeliveryOutcome) {
        genuineDispatched += 1
        switch outcome {
        case .acknowledged: genuineAcknowledged += 1
        case .rejected, .deferred: genuineRejected += 1
        case .indeterminate, .notSent: break
        }
    }
}

extension DeliveryOutcome {
    /// The answer as the App Store takes it: "retry later" is a refusal like any other.
    var refusingDeferral: DeliveryOutcome {
        if case .deferred(let status) = self { .rejected(status: status) } else { self }
    }
}

extension Part {
    /// The part of a trail an answer is kept under: answers to a purchase (or to a forged copy) are the
    /// decisive ones, kept apart from the rest.
    static func answering(_ kind: Truth.Kind, _ outcome: DeliveryOutcome, forged: Bool) -> Part {
        if kind == .revoke && !forged { return .refund }
        guard kind == .grant || kind == .reinstate || forged else { return .recent }
        switch outcome {
        case .acknowledged: return .acks
        case .rejected, .deferred: return .rejections
        case .indeterminate, .notSent: return .recent
        }
    }
}

extension OracleTransaction {
    /// A forged copy's answer: a refusal (4xx) credited nothing, and so did an answer read as "already had it"
    /// (the target says it granted nothing); a server error may have come after a commit. `claim`: the forgery
    /// went as a device report, which a correct target may acknowledge.
    mutating func noteForgedAnswer(_ outcome: DeliveryOutcome, claim: Bool) {
        switch outcome {
        case .acknowledged(_, alreadyHad: true): break
        case .acknowledged:
            forgeryMayCount = true
            if !claim { forgeryAcknowledged = true }
        case .indeterminate: forgeryMayCount = true
        case .rejected(let status): if status >= 500 { forgeryMayCount = true }
        case .deferred, .notSent: break
        }
    }

    /// A genuine delivery's answer. `continues`: a retry or redelivery of the same attempt chain follows;
    /// `neverAttempted`: the run sent no device traffic at all; `predatesReversal`: a purchase or a refund
    /// signed before the transaction's refund was reversed, whose acknowledgment neither makes it owed again
    /// (the reversal's does) nor makes a later refund stand (that refund's does).
    mutating func noteAnswer(
        _ kind: Truth.Kind,
        _ outcome: DeliveryOutcome,
        continues: Bool,
        neverAttempted: Bool,
        predatesReversal: Bool = false,
        awaitsReversal: Bool = false,
        at t: Double
    ) {
        let acked = outcome.isAcknowledged
        switch kind {
        case .grant, .reinstate:
            if acked {
                if !predatesReversal && !awaitsReversal { self.acked = true }
                accepted = true
            }
            if case .notSent = outcome {} else { reached = true }
            switch outcome {
            case .acknowledged(_, let alreadyHad):
                // Taken again after its refund, as far as the answer tells: a target that says "already had
                // it" did not grant it anew.
                if kind == .grant && revoked && revocationAcked && !alreadyHad {
                    regrantedMillis = Int64((t * 1000).rounded(.up))
                }
            case .rejected(let status):
                if kind == .grant {
                    rejected += 1
                    lastRejection = status
                }
            // "Not now" from the device's endpoint refuses nothing: the device delivers it again, after the run
            // if need be.
            case .deferred: if kind == .grant && !continues { held = true }
            case .indeterminate: indeterminate = true
            // A refused attempt that is retried tells nothing: the retries decide.
            case .notSent: if !neverAttempted && kind == .grant && !continues { held = true }
            }
            // Each chain ends once: at the answer of its last attempt.
            if !continues { chains = max(0, chains - 1) }
        case .revoke:
            if acked && !revocationAcked && !predatesReversal {
                revocationAcked = true
                // Rounded up: a probe that asked in the same millisecond may not have seen the refund yet.
                revocationAckedMillis = Int64((t * 1000).rounded(.up))
            }
            if case .indeterminate = outcome { revocationIndeterminate = true }
        case .subscriptionStatus, .pending, .none:
            // A notification that carries the transaction (a `CONSUMPTION_REQUEST`, a status change) reached the
            // target with its signed transaction info, which a target may credit.
            if case .notSent = outcome {} else { reached = true }
        }
    }
}

extension Trail {
    /// Notes an entry, if there is one (deliveries booked in bulk have none).
    mutating func note(_ entry: LogEntry?, as part: Part, limit: Int) {
        if let entry { note(entry, as: part, limit: limit) }
    }
}
