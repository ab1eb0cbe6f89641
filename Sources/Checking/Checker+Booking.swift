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
                let sentence = { self.describe(delivery) + self.dispatched(delivery) }
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
        // Taken out of the books while it changes, so that its tables are changed in place, not copied.
        let slot = state.books.opening(action.appAccountToken, index: action.account)
        var book = state.books.take(at: slot)
        book.latest = max(book.latest, truth.effectiveDate)
        defer {
            if book.txs.count > foldAbove {
                book.fold(keep: foldAbove / 2, now: Int64((t * 1000).rounded()), refundsSettle: refundsSettle)
            }
            state.books.putBack(&book, at: slot)
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
        // The ID is read and the transaction found once: the table holds the same records until it is stored.
        let key = RecordKey(id)
        guard isBookedKept(truth, key: key, product: product, in: &book) else { return }
        let position = book.txs.position(of: key)
        if position == nil {
            book.genuineBooked += 1
            if !book.issuedAhead.isEmpty { book.issuedAhead[id] = nil }
        }
        var tx =
            position.map { book.txs[at: $0] }
            ?? book.newTx(id, label: label(product, group: truth.groupId), type: truth.productType)
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
        book.txs.store(tx, at: position)
        if let old = truth.supersedes { book.txs[old]?.superseded = true }
        if truth.productType == .autoRenewable { book.apply(truth) }
    }

    /// Whether a genuine grant of transaction `id` is booked on a kept transaction. A folded refund comes back
    /// for a reversal signed after it; any other copy of a folded transaction is one of what was folded.
    private func isBookedKept(_ truth: Truth, key: RecordKey, product: String, in book: inout AccountBook) -> Bool {
        if let refund = book.foldedRefund(key) {
            // A refunded purchase folded away: a reversal signed after its refund brings it back, to be
            // reinstated below; any other copy is one of what was folded.
            guard truth.kind == .reinstate, truth.effectiveDate > refund.revokedDate else { return false }
            let tx = book.unfoldRefund(refund, truth: truth, label: label(product, group: truth.groupId))
            book.txs[key] = tx
        }
        // A late copy of a transaction already folded into the counts: counted once, ignore it. If every
        // earlier attempt was rejected, this copy may still be accepted: it is no longer known as lost.
        if book.txs.position(of: key) == nil, let number = key.value, book.foldedIDs.contains(number) {
            book.accepted(number)
            // A reversal of a purchase folded unrefunded (its refund delayed past it): the refund, signed before
            // it, is the one it undid, and must not take the purchase out of the counts when it comes.
            if truth.kind == .reinstate {
                book.foldedReversals[number] = max(book.foldedReversals[number] ?? 0, truth.effectiveDate)
            }
            return false
        }
        return true
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
}
