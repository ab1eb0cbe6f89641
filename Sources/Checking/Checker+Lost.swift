import Profile
import Simulation
import TargetContract

/// What acknowledged purchases of a consumable add up to, and the transactions that make it up.
private struct OwedUnits {
    var units: [String: Int] = [:]
    var txs: [String: [OracleTransaction]] = [:]
}

/// No lost purchase: what the target acknowledged it must show, and a purchase it rejected at every attempt
/// is lost too.
extension Checker {
    func lostFinding(_ context: Context) -> Finding {
        var undecided = Undecided()
        let entitledProducts = Set(context.observed.entitlements.map(\.productId))
        var owed = OwedUnits()
        for (id, tx) in context.book.txs.sorted(by: { $0.value.sequence < $1.value.sequence })
        where tx.genuine && !tx.revoked {
            if let failure = lostPurchaseFinding(
                tx,
                id: id,
                entitled: entitledProducts,
                context,
                undecided: &undecided,
                owed: &owed
            ) {
                return failure
            }
        }
        if let failure = neverAcceptedFinding(context) { return failure }
        for (product, folded) in context.book.folded where folded.acked > 0 {
            owed.units[product, default: 0] += folded.acked
        }
        if let failure = shortBalanceFinding(owed, context) { return failure }
        return undecided.finding
    }

    /// A kept, unrefunded genuine purchase the target rejected at every attempt, or acknowledged and does not
    /// entitle; a consumable's units are added to what is owed, to be judged by product.
    private func lostPurchaseFinding(
        _ tx: OracleTransaction,
        id: String,
        entitled entitledProducts: Set<String>,
        _ context: Context,
        undecided: inout Undecided,
        owed: inout OwedUnits
    ) -> Finding? {
        if tx.neverAccepted {
            return neverAcceptedFailure(tx, context)
        }
        if tx.awaitingRetry {
            undecided.note("every attempt of purchase \(id) so far was rejected, and another is still to come")
        }
        guard tx.acked else { return nil }
        switch tx.type {
        case .nonConsumable:
            if !entitledProducts.contains(tx.product) {
                return .fail(
                    "the target acknowledged purchase \(id) of \(tx.product) but does not entitle it",
                    context.evidence([tx], [.purchase, .acks, .refund]),
                    "showed no entitlement to \(tx.product)",
                    about: .transaction(id)
                )
            }
        case .nonRenewing:
            // Owed for its catalog period after purchase; after that the target decides when it ends. An
            // entitled product loses nothing, however near the end: only its absence is in doubt there.
            guard let expires = tx.expires, !entitledProducts.contains(tx.product) else { return nil }
            if abs(context.now - expires) < context.boundary {
                undecided.note("\(tx.product) ends within the boundary", later: true)
            } else if context.now < expires {
                return .fail(
                    "the target acknowledged purchase \(id) of \(tx.product), owed until at least \(expires), but does not entitle it",
                    context.evidence([tx], [.purchase, .acks, .refund]),
                    "showed no entitlement to \(tx.product)",
                    about: .transaction(id)
                )
            }
        case .consumable:
            owed.units[tx.product, default: 0] += tx.quantity
            owed.txs[tx.product, default: []].append(tx)
        case .autoRenewable, nil:
            break
        }
        return nil
    }

    /// Purchases rejected at every attempt that were folded away (or sampled): lost, as the target's own
    /// rejections prove.
    private func neverAcceptedFinding(_ context: Context) -> Finding? {
        if let sample = context.book.neverAcceptedSample {
            return neverAcceptedFailure(sample, context, more: context.book.neverAccepted.count)
        } else if let number = context.book.neverAccepted.min() {
            return .fail(
                "genuine delivery never accepted: the target answered every attempt to deliver purchase \(number) with a rejection (\(context.book.neverAccepted.count) such purchases)",
                [],
                "was not needed: the target's own rejections prove it (the run's history lists them)",
                about: .transaction(String(number))
            )
        }
        return nil
    }

    /// A consumable balance below the units of its acknowledged purchases.
    private func shortBalanceFinding(_ owed: OwedUnits, _ context: Context) -> Finding? {
        for (product, lower) in owed.units.sorted(by: { $0.key < $1.key }) {
            let balance = context.observed.balances[product] ?? 0
            if balance < lower {
                // A refund of another purchase of the product that stood when the probe asked is the usual
                // cause (a backend that takes back by product): name it, and put it in the evidence.
                let refund = context.book.txs.values.filter { $0.product == product && context.refundStood($0) }
                    .max { $0.sequence < $1.sequence }
                let after =
                    refund.map {
                        "; it had acknowledged the refund of another purchase of \(product), transaction \($0.id), "
                            + "which takes back only that purchase's \($0.quantity)"
                    } ?? ""
                return .fail(
                    "the target shows \(balance) \(product) but acknowledged purchases of \(lower)" + after,
                    context.evidence(
                        (owed.txs[product] ?? []).map { ($0, .acks) } + (refund.map { [($0, .refund)] } ?? [])
                    ),
                    "showed a balance of \(balance) \(product)",
                    about: .product(product)
                )
            }
        }
        return nil
    }

    func neverAcceptedFailure(_ tx: OracleTransaction, _ context: Context, more: Int = 0) -> Finding {
        let others = more > 1 ? " (and \(more - 1) other purchases of this account)" : ""
        let owned =
            context.observed.entitlements.contains { $0.productId == tx.product }
            ? "showed \(tx.product) entitled, though the target rejected every delivery of this purchase"
            : (context.observed.balances[tx.product] ?? 0) > 0
                ? "showed a balance of \(context.observed.balances[tx.product] ?? 0) \(tx.product); the purchase itself was rejected every time"
                : "showed nothing granted for \(tx.product)"
        return .fail(
            "genuine delivery never accepted: the target answered all \(tx.rejected) attempts to deliver purchase \(tx.id) of \(tx.product) with a rejection (last \(tx.lastRejection))\(others)",
            context.evidence([tx], [.purchase, .rejections]),
            owned,
            about: .transaction(tx.id)
        )
    }

    /// Subscription state covers the target's per-transaction books too: a granted period whose end differs
    /// from the one Apple signed (say a refund that arrived before its renewal, so the target cancelled the
    /// previous period and stretched it over the refunded one) makes the target entitle the subscription for
    /// a time it was not bought, or not for a time it was. That is a wrong subscription state, not a stale
}
