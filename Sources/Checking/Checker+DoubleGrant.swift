import Profile
import Simulation
import TargetContract

/// No double grant: a transaction granted once, and a consumable balance within the units bought.
extension Checker {
    func doubleGrantFinding(_ context: Context) -> Finding {
        for grant in Self.grantsByTransaction(context.observed.grants ?? []) where grant.count > 1 {
            let tx = context.book.txs[grant.transactionId]
            // The decisive events: the copies the target acknowledged (each one a grant).
            return .fail(
                "the target granted transaction \(grant.transactionId) \(grant.count) times",
                context.evidence(tx.map { [$0] } ?? [], [.purchase, .acks, .recent]),
                showing(grant),
                about: .transaction(grant.transactionId)
            )
        }
        for (product, balance) in context.observed.balances where balance > 0 {
            let sent = context.genuine(product)
            guard context.bought(product) else { continue }
            let upper = context.genuineUnits(product)
            // An excess that forged units explain is filed as an unlock without a verified purchase.
            let forgedUnits = context.forgedOnly(product).reduce(0) { $0 + $1.quantity }
            if balance > upper && !(forgedUnits > 0 && balance <= upper + forgedUnits) {
                let unreached = context.unreachedUnits(product)
                let besides =
                    unreached > 0
                    ? " (\(unreached) more were sent, but every attempt was refused or never left the harness)" : ""
                return .fail(
                    "the target shows \(balance) \(product) but the distinct purchases sent add up to \(upper)"
                        + besides,
                    context.evidence(sent.map(\.1), .acks),
                    "showed a balance of \(balance) \(product)",
                    about: .product(product)
                )
            }
        }
        return .pass
    }

    /// The grants with one entry per transaction, counts summed, in the order first listed: a probe that lists
    /// a row per credit (a transform over a credits table) names a transaction credited twice twice.
    static func grantsByTransaction(_ grants: [AccountState.Grant]) -> [AccountState.Grant] {
        var merged: [AccountState.Grant] = []
        var index: [String: Int] = [:]
        for grant in grants {
            if let at = index[grant.transactionId] {
                merged[at].count += grant.count
            } else {
                index[grant.transactionId] = merged.count
                merged.append(grant)
            }
        }
        return merged
    }
}
