// Per-account state, compact: it is what the world's memory grows with.

/// A set of small non-negative integers (product or group indices) of any size: the first 64 in one word
/// kept inline, so a catalog of up to 64 products costs no allocation per account, the rest in words allocated
/// only for an account that owns one of them.
struct IndexSet64: Sendable, Hashable {
    private var low: UInt64 = 0
    private var high: [UInt64] = []

    /// Whether `index` is in the set.
    func contains(_ index: Int) -> Bool {
        let (word, bit) = index.quotientAndRemainder(dividingBy: 64)
        if word == 0 { return low & (1 << UInt64(bit)) != 0 }
        return word - 1 < high.count && high[word - 1] & (1 << UInt64(bit)) != 0
    }

    /// Adds or removes `index`.
    mutating func set(_ index: Int, _ value: Bool) {
        let (word, bit) = index.quotientAndRemainder(dividingBy: 64)
        let mask: UInt64 = 1 << UInt64(bit)
        if word == 0 {
            if value { low |= mask } else { low &= ~mask }
            return
        }
        if word - 1 >= high.count {
            guard value else { return }
            high.append(contentsOf: repeatElement(0, count: word - high.count))
        }
        if value { high[word - 1] |= mask } else { high[word - 1] &= ~mask }
    }
}

/// What the world remembers of one account.
struct SimulatedAccount: Sendable {
    /// The subscription of each group the account ever subscribed to, by group index.
    var subs: [SubscriptionLifecycle?] = []
    /// The last few one-time purchases, refundable.
    var purchases: [OneTimePurchase] = []
    /// The last few refunded one-time purchases, whose refund may be reversed.
    var refunded: [OneTimePurchase] = []
    /// When the account's last refund, refund reversal or renewal extension was signed: the next one is signed
    /// later (see `World.changesSettled(account:at:)`).
    var changedMs: Int64 = 0
    /// This account's subscriptions shared with its Family Sharing partner, one per group ever shared.
    var familyShares: [FamilyShare] = []
    /// The groups in which the account has its partner's subscription through Family Sharing.
    var familyMember = IndexSet64()
    private var owned = IndexSet64()
    private var intro = IndexSet64()

    func sub(_ group: Int) -> SubscriptionLifecycle? { group < subs.count ? subs[group] : nil }

    mutating func setSub(_ group: Int, _ sub: SubscriptionLifecycle) {
        while subs.count <= group { subs.append(nil) }
        subs[group] = sub
    }

    /// Whether the account owns the non-consumable at catalog index `product`.
    func owns(_ product: Int) -> Bool { owned.contains(product) }

    mutating func setOwned(_ product: Int, _ value: Bool) { owned.set(product, value) }

    /// Whether the account already used the introductory offer of a group (once per group, as Apple allows).
    func introUsed(_ group: Int) -> Bool { intro.contains(group) }

    mutating func setIntroUsed(_ group: Int) { intro.set(group, true) }

    /// Keeps the last four refundable purchases (bounded memory per account). The oldest goes before the
    /// newest is appended, so the array never grows past four (a fifth would double its storage).
    mutating func remember(_ ref: OneTimePurchase) {
        if purchases.count >= 4 { purchases.removeFirst() }
        purchases.append(ref)
    }

    mutating func forget(_ transaction: UInt64) { purchases.removeAll { $0.transaction == transaction } }

    mutating func rememberRefund(_ ref: OneTimePurchase) {
        if refunded.count >= 2 { refunded.removeFirst() }
        refunded.append(ref)
    }

    /// A refunded purchase whose refund was reversed is refundable again.
    mutating func restore(_ ref: OneTimePurchase) {
        refunded.removeAll { $0.transaction == ref.transaction }
        remember(ref)
    }
}

/// Something due at a time: an action to hand out, or a timer of the world.
enum Job: Sendable {
    indirect case emit(Action)
    /// A subscription's timer, ignored when the subscription's version moved on since it was set.
    case subscription(account: Int, group: Int, timer: SubscriptionLifecycle.Timer, version: UInt32)
    case askToBuy(account: Int, request: AskToBuy)
    case refund(account: Int)
    /// Apple's answer to a refund request, hours after its `CONSUMPTION_REQUEST`: `group` is nil for a one-time
    /// purchase, else the subscription group whose period `transaction` was asked about.
    case refundDecision(account: Int, group: Int?, transaction: UInt64, approve: Bool)
    /// The purchaser stops sharing the subscription of `group` with the family.
    case stopSharing(account: Int, group: Int)
}
