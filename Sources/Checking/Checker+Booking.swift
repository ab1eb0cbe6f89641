public import Chaos
import Profile
import Simulation
import Synchronization

/// How the oracle books dispatches and answers: one delivery at a time with its sentence in the trail
/// (``Checker/sent(_:at:)``, ``Checker/record(_:outcome:at:)``), or a run's shed deliveries in bulk
/// (``Checker/bookMissed(_:reason:)``), which leaves them out of the trails.
extension Checker {
    /// Books deliveries the harness shed (never sent: it was behind its schedule) as dispatched and then not
    /// sent, harness-limited, exactly as ``sent(_:at:)`` followed by ``record(_:outcome:at:)`` would judge them,
    /// under one lock and without a sentence or a trail entry each: an overloaded run sheds tens of thousands a
    /// second, and what each account is owed needs every one of them. The judgement is the same (a purchase
    /// whose copies were shed is not judged lost); only witnesses no longer cite the shed copies.
    /// - Parameters:
    ///   - deliveries: the shed deliveries, in the order they were due; each is booked at its intended time.
    ///   - reason: why they were not sent (one string for all).
    public func bookMissed(_ deliveries: ArraySlice<PlannedDelivery>, reason: String) {
        let outcome = DeliveryOutcome.notSent(reason: reason, harnessLimited: true)
        state.withLock { state in
            for delivery in deliveries {
                let sentence = { self.describe(delivery) + (delivery.sends ? " was dispatched" : " happened") }
                dispatch(delivery, entry: nil, sentence: sentence, at: delivery.at, in: &state)
                answer(
                    delivery,
                    outcome: outcome,
                    continues: continuesChain(delivery, outcome: outcome, at: delivery.at),
                    notification: notificationFate(delivery, outcome: outcome, at: delivery.at),
                    entry: nil,
                    sentence: { self.describe(delivery) + " " + self.describe(outcome) },
                    at: delivery.at,
                    in: &state
                )
            }
        }
    }

    /// Whether the App Store or the device will try this delivery again (also after a refused connection):
    /// until the last attempt is answered, a rejection is not final.
    func continuesChain(_ delivery: PlannedDelivery, outcome: DeliveryOutcome, at t: Double) -> Bool {
        let kind = delivery.action.truth.kind
        return !delivery.isForged && (kind == .grant || kind == .reinstate)
            && isTriedAgain(delivery, after: outcome, at: t)
    }

    /// Whether the chaos policy follows this answer with a retry or a redelivery of the same delivery.
    func isTriedAgain(_ delivery: PlannedDelivery, after outcome: DeliveryOutcome, at t: Double) -> Bool {
        policy.followUps(after: delivery, outcome: outcome, at: t).contains {
            $0.copy == .retry || $0.copy == .redelivery
        }
    }

    /// Applies a dispatched delivery's truth to its account's book; `entry` (nil in bulk) goes into the trail,
    /// and `sentence` is made only for an Ask to Buy's witness.
    func dispatch(
        _ delivery: PlannedDelivery,
        entry: LogEntry?,
        sentence: () -> String,
        at t: Double,
        in state: inout OracleState
    ) {
        let action = delivery.action
        let truth = action.truth
        let limit = options.entriesPerTransaction
        let foldAbove = options.foldAbove
        // Retries and redeliveries continue the attempt chain of the delivery they follow; any other copy starts
        // its own chain (see `OracleTransaction.chains`).
        let startsChain = delivery.sends && delivery.copy != .retry && delivery.copy != .redelivery
        // Taken out of the dictionary while it changes, so that its tables are changed in place, not copied.
        var book = state.books.removeValue(forKey: action.appAccountToken) ?? AccountBook()
        book.latest = max(book.latest, truth.effectiveDate)
        defer {
            if book.txs.count > foldAbove {
                book.fold(keep: foldAbove / 2, now: Int64((t * 1000).rounded()), refundsSettle: refundsSettle)
            }
            state.books[action.appAccountToken] = book
        }
        if delivery.isForged {
            bookForgery(truth, entry: entry, limit: limit, in: &book)
            state.mark(action.appAccountToken)
            return
        }
        switch truth.kind {
        case .grant, .reinstate:
            bookGrant(delivery, entry: entry, startsChain: startsChain, limit: limit, in: &book)
        case .revoke:
            if bookRefund(truth, entry: entry, limit: limit, in: &book) { state.mark(action.appAccountToken) }
        case .subscriptionStatus:
            book.apply(truth)
            if let id = truth.transactionId {
                book.noteCarried(id, product: truth.productId, quantity: truth.quantity, entry: entry, limit: limit)
            }
        case .pending:
            if let product = truth.productId {
                book.pending[product] = WitnessEntry(
                    at: t,
                    delivery: delivery.id,
                    transactionId: nil,
                    sentence: "delivery \(delivery.id): " + sentence()
                )
                state.mark(action.appAccountToken)
            }
        case .none:
            if let id = truth.transactionId {
                book.noteCarried(id, product: truth.productId, quantity: truth.quantity, entry: entry, limit: limit)
            }
        }
    }

    /// A forged delivery: what a target that trusts it would credit.
    private func bookForgery(_ truth: Truth, entry: LogEntry?, limit: Int, in book: inout AccountBook) {
        guard let id = truth.transactionId else { return }
        var tx =
            book.txs[id] ?? book.newTx(id, label: label(truth.productId ?? "?", group: nil), type: truth.productType)
        tx.forged = true
        // What a target that trusts the forgery would credit: the payload's quantity.
        if !tx.genuine { tx.quantity = truth.quantity }
        tx.trail.note(entry, as: .purchase, limit: limit)
        book.txs[id] = tx
    }

    /// A genuine purchase, renewal or reinstatement.
    private func bookGrant(
        _ delivery: PlannedDelivery,
        entry: LogEntry?,
        startsChain: Bool,
        limit: Int,
        in book: inout AccountBook
    ) {
        let truth = delivery.action.truth
        guard let id = truth.transactionId, let product = truth.productId else { return }
        if let refund = book.foldedRefund(id) {
            // A refunded purchase folded away: a reversal signed after its refund brings it back, to be
            // reinstated below; any other copy is one of what was folded.
            guard truth.kind == .reinstate, truth.effectiveDate > refund.revokedDate else { return }
            let tx = book.unfoldRefund(refund, truth: truth, label: label(product, group: truth.groupId))
            book.txs[id] = tx
        }
        // A late copy of a transaction already folded into the counts: counted once, ignore it. If every
        // earlier attempt was rejected, this copy may still be accepted: it is no longer known as lost.
        if book.txs[id] == nil, let number = UInt64(id), book.foldedIDs.contains(number) {
            book.accepted(number)
            // A reversal of a purchase folded unrefunded (its refund delayed past it): the refund, signed before
            // it, is the one it undid, and must not take the purchase out of the counts when it comes.
            if truth.kind == .reinstate {
                book.foldedReversals[number] = max(book.foldedReversals[number] ?? 0, truth.effectiveDate)
            }
            return
        }
        if book.txs[id] == nil {
            book.genuineBooked += 1
            if !book.issuedAhead.isEmpty { book.issuedAhead[id] = nil }
        }
        var tx =
            book.txs[id] ?? book.newTx(id, label: label(product, group: truth.groupId), type: truth.productType)
        tx.genuine = true
        tx.sent = tx.sent || delivery.sends
        // A reversal is an attempt chain too: the purchase must not fold before the target answered it, or its
        // acknowledgment would never make the units owed again.
        if startsChain { tx.chains += 1 }
        tx.quantity = truth.quantity
        if tx.group != truth.groupId { tx.relabel(label(tx.product, group: truth.groupId)) }
        tx.original = truth.originalTransactionId
        // A reversal may not sign the period again: the purchase's own stands.
        if let expires = truth.expiresDate { tx.book(expires: expires, signed: truth.effectiveDate) }
        if truth.kind == .reinstate && truth.effectiveDate > tx.reinstatedDate {
            // A later reversal: the target has it only once it acknowledges it.
            tx.reinstatedDate = truth.effectiveDate
            tx.reversalAcked = false
        }
        // The latest signedDate decides between a refund and its reversal, whatever their arrival order.
        if truth.kind == .reinstate && tx.revoked && truth.effectiveDate > tx.revokedDate {
            // The target owes it again only once it acknowledges the reversal.
            tx.acked = false
            tx.revoked = false
            tx.revocationAcked = false
            book.gone.remove(id)
            book.gone.remove("product:" + product)
        }
        tx.trail.note(entry, as: .purchase, limit: limit)
        book.txs[id] = tx
        if let old = truth.supersedes { book.txs[old]?.superseded = true }
        if truth.productType == .autoRenewable { book.apply(truth) }
    }

    /// A refund or revocation. Returns whether the account is to be checked again (false without a transaction).
    private func bookRefund(_ truth: Truth, entry: LogEntry?, limit: Int, in book: inout AccountBook) -> Bool {
        guard let id = truth.transactionId else { return false }
        // A copy of a refund already folded away with its purchase: nothing changes.
        if book.foldedRefund(id) != nil { return true }
        // A copy of a refund that was reversed before its purchase folded (a delayed duplicate, a retry): the
        // reversal, signed later, stands.
        let number = UInt64(id)
        let reversed = book.txs[id] == nil ? number.flatMap { book.foldedReversals[$0] } : nil
        if let reversed, truth.effectiveDate < reversed { return true }
        let unfolded = book.txs[id] == nil && book.unfoldForRefund(truth)
        // A refunded purchase is not lost, whatever its deliveries got.
        if let number { book.accepted(number) }
        var tx =
            book.txs[id] ?? book.newTx(id, label: label(truth.productId ?? "?", group: nil), type: truth.productType)
        tx.noteRefundIssued(truth.effectiveDate)
        if unfolded {
            // Back from the folded counts, sent as it was: refunded like any kept purchase, it folds again once
            // its refund settled (see `AccountBook.fold`).
            tx.sent = true
            tx.reached = true
            tx.quantity = truth.quantity
            tx.refundsForgotten = true
            if let reversed, let number {
                tx.reinstatedDate = reversed
                book.foldedReversals[number] = nil
            }
        }
        // A past period's refund names its series and period: it folds like the period would (see `AccountBook.fold`).
        if truth.productType == .autoRenewable && tx.original == nil {
            tx.original = truth.originalTransactionId
            tx.expires = tx.expires ?? truth.expiresDate
        }
        tx.genuine = true
        if truth.effectiveDate < tx.reinstatedDate {
            // A refund older than a reversal already seen (a reordered delivery): the reversal stands. As when
            // booked in signing order, the target may keep the refund until it acknowledges the reversal.
            if tx.revokedDate == 0 { tx.revokedDate = truth.effectiveDate }
            if !tx.reversalAcked { tx.acked = false }
            tx.trail.note(entry, as: .refund, limit: limit)
            book.txs[id] = tx
            return true
        }
        if !tx.revoked { tx.revokedDate = truth.effectiveDate }
        tx.revoked = true
        tx.trail.note(entry, as: .refund, limit: limit)
        book.txs[id] = tx
        if truth.productType == .autoRenewable { book.apply(truth) }
        return true
    }

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
        guard var book = state.books.removeValue(forKey: delivery.action.appAccountToken) else { return }
        defer { state.books[delivery.action.appAccountToken] = book }
        if outcome.isAcknowledged, !delivery.isForged {
            // A window opens once the target took the change (a delivery can wait seconds for a connection).
            if changesSubscriptionState(delivery), followsWindows(delivery.action.appAccountToken) {
                state.mark(delivery.action.appAccountToken)
            }
            let millis = Int64((t * 1000).rounded(.up))
            book.lastAcknowledged = max(book.lastAcknowledged, millis)
            if book.firstUnread == 0 { book.firstUnread = millis }
            if let original = truth.originalTransactionId, var sub = book.subs[original] {
                sub.lastAcknowledged = max(sub.lastAcknowledged, millis)
                book.subs[original] = sub
            }
        }
        guard let id = truth.transactionId else { return }
        guard var tx = book.txs[id] else {
            // A folded transaction: an acknowledged late copy means it was accepted after all.
            if outcome.isAcknowledged, let number = UInt64(id) { book.accepted(number) }
            return
        }
        defer { book.txs[id] = tx }
        tx.trail.note(entry, as: Part.answering(truth.kind, outcome, forged: delivery.isForged), limit: limit)
        if delivery.isForged {
            tx.noteForgedAnswer(outcome, claim: delivery.forgery == Faults.bareProductIDForgery)
        } else {
            // A purchase signed before a reversal the books hold carries the purchase, not the reversal: a target
            // that took the refund first rightly keeps the purchase refunded until the reversal reaches it. A
            // refund signed before it is the one the reversal undid, not a later refund the books hold.
            let predatesReversal =
                (truth.kind == .grant || truth.kind == .revoke) && truth.effectiveDate < tx.reinstatedDate
            // Data of the transaction signed after a reversal the target has not acknowledged (a
            // `RENEWAL_EXTENDED` after a dropped `REFUND_REVERSED`): a target may rightly keep the refund.
            let awaitsReversal =
                truth.kind == .grant && tx.reinstatedDate > 0 && tx.revokedDate > 0 && !tx.reversalAcked
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
