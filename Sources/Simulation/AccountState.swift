// Per-account state, compact: it is what the world's memory grows with.

/// A one-time purchase kept so that it can be refunded (and its refund reversed).
struct PurchaseRef: Sendable {
    var product: Int32
    var transaction: UInt64
    var purchaseMs: Int64
    var quantity: Int32
    /// The partner's `FAMILY_SHARED` transaction for it, if it was shared.
    var shared: UInt64?
}

/// What the world remembers of one account.
struct AccountState: Sendable {
    /// The subscription of each group the account ever subscribed to, by group index.
    var subs: [SubscriptionLifecycle?] = []
    var purchases: [PurchaseRef] = []
    var refunded: [PurchaseRef] = []
    private var owned: UInt64 = 0
    private var intro: UInt64 = 0

    func sub(_ group: Int) -> SubscriptionLifecycle? { group < subs.count ? subs[group] : nil }

    mutating func setSub(_ group: Int, _ sub: SubscriptionLifecycle) {
        while subs.count <= group { subs.append(nil) }
        subs[group] = sub
    }

    /// Whether the account owns the non-consumable at catalog index `product`.
    func owns(_ product: Int) -> Bool { product < 64 && owned & (1 << UInt64(product)) != 0 }

    mutating func setOwned(_ product: Int, _ value: Bool) {
        guard product < 64 else { return }
        if value { owned |= 1 << UInt64(product) } else { owned &= ~(1 << UInt64(product)) }
    }

    /// Whether the account already used the introductory offer of a group (once per group, as Apple allows).
    func introUsed(_ group: Int) -> Bool { group < 64 && intro & (1 << UInt64(group)) != 0 }

    mutating func setIntroUsed(_ group: Int) { if group < 64 { intro |= 1 << UInt64(group) } }

    /// Keeps the last four refundable purchases (bounded memory per account).
    mutating func remember(_ ref: PurchaseRef) {
        purchases.append(ref)
        if purchases.count > 4 { purchases.removeFirst() }
    }

    mutating func forget(_ transaction: UInt64) { purchases.removeAll { $0.transaction == transaction } }

    mutating func rememberRefund(_ ref: PurchaseRef) {
        refunded.append(ref)
        if refunded.count > 2 { refunded.removeFirst() }
    }
}

/// Something due at a time: an action to hand out, or a timer of the world.
enum Job: Sendable {
    indirect case emit(Action)
    /// A subscription's timer, ignored when the subscription's version moved on since it was set.
    case subscription(account: Int, group: Int, timer: SubscriptionLifecycle.Timer, version: UInt32)
    case askToBuy(account: Int, product: Int, device: Int, approve: Bool)
    case refund(account: Int)
    /// Apple's answer to a refund request, hours after its `CONSUMPTION_REQUEST`: `group` is nil for a one-time
    /// purchase, else the subscription group whose period `transaction` was asked about.
    case refundDecision(account: Int, group: Int?, transaction: UInt64, approve: Bool)
}
