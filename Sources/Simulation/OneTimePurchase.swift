internal import Profile

// One purchase of a consumable, a non-consumable or a non-renewing subscription, as a value state machine.

/// One one-time purchase: bought, refunded, its refund reversed. Events in, ``Effect``s out, as
/// ``SubscriptionLifecycle`` and ``AskToBuy`` do.
///
/// The world numbers the event and the transaction and draws the quantity before the purchase, signs the
/// payloads and carries out the effects in the order given. It keeps the last few purchases of every account,
/// so a purchase fits in 32 bytes.
struct OneTimePurchase: Sendable, Hashable {
    /// Where the purchase stands.
    private enum State: UInt8, Sendable, Hashable {
        case owned, refunded
    }

    /// What the world does after an event, in order.
    enum Effect: Sendable, Hashable {
        /// The purchase reaches the account: the purchaser's purchase result on `device` (none when it came
        /// through an Ask to Buy approval), the other devices' updates and the `ONE_TIME_CHARGE` notification,
        /// under event number `event`.
        case announce(event: UInt64, device: Int, approved: Bool)
        /// The account owns the non-consumable.
        case holdOwnership
        /// The account no longer owns the non-consumable.
        case releaseOwnership
        /// The Family Sharing partner gets its own `FAMILY_SHARED` copy; the world records its number with
        /// ``OneTimePurchase/recordFamilyCopy(_:)``.
        case shareWithFamily
        /// The purchase joins the account's refundable ones.
        case remember
        /// Draw whether a refund follows the purchase mid-stream.
        case drawMidStreamRefund
        /// The purchase leaves the refundable ones for the refunded ones.
        case moveToRefunded
        /// The refunded transaction: a `REFUND` notification and the revoked transaction on the devices.
        case notifyRefund
        /// The partner's `FAMILY_SHARED` copy `transaction` is revoked with the purchaser's (`REVOKE`).
        case revokeFamilyCopy(transaction: UInt64)
        /// The purchase leaves the refunded ones for the refundable ones again.
        case restore
        /// The reinstated transaction: a `REFUND_REVERSED` notification.
        case notifyReversal
        /// The partner's revoked `FAMILY_SHARED` copy `transaction` is reinstated with the purchaser's
        /// (`REFUND_REVERSED`).
        case reinstateFamilyCopy(transaction: UInt64)
    }

    var transaction: UInt64
    var purchaseMs: Int64
    /// The shared transaction's number, 0 when not shared (transaction numbers start above 0).
    private var familyCopy: UInt64 = 0
    /// The product, by catalog index.
    let product: Int32
    private let units: Int16
    let kind: ProductKind
    private var state = State.owned

    /// Whether the purchase is refunded now.
    var isRefunded: Bool { state == .refunded }

    /// How many units were bought.
    var quantity: Int32 { Int32(units) }

    /// The partner's `FAMILY_SHARED` transaction for it, if it was shared.
    var shared: UInt64? { familyCopy == 0 ? nil : familyCopy }

    private init(product: Int32, kind: ProductKind, transaction: UInt64, purchaseMs: Int64, quantity: Int32) {
        self.product = product
        self.kind = kind
        self.transaction = transaction
        self.purchaseMs = purchaseMs
        self.units = Int16(quantity)
    }

    /// A purchase of `quantity` units of `product`, numbered `transaction` under event `event` at `purchaseMs`,
    /// on `device` (or approved through Ask to Buy). A family-shareable non-consumable reaches the partner
    /// when the account has one (`familyShares`).
    static func purchase(
        product: Int32,
        kind: ProductKind,
        transaction: UInt64,
        event: UInt64,
        purchaseMs: Int64,
        quantity: Int32,
        device: Int,
        approved: Bool,
        familyShares: Bool
    ) -> (OneTimePurchase, [Effect]) {
        let purchase = OneTimePurchase(
            product: product,
            kind: kind,
            transaction: transaction,
            purchaseMs: purchaseMs,
            quantity: quantity
        )
        var effects: [Effect] = [.announce(event: event, device: device, approved: approved)]
        if kind == .nonConsumable {
            effects.append(.holdOwnership)
            if familyShares { effects.append(.shareWithFamily) }
        }
        effects += [.remember, .drawMidStreamRefund]
        return (purchase, effects)
    }

    /// Records the number of the partner's `FAMILY_SHARED` copy (after ``Effect/shareWithFamily``).
    mutating func recordFamilyCopy(_ transaction: UInt64) { familyCopy = transaction }

    /// Apple refunds the purchase (and revokes the partner's copy); a refunded purchase is not refunded again.
    mutating func refund() -> [Effect] {
        guard state == .owned else { return [] }
        state = .refunded
        var effects: [Effect] = [.moveToRefunded]
        if kind == .nonConsumable { effects.append(.releaseOwnership) }
        effects.append(.notifyRefund)
        if let shared { effects.append(.revokeFamilyCopy(transaction: shared)) }
        return effects
    }

    /// Apple reverses the refund: the purchase is owed again, and so is the partner's copy the refund revoked.
    mutating func reverseRefund() -> [Effect] {
        guard state == .refunded else { return [] }
        state = .owned
        var effects: [Effect] = [.restore]
        if kind == .nonConsumable { effects.append(.holdOwnership) }
        effects.append(.notifyReversal)
        if let shared { effects.append(.reinstateFamilyCopy(transaction: shared)) }
        return effects
    }
}
