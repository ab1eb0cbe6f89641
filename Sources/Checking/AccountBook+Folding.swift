import Profile
import Simulation

/// Quantities of transactions folded away (see `Checker.Options.foldAbove`).
struct Folded: Sendable {
    /// Units of verified purchases sent.
    var sent = 0
    /// Units acknowledged and not refunded.
    var acked = 0
    /// The latest first acknowledgment (ms into the run, rounded up) among the units in `acked`: a read after an
    /// outage owes them only when all were acknowledged before it began (`Int64.max` when one has no time).
    var latestAckMillis: Int64 = 0
    /// Units sent and not refunded with an acknowledged refund.
    var sentNotRefunded = 0
    /// Non-consumable and non-renewing purchases sent and not refunded: a refund of another purchase of the
    /// product does not end the entitlement while one remains.
    var unrefunded = 0
    /// The largest quantity of one consumable purchase folded: what a folded transaction granted twice may add.
    var maxQuantity = 0
    /// Units of refunded one-time purchases folded (see `FoldedRefund`).
    var refunded = 0
    /// The latest time (ms into the run) a folded refunded purchase was taken again after its refund (see
    /// `OracleTransaction.regrantedMillis`, read by `Checker.unverifiedSource(of:_:)`).
    var regrantedMillis: Int64 = 0
}

/// A refunded purchase folded away (see `AccountBook.fold`), in 24 bytes instead of a kept transaction's ~270: what a
/// reversal of its refund, a copy of the refund and a probe that names it need. Its units are in `Folded`.
struct FoldedRefund: Sendable {
    let id: UInt64
    /// The refund's signed date: only a reversal signed after it brings the purchase back.
    let revokedDate: Int64
    /// A probe that asked after the refund stood no longer showed the transaction (see `regressionFinding`).
    var gone: Bool
}

extension Folded {
    /// Counts a transaction that folds (`sign` 1) or takes it out again (`sign` -1, see `AccountBook.unfoldRefund`).
    mutating func add(_ tx: OracleTransaction, sign: Int = 1) {
        switch tx.type {
        case .consumable:
            sent += sign * tx.quantity
            if sign > 0 { maxQuantity = max(maxQuantity, tx.quantity) }
            if tx.acked && !tx.revoked {
                acked += sign * tx.quantity
                // Never lowered when a unit unfolds: a later read then counts fewer units, never more.
                if sign > 0 { latestAckMillis = max(latestAckMillis, tx.firstAckMillis ?? .max) }
            }
            if !(tx.revoked && tx.revocationAcked) { sentNotRefunded += sign * tx.quantity }
            if tx.revoked { refunded += sign * tx.quantity }
        case .nonConsumable, .nonRenewing:
            if tx.sent && !tx.revoked { unrefunded += sign }
            if tx.revoked { refunded += sign }
            if sign > 0 { regrantedMillis = max(regrantedMillis, tx.regrantedMillis) }
        case .autoRenewable, nil:
            break
        }
    }
}

/// Folding: the oldest settled transactions go into per-product counts, refunded ones into `FoldedRefund`s,
/// and come back when a refund or its reversal names them again.
extension AccountBook {
    /// Folds the oldest settled transactions into per-product counts until at most `keep` remain (or none is
    /// settled). Settled: a verified consumable whose refund, if any, was answered; a subscription period that
    /// is no longer current; an unrefunded non-renewing subscription a minute past its catalog period; a purchase
    /// whose every attempt was rejected; a refunded purchase whose refund settled (see `refundSettled`). A past
    /// subscription period settles once the target acknowledged a later transaction of its series, or a minute
    /// after it ended.
    /// - Parameters:
    ///   - now: milliseconds since the start of the run.
    ///   - refundsSettle: how long after its acknowledgment a refund stands for every probe (see `refundSettled`).
    mutating func fold(keep: Int, now: Int64, refundsSettle: Int64) {
        var latestRefunds: Set<RecordKey>?
        var acknowledgedNumbers: [RecordKey: UInt64]?
        let settled = txs.values.filter { tx in
            guard tx.genuine, !tx.forged, tx.chains == 0 else { return false }
            if tx.neverAccepted { return true }
            if tx.revoked && tx.type != .autoRenewable {
                guard refundSettled(tx, now: now, after: refundsSettle) else { return false }
                // Found once per fold, and only when some refund may fold.
                if latestRefunds == nil { latestRefunds = self.latestRefunds(perProduct: 2) }
                return latestRefunds?.contains(tx.key) == false
            }
            guard !(tx.revoked && !tx.revocationAcked), !tx.indeterminate else { return false }
            switch tx.type {
            case .consumable: return tx.sent
            case .autoRenewable:
                guard let original = tx.originalKey, let sub = subs[original], !tx.has(sub.transaction),
                    let expires = tx.expires, expires <= sub.expires
                else { return false }
                // Past for the target too: it acknowledged a later transaction of the series, or the period ended
                // a minute ago. Until then it may rightly still entitle it (the later ones never reached it).
                if max(expires, tx.acknowledgedExpires ?? expires) + 60_000 < latest { return true }
                if acknowledgedNumbers == nil { acknowledgedNumbers = self.latestAcknowledgedNumbers() }
                return (acknowledgedNumbers?[original] ?? 0) > (tx.key.value ?? .max)
            case .nonRenewing: return tx.expires.map { $0 + 60_000 < latest } ?? false
            case .nonConsumable, nil: return false
            }
        }.sorted { $0.sequence < $1.sequence }
        for tx in settled.prefix(max(0, txs.count - keep)) {
            txs[tx.key] = nil
            if let number = tx.key.value {
                foldedIDs.insert(number)
                if tx.neverAccepted {
                    neverAccepted.insert(number)
                    if neverAcceptedSample == nil { neverAcceptedSample = tx }
                }
                // A past subscription period folds on its own rule, refunded or not, and is judged no further
                // (a target may name a series by an earlier period's ID): only a one-time refund is remembered.
                // Only a refunded transaction is ever marked gone (see `regressionFinding`): no string made for
                // the rest.
                let gone = tx.revoked && self.gone.remove(tx.id) != nil
                if tx.revoked && tx.type != .autoRenewable {
                    insert(FoldedRefund(id: number, revokedDate: tx.revokedDate, gone: gone))
                } else if tx.reinstatedDate > 0 {
                    foldedReversals[number] = tx.reinstatedDate
                }
            }
            var folded = self.folded[tx.product] ?? Folded()
            folded.add(tx)
            self.folded[tx.product] = folded
        }
        txs.shrink()
    }

    /// Whether a refunded one-time purchase may fold: its refund acknowledged long enough ago that every probe
    /// still to be judged asked after it (a probe's answer may be judged up to its timeout after it asked, see
    /// `Context.refundStood`), nothing about it left open, and its ID a canonical decimal (kept as a number).
    /// The latest two refunds of each product stay whole: they keep the product-level checks (still entitled,
    /// revoked too much, not taken back) and their witnesses, and they are the ones a reversal usually finds.
    /// An earlier one folds: a `REFUND_REVERSED` that comes for it later brings it back (see `unfoldRefund`).
    private func refundSettled(_ tx: OracleTransaction, now: Int64, after settle: Int64) -> Bool {
        tx.revocationAcked && tx.revocationAckedMillis + settle <= now && tx.sent && !tx.indeterminate
            && tx.key.text == nil && tx.type != nil
    }

    /// The highest transaction number the target acknowledged of each subscription series.
    private func latestAcknowledgedNumbers() -> [RecordKey: UInt64] {
        var numbers: [RecordKey: UInt64] = [:]
        for tx in txs.values where tx.acked && tx.type == .autoRenewable {
            guard let original = tx.originalKey, let number = tx.key.value else { continue }
            numbers[original] = max(numbers[original] ?? 0, number)
        }
        return numbers
    }

    /// The latest `count` refunded transactions of each product.
    private func latestRefunds(perProduct count: Int) -> Set<RecordKey> {
        var latest: Set<RecordKey> = []
        var perProduct: [String: Int] = [:]
        for tx in txs.values.filter(\.revoked).sorted(by: { $0.sequence > $1.sequence })
        where perProduct[tx.product, default: 0] < count {
            perProduct[tx.product, default: 0] += 1
            latest.insert(tx.key)
        }
        return latest
    }

    /// The folded refund of transaction `id`, if it folded.
    func foldedRefund(_ id: String) -> FoldedRefund? {
        foldedRefund(RecordKey(id))
    }

    /// The folded refund of the transaction with this key, if it was folded refunded.
    func foldedRefund(_ key: RecordKey) -> FoldedRefund? {
        guard !foldedRefunds.isEmpty, let number = key.value, let index = foldedRefundIndex(number) else { return nil }
        return foldedRefunds[index]
    }

    /// Brings a folded refund back as a kept, refunded transaction, as it was when it folded (less its trail),
    /// for a reversal of its refund to reinstate: its units leave the folded counts.
    mutating func unfoldRefund(_ refund: FoldedRefund, truth: Truth, label: Label) -> OracleTransaction {
        if let index = foldedRefundIndex(refund.id) { foldedRefunds.remove(at: index) }
        foldedIDs.remove(refund.id)
        var tx = newTx(String(refund.id), label: label, type: truth.productType)
        tx.genuine = true
        tx.sent = true
        tx.reached = true
        tx.quantity = truth.quantity
        tx.revoked = true
        tx.revokedDate = refund.revokedDate
        tx.revocationAcked = true
        tx.refundsForgotten = true
        if let product = truth.productId, var folded = folded[product] {
            folded.add(tx, sign: -1)
            self.folded[product] = folded
        }
        if refund.gone { gone.insert(tx.id) }
        return tx
    }

    /// Takes a refunded purchase that had folded unrefunded out of the folded counts; true when it was one of
    /// them and its units (a consumable's) or its standing (a non-renewing subscription's) left the counts, so
    /// that the refund is booked on a kept transaction. Its units may have been counted as owed: they are owed
    /// no more, whatever the refund's answer (the lower bound only loosens). A past subscription period stays
    /// folded: its refund is booked on a new kept record, as before.
    mutating func unfoldForRefund(_ truth: Truth) -> Bool {
        guard let id = truth.transactionId, let product = truth.productId, var folded = folded[product] else {
            return false
        }
        defer { self.folded[product] = folded }
        folded.acked = max(0, folded.acked - truth.quantity)
        guard let number = UInt64(id), foldedIDs.contains(number) else { return false }
        switch truth.productType {
        case .consumable:
            guard folded.sent >= truth.quantity, folded.sentNotRefunded >= truth.quantity else { return false }
            folded.sent -= truth.quantity
            folded.sentNotRefunded -= truth.quantity
        case .nonConsumable, .nonRenewing:
            // A folded one was unrefunded until now (refunded ones fold as `FoldedRefund`s).
            guard folded.unrefunded > 0 else { return false }
            folded.unrefunded -= 1
        case .autoRenewable, nil:
            return false
        }
        foldedIDs.remove(number)
        return true
    }

    /// Marks every folded refund that a probe no longer showed, and returns those it did show that were gone.
    mutating func noteFoldedRefunds(shown ids: Set<UInt64>) -> [FoldedRefund] {
        var back: [FoldedRefund] = []
        for index in foldedRefunds.indices {
            if ids.contains(foldedRefunds[index].id) {
                if foldedRefunds[index].gone { back.append(foldedRefunds[index]) }
            } else {
                foldedRefunds[index].gone = true
            }
        }
        return back
    }

    private mutating func insert(_ refund: FoldedRefund) {
        // Refunds fold roughly in the order their purchases were issued: appending is the common case.
        var index = foldedRefunds.endIndex
        while index > 0 && foldedRefunds[index - 1].id > refund.id { index -= 1 }
        if index > 0 && foldedRefunds[index - 1].id == refund.id {
            foldedRefunds[index - 1] = refund
        } else {
            foldedRefunds.insert(refund, at: index)
        }
    }

    private func foldedRefundIndex(_ id: UInt64) -> Int? {
        var low = 0
        var high = foldedRefunds.count
        while low < high {
            let middle = (low + high) / 2
            if foldedRefunds[middle].id < id { low = middle + 1 } else { high = middle }
        }
        return low < foldedRefunds.count && foldedRefunds[low].id == id ? low : nil
    }
}
