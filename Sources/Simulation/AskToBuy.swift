// One Ask to Buy request, as a value state machine.

/// One Ask to Buy request: a purchase waits for a parent's answer, then goes through or is declined.
///
/// The world draws the answer when the request is made (so the draws stay in the order they always were),
/// numbers events and carries out the ``Effect``s in the order given.
struct AskToBuy: Sendable, Hashable {
    /// Where the request stands.
    enum State: Sendable, Hashable {
        case pending, approved, declined
    }

    /// What the world does after an event, in order.
    enum Effect: Sendable, Hashable {
        /// The device reports the purchase as pending: the account is owed nothing yet.
        case reportPending
        /// The parent answers `seconds` later: schedule the request's ``AskToBuy/answer()``.
        case awaitAnswer(seconds: Double)
        /// A non-consumable counts as owned while it waits, so that it is not asked for twice.
        case holdOwnership
        /// The purchase goes through, as an approved one.
        case complete
        /// The request is declined: a marker, nothing owed.
        case markDeclined
    }

    /// The product asked for, by catalog index.
    let product: Int
    /// The device that asked.
    let device: Int
    /// Whether the parent approves (drawn by the world when the request is made).
    let approve: Bool
    private(set) var state = State.pending

    /// A request for `product` from `device`, answered after `pendingSeconds`.
    static func request(
        product: Int,
        device: Int,
        approve: Bool,
        nonConsumable: Bool,
        pendingSeconds: Double
    ) -> (AskToBuy, [Effect]) {
        let request = AskToBuy(product: product, device: device, approve: approve)
        var effects: [Effect] = [.reportPending, .awaitAnswer(seconds: pendingSeconds)]
        if nonConsumable { effects.append(.holdOwnership) }
        return (request, effects)
    }

    /// The parent's answer comes; a request already answered does nothing.
    mutating func answer() -> [Effect] {
        guard state == .pending else { return [] }
        state = approve ? .approved : .declined
        return approve ? [.complete] : [.markDeclined]
    }
}
