import Profile
import Simulation

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
    var neverAcceptedSample: OracleTransaction? {
        get { neverAcceptedSamples.first }
        set { neverAcceptedSamples = newValue.map { [$0] } ?? [] }
    }
    /// The sample, if there is one, out of line: few accounts have one, and every account's book is moved as
    /// each of its deliveries is booked.
    private var neverAcceptedSamples: [OracleTransaction] = []
    var sequence: UInt64 = 0
    /// Genuine transactions first booked in this book (kept or folded since): what held purchases are a share of.
    var genuineBooked = 0
    var latest: Int64 = 0
    /// When the target last acknowledged a genuine delivery of the account, and first did so since a probe read
    /// all it had acknowledged, in milliseconds since the start of the run (0: never, none): what a restart may
    /// have lost (see `Checker.accountsAcknowledgedUnprobed(before:)`).
    var lastAcknowledged: Int64 = 0
    var firstUnread: Int64 = 0
    /// Subscription series and one-time purchases (by original transaction) minted without `appAccountToken`
    /// that a device of the account posted and the target acknowledged: what a target can attribute.
    var claimed: Set<String> = []

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

    /// Applies a subscription truth if it is not older than what is known (truths are snapshots by date).
    mutating func apply(_ truth: Truth) {
        guard let original = truth.originalTransactionId, let group = truth.groupId, let status = truth.status,
            let product = truth.productId, let transaction = truth.transactionId
        else { return }
        let key = RecordKey(original)
        let transactionKey = RecordKey(transaction)
        let position = subs.position(of: key)
        if let position {
            let current = subs[at: position]
            if current.truthDate > truth.effectiveDate { return }
            // At the same signed date, a refund of another transaction (a copy of it delivered late) does not
            // end the state of the current one: a resubscription in the refund's millisecond stands.
            if current.truthDate == truth.effectiveDate, truth.kind == .revoke, current.transaction != transactionKey {
                return
            }
        }
        let series = SubscriptionSeries(
            key: key,
            group: group,
            product: product,
            transaction: transactionKey,
            status: status,
            expires: truth.expiresDate ?? 0,
            grace: truth.gracePeriodExpiresDate,
            truthDate: truth.effectiveDate,
            lastAcknowledged: position.map { subs[at: $0].lastAcknowledged } ?? 0
        )
        subs.store(series, at: position)
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

/// A transaction a genuine notification carried ahead of the delivery that grants it (see `AccountBook.issuedAhead`).
struct CarriedAhead: Sendable {
    var product: String
    /// Its units (consumables): a target may credit them from the notification that carried it.
    var quantity: Int
}
