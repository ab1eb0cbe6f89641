import Profile
import Simulation

// MARK: - Oracle state

enum Finding {
    case pass
    /// Undecided; `later`: only because the probe came too near an expiry or a change, so a probe a little
    /// later decides.
    case unknown(String, later: Bool = false)
    /// The summary, the witness entries, what the probe showed (a phrase after "the probe at t=…s"), and what
    /// the violation is about: a later probe that fails on the same subject sees the same violation again.
    case fail(String, [WitnessEntry], String, about: Subject)
}

/// Why an invariant could not decide: the last reason that waiting would not change, else the last one it
/// would.
struct Undecided {
    private var now: String?
    private var later: String?

    mutating func note(_ reason: String, later: Bool = false) {
        if later { self.later = reason } else { now = reason }
    }

    /// The finding when nothing failed.
    var finding: Finding {
        if let now { return .unknown(now) }
        return later.map { .unknown($0, later: true) } ?? .pass
    }
}

/// Quantities of transactions folded away (see `Checker.Options.foldAbove`).
struct Folded: Sendable {
    /// Units of verified purchases sent.
    var sent = 0
    /// Units acknowledged and not refunded.
    var acked = 0
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

/// What probes showed of a subscription group's expiry, and what the App Store said of it since.
///
/// A target shows the expiry of the data it last took, and deliveries reach it late: a probe can show an
/// upgrade's shorter period while the books already hold a later extension of it, still queued. Moving the
/// expiry back is stale only when no data since the longest expiry shown was as short as what it shows now.
struct SeenExpiry: Sendable {
    /// The longest expiry a probe showed (the baseline moves down when a probe shows a shortening data
    /// explains).
    var longest: Int64
    /// The shortest expiry any truth of the group gave since `longest` was shown (the truth in force then
    /// included).
    var shortestTruthSince: Int64
}

/// A subscription series' latest truth, keyed by its original transaction.
struct SubscriptionSeries: KeyedByID, Sendable {
    let key: RecordKey
    var group: String
    var product: String
    /// The series' current transaction.
    var transaction: RecordKey
    var status: SubscriptionStatus
    var expires: Int64
    var grace: Int64?
    var truthDate: Int64
    /// When the target last acknowledged data of the series, in milliseconds since the start of the run (0:
    /// never): a probe that asked after it reads the series as the books hold what it acknowledged.
    var lastAcknowledged: Int64 = 0

    var transactionId: String { transaction.id }

    /// When the series' entitlement ends: the grace period's end while in it, else the expiry.
    var end: Int64 { status == .gracePeriod ? (grace ?? expires) : expires }

    /// Whether the series is owed an entitlement at `now`.
    func owed(at now: Int64) -> Bool { (status == .active || status == .gracePeriod) && now < end }

    /// Whether `now` is within `boundary` of an expiry or of the latest change: a probe there may read either way.
    func near(_ now: Int64, boundary: Int64) -> Bool {
        abs(now - expires) < boundary || abs(now - end) < boundary || now - truthDate < boundary
    }

    /// Whether a target may rightly entitle the series at `now`: owed, near a boundary, or in billing retry
    /// (which the profile may want entitled). A revoked series only just after its refund: its expiry no longer
    /// matters.
    func mayBeOwed(at now: Int64, boundary: Int64) -> Bool {
        if status == .revoked { return now - truthDate < boundary }
        return owed(at: now) || near(now, boundary: boundary) || status == .billingRetry
    }
}

/// One account's books: what the oracle knows was sent to it and what the target answered, per transaction
/// and per subscription series.
struct AccountBook: Sendable {
    /// The transactions kept (not folded), in the order first seen.
    var txs = SmallTable<OracleTransaction>()
    /// Each subscription series, by its original transaction.
    var subs = SmallTable<SubscriptionSeries>()
    /// Per product.
    var pending = SmallMap<String, WitnessEntry>()
    /// Per group: the longest expiry a probe showed, and the shortest any truth gave since (see
    /// `Checker.regressionFinding`).
    var seenExpiry = SmallMap<String, SeenExpiry>()
    var gone: Set<String> = []
    /// Products a probe showed entitled while an Ask to Buy reported pending was all that explained them: the
    /// target is seen to unlock on a pending report (see `Checker.noteUnlocksOnPending`).
    var unlockedOnPending: Set<String> = []
    /// Per product.
    var folded = SmallMap<String, Folded>()
    /// IDs of folded transactions (about 4 bytes each), so late copies are not counted twice.
    var foldedIDs = CompactIDSet()
    /// Refunded purchases folded away, sorted by ID (their IDs are in `foldedIDs` too).
    var foldedRefunds: [FoldedRefund] = []
    /// Transactions (ID to product) a genuine notification carried before the delivery that grants them was
    /// dispatched (a `DID_CHANGE_RENEWAL_STATUS` signed after a renewal whose own deliveries were reordered or
    /// late): the App Store issued them, so a target that grants one from that notification grants no fiction.
    /// Each leaves when its grant is booked, so it holds only those still ahead.
    var issuedAhead: [String: CarriedAhead] = [:]
    /// When the refund of each folded purchase that had one reversed was reversed (its `reinstatedDate`, or the
    /// signing date of a reversal that came after the purchase folded, ahead of its delayed refund): a late copy
    /// of the refund, signed before that, changes nothing (see `Checker.bookRefund`). Reversals are rare.
    var foldedReversals: [UInt64: Int64] = [:]
    /// IDs of folded purchases whose every attempt was rejected, and the first of them, kept for its witness.
    var neverAccepted: Set<UInt64> = []
    var neverAcceptedSample: OracleTransaction?
    var sequence: UInt64 = 0
    /// Genuine transactions first booked in this book (kept or folded since): what held purchases are a share of.
    var genuineBooked = 0
    var latest: Int64 = 0
    /// When the target last acknowledged a genuine delivery of the account, and first did so since a probe read
    /// all it had acknowledged, in milliseconds since the start of the run (0: never, none): what a restart may
    /// have lost (see `Checker.accountsAcknowledgedUnprobed(before:)`).
    var lastAcknowledged: Int64 = 0
    var firstUnread: Int64 = 0

    /// Forgets that a folded purchase had every attempt rejected (a later copy may be accepted, or it was
    /// refunded).
    mutating func accepted(_ number: UInt64) {
        guard neverAccepted.remove(number) != nil else { return }
        if neverAcceptedSample?.key.value == number { neverAcceptedSample = nil }
    }

    /// A genuine notification that grants nothing carried transaction `id` of `product` (`quantity` units):
    /// into its trail if it is kept, else into `issuedAhead` if nothing booked knows it yet.
    mutating func noteCarried(_ id: String, product: String?, quantity: Int, entry: LogEntry?, limit: Int) {
        if txs[id] != nil {
            txs[id]?.trail.note(entry, as: .recent, limit: limit)
        } else if !(UInt64(id).map(foldedIDs.contains) ?? false) {
            issuedAhead[id] = CarriedAhead(product: product ?? "", quantity: quantity)
        }
    }

    mutating func newTx(_ id: String, label: Label, type: ProductKind?) -> OracleTransaction {
        sequence += 1
        return OracleTransaction(id: id, sequence: sequence, label: label, type: type)
    }

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
        guard let number = UInt64(id), let index = foldedRefundIndex(number) else { return nil }
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

    /// Applies a subscription truth if it is not older than what is known (truths are snapshots by date).
    mutating func apply(_ truth: Truth) {
        guard let original = truth.originalTransactionId, let group = truth.groupId, let status = truth.status,
            let product = truth.productId, let transaction = truth.transactionId
        else { return }
        let key = RecordKey(original)
        if let current = subs[key] {
            if current.truthDate > truth.effectiveDate { return }
            // At the same signed date, a refund of another transaction (a copy of it delivered late) does not
            // end the state of the current one: a resubscription in the refund's millisecond stands.
            if current.truthDate == truth.effectiveDate, truth.kind == .revoke,
                current.transaction != RecordKey(transaction)
            {
                return
            }
        }
        subs[key] = SubscriptionSeries(
            key: key,
            group: group,
            product: product,
            transaction: RecordKey(transaction),
            status: status,
            expires: truth.expiresDate ?? 0,
            grace: truth.gracePeriodExpiresDate,
            truthDate: truth.effectiveDate,
            lastAcknowledged: subs[key]?.lastAcknowledged ?? 0
        )
        if var seen = seenExpiry[group], let longest = longestTruth(of: group),
            longest.expires < seen.shortestTruthSince
        {
            seen.shortestTruthSince = longest.expires
            seenExpiry[group] = seen
        }
    }

    /// The longest expiry the target had acknowledged by `asked` (milliseconds since the start of the run) of the
    /// group's transactions still standing (not refunded, not superseded by an upgrade it had acknowledged by
    /// `answered`), or nil when none is kept. The target read its state between the two: an upgrade acknowledged
    /// in between need not show, but may, and then the period it cut short rightly does not.
    func longestAcknowledged(of group: String, by asked: Int64, answered: Int64) -> Int64? {
        let byAnswer = txs.values.filter { $0.group == group && $0.acknowledged(by: answered) }
        return byAnswer.lazy.filter { $0.acknowledged(by: asked) && !$0.revoked && !$0.isSuperseded(among: byAnswer) }
            .compactMap(\.acknowledgedExpires).max()
    }

    /// The group's series that expires last: what a probe of the group's expiry should show.
    func longestTruth(of group: String) -> SubscriptionSeries? {
        // Lazily: this runs as each subscription truth is booked.
        subs.values.lazy.filter { $0.group == group }.max { $0.expires < $1.expires }
    }
}

extension Folded {
    /// Counts a transaction that folds (`sign` 1) or takes it out again (`sign` -1, see `AccountBook.unfoldRefund`).
    mutating func add(_ tx: OracleTransaction, sign: Int = 1) {
        switch tx.type {
        case .consumable:
            sent += sign * tx.quantity
            if sign > 0 { maxQuantity = max(maxQuantity, tx.quantity) }
            if tx.acked && !tx.revoked { acked += sign * tx.quantity }
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

/// The oracle's whole state, behind the checker's lock: every account's books, the tallies, witnesses and
/// violations found so far.
struct OracleState: Sendable {
    var books: [String: AccountBook] = [:]
    var tallies: [Invariant: Tally] = [:]
    var witnesses: [Witness] = []
    /// Distinct violations found (see `ViolationKey`), and for each the index of its witness in `witnesses`
    /// (nil past `Checker.Options.maxWitnesses`).
    var violationCount = 0
    var violations: [ViolationKey: Int?] = [:]
    /// Genuine notifications (by event) refused so far while the App Store still retries them, and those lost
    /// (refused on its last attempt), by type (see `Checker+LostNotifications.swift`).
    var refusedNotifications: [UInt64: RefusedAttempts] = [:]
    var lostNotifications: [String: Int] = [:]
    /// When the target last answered, and what found it unreachable since (target-recovers' witness).
    var reach = Reach()
    var unknownSamples: [String] = []
    var interesting: Set<String> = []
    /// Genuine deliveries (purchases, refunds, reversals, renewals) whose outcome came in, and how many of them
    /// the target acknowledged or rejected: a run that acknowledged none cannot pass.
    var genuineDispatched = 0
    var genuineAcknowledged = 0
    var genuineRejected = 0
    /// Final probes answered or failed, the failures, and the first failure's reason (the verdict quotes it).
    var finalProbes = 0
    var finalProbeFailures = 0
    var firstFinalProbeFailure: String?
    /// Purchases held for delivery at each account's final check (``Checker/heldAtEnd``), where there are any,
    /// and the genuine transactions those accounts' books held then (kept or folded).
    var heldAtEnd: [String: Int] = [:]
    var bookedAtEnd: [String: Int] = [:]
    var phrases: [String] = []
    var phraseIndex: [String: UInt32] = [:]

    /// Interns a phrase; past `LogEntry.phraseLimit` (100,000) distinct phrases, new ones share a placeholder.
    mutating func intern(_ phrase: String) -> UInt32 {
        if let index = phraseIndex[phrase] { return index }
        guard phrases.count < LogEntry.phraseLimit else { return UInt32.max }
        let index = UInt32(phrases.count)
        phrases.append(phrase)
        phraseIndex[phrase] = index
        return index
    }

    mutating func mark(_ account: String) {
        if interesting.count < 10_000 { interesting.insert(account) }
    }

    mutating func sampleUnknown(_ text: String) {
        if unknownSamples.count < 100 { unknownSamples.append(text) }
    }
}

/// A transaction a genuine notification carried ahead of the delivery that grants it (see `AccountBook.issuedAhead`).
struct CarriedAhead: Sendable {
    var product: String
    /// Its units (consumables): a target may credit them from the notification that carried it.
    var quantity: Int
}
