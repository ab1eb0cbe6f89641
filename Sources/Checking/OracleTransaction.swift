import Profile
import Simulation

/// What few transactions need, kept out of line behind one reference: an ID that is not a decimal number
/// (the world mints none), a refund's and its reversal's dates, when the target acknowledged the refund and
/// when it last took the purchase again after that, and whether it acknowledged a forgery of the transaction.
/// Immutable, so the copies of a transaction share it safely; a change makes a new one.
final class RareFields: Sendable {
    struct Values: Equatable, Sendable {
        var idText: String?
        var originalText: String?
        var revokedDate: Int64 = 0
        var reinstatedDate: Int64 = 0
        var revocationAckedMillis: Int64 = 0
        var forgeryAcknowledged = false
        var regrantedMillis: Int64 = 0
        var ackedExpires: Int64 = 0
        var reversalAcked = false
        var expirySignedDate: Int64 = 0
        var refundDates: [Int64] = []
        var refundsForgotten = false
    }

    let values: Values

    init(_ values: Values) { self.values = values }
}

/// A transaction's product and subscription group. Every kept transaction names them and a catalog has a
/// handful, so the checker makes one per catalog product and its transactions share it: one reference in
/// each transaction, where the two strings took 32 bytes.
final class Label: Sendable {
    let product: String
    let group: String?

    init(product: String, group: String?) {
        self.product = product
        self.group = group
    }
}

/// One transaction's truth and answers. A soak keeps up to `Checker.Options.foldAbove` of these for every
/// account for the whole run, so the scalars are stored narrow (counts in 16 or 32 bits, flags and the
/// product type in bits, the IDs as numbers, product and group shared, what few transactions have out of
/// line) behind full-width accessors: 128 bytes with four trail entries inside, and no allocation of its own.
/// It was 128 bytes, a 16-digit ID string (64 bytes of heap) and an array of 24-byte trail entries.
struct OracleTransaction: KeyedByID, Sendable {
    /// The ID's number (0 when the ID is kept as text in `rare`).
    private var number: UInt64
    private var originalNumber: UInt64 = 0
    private var storedExpires = Int64.min
    private var rare: RareFields?
    /// The product and group.
    private(set) var label: Label
    var trail = Trail()
    private var storedQuantity: Int32 = 1
    private var storedSequence: UInt32
    private var storedRejected: UInt16 = 0
    private var storedLastRejection: UInt16 = 0
    private var storedChains: UInt16 = 0
    /// Flag bits 0-12, the product type in bits 13-15.
    private var flags: UInt16 = 0

    var product: String { label.product }
    var group: String? { label.group }

    /// Names another group (the checker's label for the product and group, see `Checker.label(_:group:)`).
    mutating func relabel(_ label: Label) {
        precondition(label.product == product, "a transaction keeps its product")
        self.label = label
    }

    /// The product type the transaction was first seen with.
    var type: ProductKind? {
        let code = Int(flags >> 13)
        return code == 0 ? nil : ProductKind.allCases[code - 1]
    }

    var key: RecordKey { RecordKey(number: number, text: number == 0 ? rare?.values.idText : nil) }

    func has(_ key: RecordKey) -> Bool {
        key.text == nil ? number == key.number : number == 0 && rare?.values.idText == key.text
    }

    private var rareValues: RareFields.Values {
        get { rare?.values ?? RareFields.Values() }
        set { rare = newValue == RareFields.Values() ? nil : RareFields(newValue) }
    }

    var revokedDate: Int64 {
        get { rare?.values.revokedDate ?? 0 }
        set { rareValues.revokedDate = newValue }
    }
    /// The signedDate of the latest refund reversal seen.
    var reinstatedDate: Int64 {
        get { rare?.values.reinstatedDate ?? 0 }
        set { rareValues.reinstatedDate = newValue }
    }

    /// The order in which the account's transactions were first seen.
    var sequence: UInt64 { UInt64(storedSequence) }

    var quantity: Int {
        get { Int(storedQuantity) }
        set { storedQuantity = Int32(clamping: newValue) }
    }
    var expires: Int64? {
        get { storedExpires == .min ? nil : storedExpires }
        set { storedExpires = newValue ?? .min }
    }
    /// The longest expiry the target acknowledged, while shorter than `expires` (0: it acknowledged `expires`, or
    /// nothing yet). The books hold a subscription's data once it is dispatched; an extension may never reach
    /// the target (a harness over its in-flight cap drops it, the App Store retries it hours later).
    var ackedExpires: Int64 {
        get { rare?.values.ackedExpires ?? 0 }
        set { rareValues.ackedExpires = newValue }
    }
    /// Whether the target acknowledged data carrying the transaction (a status or renewal preference change) while
    /// it has not acknowledged the transaction itself, or less than its booked expiry.
    var hasAcknowledgedData: Bool { ackedExpires > 0 }
    /// The expiry the target acknowledged (meaningful once `acked`).
    var acknowledgedExpires: Int64? { ackedExpires != 0 ? ackedExpires : expires }

    /// Whether the target had acknowledged the transaction by `asked` (milliseconds since the start of the run):
    /// a probe's answer may be judged after later answers. An acknowledgment the trail does not date (booked in
    /// bulk) counts as made in time.
    func acknowledged(by asked: Int64) -> Bool {
        acked && (firstAckMillis.map { $0 <= asked } ?? true)
    }

    /// When the target first acknowledged it, in milliseconds into the run rounded up; nil when the trail kept no
    /// acknowledgment.
    var firstAckMillis: Int64? { trail.earliest(.acks).map { Int64(($0 * 1000).rounded(.up)) } }

    /// Whether an upgrade superseded the period for a target that acknowledged `acknowledged`: a later transaction
    /// of its series is among them. One missed at the harness's cap, or answered after the probe asked, leaves
    /// the period the target's latest word. Later is by purchase, the order in which the App Store numbers
    /// transactions, not by booking: an older period may be booked after this one (its refund, late).
    func isSuperseded(among acknowledged: [OracleTransaction]) -> Bool {
        superseded && acknowledged.contains { $0.original == original && $0.number > number }
    }

    /// The signedDate of the data that changed the expiry last (0 while it is the first one booked, the
    /// purchase's): out of line, since only an extended transaction has one.
    var expirySignedDate: Int64 {
        get { rare?.values.expirySignedDate ?? 0 }
        set { rareValues.expirySignedDate = newValue }
    }

    /// How many distinct refunds (and revocations) of the transaction the App Store issued: copies of one
    /// (duplicates, retries) share its signed date.
    var refundsIssued: Int { rare?.values.refundDates.count ?? 0 }

    /// Rebuilt from the folded counts (see `AccountBook.unfoldRefund`, `AccountBook.unfoldForRefund`): the refunds issued
    /// before it folded are no longer known, so ``refundsIssued`` counts too few to judge a double refund.
    var refundsForgotten: Bool {
        get { rare?.values.refundsForgotten ?? false }
        set { if newValue != refundsForgotten { rareValues.refundsForgotten = newValue } }
    }

    /// Notes a refund of the transaction signed at `date` (a copy of one already noted changes nothing).
    mutating func noteRefundIssued(_ date: Int64) {
        guard !(rare?.values.refundDates.contains(date) ?? false), refundsIssued < 16 else { return }
        rareValues.refundDates.append(date)
    }

    /// Books the expiry of data signed at `signed`: what the target acknowledged stays the older one until it
    /// acknowledges more. Data signed before the expiry's last change (a retry of an earlier extension, a late
    /// copy of the purchase) changes nothing: a backend keeps the latest signed, whatever the arrival order.
    mutating func book(expires newer: Int64, signed: Int64) {
        guard let old = expires else {
            expires = newer
            return
        }
        guard newer != old, signed >= expirySignedDate else { return }
        if acked, ackedExpires == 0, newer > old { ackedExpires = old }
        if ackedExpires >= newer { ackedExpires = 0 }
        expires = newer
        expirySignedDate = signed
    }

    /// Notes that the target acknowledged data of the transaction that gave it `expiry`; `acknowledgingTransaction`
    /// when that answer also acknowledges the transaction itself (see `acked`).
    mutating func noteAcknowledged(expiry: Int64, acknowledgingTransaction: Bool) {
        guard let booked = expires else { return }
        if expiry >= booked {
            // 0 says "all of it" only for an acknowledged transaction; for one known only from other data (a
            // status change, a reversal it awaits) the expiry itself is kept, or a later older copy would lower it.
            ackedExpires = acked || acknowledgingTransaction ? 0 : booked
        } else if !(acked && ackedExpires == 0) {
            // Unless it already had the books' expiry: an older copy changes nothing there.
            ackedExpires = max(ackedExpires, expiry)
        }
    }

    /// A decimal ID is kept as its number; anything else (never minted by the world) as text.
    var original: String? {
        get { originalKey?.id }
        set {
            let number = newValue.flatMap(RecordKey.decimal)
            originalNumber = number ?? 0
            let text = number == nil ? newValue : nil
            if text != rare?.values.originalText { rareValues.originalText = text }
        }
    }

    /// The original transaction's key, without making its text.
    var originalKey: RecordKey? {
        if originalNumber != 0 { return RecordKey(number: originalNumber, text: nil) }
        return rare?.values.originalText.map { RecordKey(number: 0, text: $0) }
    }
    /// Attempts of the purchase answered with a rejection.
    var rejected: Int {
        get { Int(storedRejected) }
        set { storedRejected = UInt16(clamping: newValue) }
    }
    /// The status of the latest rejection.
    var lastRejection: Int {
        get { Int(storedLastRejection) }
        set { storedLastRejection = UInt16(clamping: newValue) }
    }
    /// When the target first acknowledged the current refund, in milliseconds since the start of the run
    /// (meaningful while `revocationAcked`): a probe that asked before then may still show the purchase.
    var revocationAckedMillis: Int64 {
        get { rare?.values.revocationAckedMillis ?? 0 }
        set { rareValues.revocationAckedMillis = newValue }
    }
    /// When the target last acknowledged a delivery of the purchase after acknowledging its refund, without
    /// saying it had it already, in milliseconds since the start of the run (0: never): a replay it may have
    /// taken as a new grant, resurrecting the refunded purchase.
    var regrantedMillis: Int64 {
        get { rare?.values.regrantedMillis ?? 0 }
        set { rareValues.regrantedMillis = newValue }
    }
    /// A forged delivery of it that a correct target must refuse was acknowledged: the target trusts forgeries.
    /// A bare claim (`bare-product-id`) goes as a device report, which a correct target may acknowledge, so its
    /// answer tells nothing.
    /// The target acknowledged the latest reversal of the transaction's refund (see `reinstatedDate`).
    var reversalAcked: Bool {
        get { rare?.values.reversalAcked ?? false }
        set { if newValue != reversalAcked { rareValues.reversalAcked = newValue } }
    }
    var forgeryAcknowledged: Bool {
        get { rare?.values.forgeryAcknowledged ?? false }
        set { if newValue != forgeryAcknowledged { rareValues.forgeryAcknowledged = newValue } }
    }
    /// Attempt chains still open: each copy of a purchase delivery starts one, and it ends with the answer to
    /// its last retry or redelivery. Apple's retries, device redeliveries and any later retry policy all
    /// continue a chain, so "every attempt was rejected" includes them.
    var chains: Int {
        get { Int(storedChains) }
        set { storedChains = UInt16(clamping: newValue) }
    }

    private func flag(_ bit: UInt16) -> Bool { flags & bit != 0 }
    private mutating func set(_ bit: UInt16, _ value: Bool) { flags = value ? flags | bit : flags & ~bit }

    var forged: Bool {
        get { flag(1 << 0) }
        set { set(1 << 0, newValue) }
    }
    var genuine: Bool {
        get { flag(1 << 1) }
        set { set(1 << 1, newValue) }
    }
    var sent: Bool {
        get { flag(1 << 2) }
        set { set(1 << 2, newValue) }
    }
    var acked: Bool {
        get { flag(1 << 3) }
        set { set(1 << 3, newValue) }
    }
    /// Some delivery of the purchase was acknowledged, ever (a refund reversal does not clear it).
    var accepted: Bool {
        get { flag(1 << 4) }
        set { set(1 << 4, newValue) }
    }
    var indeterminate: Bool {
        get { flag(1 << 5) }
        set { set(1 << 5, newValue) }
    }
    /// An attempt chain of the purchase ended without the target refusing it: its last attempt never left the
    /// harness (missed slot, refused connection), or the device's endpoint answered "retry later". The purchase
    /// is still held for delivery, not refused.
    var held: Bool {
        get { flag(1 << 6) }
        set { set(1 << 6, newValue) }
    }
    var revoked: Bool {
        get { flag(1 << 7) }
        set { set(1 << 7, newValue) }
    }
    var revocationAcked: Bool {
        get { flag(1 << 8) }
        set { set(1 << 8, newValue) }
    }
    var revocationIndeterminate: Bool {
        get { flag(1 << 9) }
        set { set(1 << 9, newValue) }
    }
    var superseded: Bool {
        get { flag(1 << 10) }
        set { set(1 << 10, newValue) }
    }
    /// A forged delivery of it was acknowledged, got no answer or a server error: a target that trusts
    /// forgeries may have credited it.
    var forgeryMayCount: Bool {
        get { flag(1 << 11) }
        set { set(1 << 11, newValue) }
    }
    /// An attempt of the purchase (or of its reinstatement) may have reached the target: it was answered, or
    /// got no answer. One whose every attempt was refused or never left the harness cannot have been credited
    /// by a target that learns of purchases only from deliveries.
    var reached: Bool {
        get { flag(1 << 12) }
        set { set(1 << 12, newValue) }
    }

    init(id: String, sequence: UInt64, label: Label, type: ProductKind?) {
        let key = RecordKey(id)
        number = key.number
        if let text = key.text { rare = RareFields(RareFields.Values(idText: text)) }
        // An account's count of transactions: far below 2^32 in any run.
        self.storedSequence = UInt32(truncatingIfNeeded: sequence)
        self.label = label
        let code = type.flatMap { ProductKind.allCases.firstIndex(of: $0) }.map { UInt16($0 + 1) } ?? 0
        flags = code << 13
    }

    /// Answered, and only with rejections, with no attempt left: the target said no to a genuine purchase.
    /// Timeouts, resets, unsent attempts and a device told to retry later leave it unknown.
    var neverAccepted: Bool {
        genuine && !forged && rejected > 0 && !accepted && chains == 0 && !indeterminate && !held && !revoked
    }

    /// Rejected so far, with a retry or redelivery still to come.
    var awaitingRetry: Bool {
        genuine && !forged && rejected > 0 && !accepted && chains > 0 && !indeterminate && !held && !revoked
    }
}
