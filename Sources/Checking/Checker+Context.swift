import Simulation
import TargetContract

extension Checker {
    /// One account's books and its probed state, as the invariants read them.
    struct Context {
        var book: AccountBook
        var observed: AccountState
        var now: Int64
        /// When the probe asked, in milliseconds since the start of the run: the target read its state no
        /// earlier, so only a refund it had acknowledged by then must show.
        var asked: Int64
        /// When the answer came, in milliseconds since the start of the run: the target read its state no later,
        /// so what it acknowledged by then may show.
        var answered: Int64
        var boundary: Int64
        var phrases: [String]
        /// Whether the target can learn of a purchase only from a delivery (no App Store Server API to ask):
        /// then a purchase whose every attempt was refused, or never left the harness, was never credited.
        var learnsOnlyFromDeliveries: Bool
        /// The product of a transaction the App Store emulation disclosed to the account by the probe's answer,
        /// else nil (see `Checker.Disclosure`).
        var disclosed: (String) -> String?

        /// Whether the App Store emulation disclosed transaction `id` (of `product`, when given) to the account by
        /// the probe's answer: issued, though the harness, behind its schedule, may not have booked it yet.
        func isDisclosed(_ id: String, product: String? = nil) -> Bool {
            guard let disclosedProduct = disclosed(id) else { return false }
            return product == nil || product == disclosedProduct
        }

        /// Whether the transaction's refund stood when the probe asked: acknowledged by then. The books may
        /// already hold later answers: a probe's answer can reach the checker after deliveries that followed
        /// it were booked (a `transform` runs off the engine's thread), and the target may have read its
        /// state before applying a refund whose answer came back while the probe was in flight.
        func refundStood(_ tx: OracleTransaction) -> Bool {
            tx.revoked && tx.revocationAcked && tx.revocationAckedMillis <= asked
        }

        /// Whether a transaction of the series that the target had acknowledged when the probe asked still runs
        /// by what it acknowledged: not refunded as far as it knew, not superseded by a later transaction it had
        /// acknowledged, and its acknowledged expiry still ahead. Then a target that entitles the series after
        /// the App Store ended it was never told, or not yet. A transaction whose purchase never reached the
        /// target counts by the notifications that carried it (status or renewal preference changes).
        func stillRunsAsAcknowledged(series original: String) -> Bool {
            let members = book.txs.values.filter {
                $0.original == original && $0.genuine && ($0.acknowledged(by: asked) || $0.hasAcknowledgedData)
            }
            return members.contains { tx in
                !refundStood(tx) && (tx.acknowledgedExpires ?? 0) > now && !tx.isSuperseded(among: members)
            }
        }

        func genuine(_ product: String) -> [(String, OracleTransaction)] {
            book.txs.filter { $0.value.product == product && $0.value.genuine && $0.value.sent }.map {
                ($0.key, $0.value)
            }
        }

        /// The product's verified purchases sent that the target may have credited: all of them, or (see
        /// `learnsOnlyFromDeliveries`) those an attempt of which may have reached it, or still may.
        func creditable(_ product: String) -> [(String, OracleTransaction)] {
            genuine(product).filter { !learnsOnlyFromDeliveries || $0.1.reached || $0.1.chains > 0 }
        }

        /// Units of the product's distinct verified purchases the target may have credited (kept or folded: a
        /// late copy of a folded one is not booked, so folded units all count).
        func genuineUnits(_ product: String) -> Int {
            creditable(product).reduce((book.folded[product]?.sent ?? 0) + unitsCarriedAhead(product)) {
                $0 + $1.1.quantity
            }
        }

        /// Units of the product's purchases that a genuine notification carried ahead of their own deliveries
        /// (a `CONSUMPTION_REQUEST` before a delayed `ONE_TIME_CHARGE`): a target may have credited them from it.
        func unitsCarriedAhead(_ product: String) -> Int {
            guard !book.issuedAhead.isEmpty else { return 0 }
            return book.issuedAhead.values.reduce(0) { $0 + ($1.product == product ? $1.quantity : 0) }
        }

        /// Units of the product's verified purchases sent that no attempt can have brought to the target.
        func unreachedUnits(_ product: String) -> Int {
            genuine(product).reduce(0) { $0 + $1.1.quantity } - creditable(product).reduce(0) { $0 + $1.1.quantity }
        }

        /// Transactions of the product that exist only in forged deliveries, one of which the target may have
        /// credited (see `OracleTransaction.forgeryMayCount`): a target that refused every forgery credited none.
        func forgedOnly(_ product: String) -> [OracleTransaction] {
            book.txs.values.filter { $0.product == product && $0.forged && !$0.genuine && $0.forgeryMayCount }
        }

        /// Units of the product's verified purchases the target may have credited whose refund had not stood
        /// when the probe asked (kept or folded).
        func unitsNotRefunded(_ product: String) -> Int {
            creditable(product).filter { !refundStood($0.1) }.reduce(
                (book.folded[product]?.sentNotRefunded ?? 0) + unitsCarriedAhead(product)
            ) { $0 + $1.1.quantity }
        }

        /// Units of the product beyond the first grant of each transaction the probe lists more than once: what
        /// a double grant adds to its balance (nothing without per-transaction grants).
        func unitsGrantedAgain(_ product: String) -> Int {
            Checker.grantsByTransaction(observed.grants ?? []).reduce(0) { units, grant in
                guard grant.count > 1, let tx = book.txs[grant.transactionId], tx.product == product else {
                    return units
                }
                return units + (grant.count - 1) * tx.quantity
            }
        }

        /// Units of the product that transactions folded away, which the probe lists more than once, may add: at
        /// most the largest folded purchase of it for each grant beyond the first (a folded transaction's product
        /// and quantity are no longer kept).
        func unitsFoldedGrantedAgain(_ product: String) -> Int {
            guard let most = book.folded[product]?.maxQuantity, most > 0 else { return 0 }
            return Checker.grantsByTransaction(observed.grants ?? []).reduce(0) { units, grant in
                guard grant.count > 1, book.txs[grant.transactionId] == nil,
                    let number = UInt64(grant.transactionId), book.foldedIDs.contains(number)
                else { return units }
                return units + (grant.count - 1) * most
            }
        }

        /// Whether the entitlement names a transaction the App Store issued (kept: a folded one's ID is not).
        func namesGenuineTransaction(_ entitlement: AccountState.Entitlement) -> Bool {
            entitlement.transactionId.flatMap { book.txs[$0] }?.genuine == true
        }

        /// Whether any verified purchase of the product was sent (kept or folded).
        func bought(_ product: String) -> Bool {
            book.folded[product] != nil || !genuine(product).isEmpty
                // Issued by the App Store, carried by a genuine notification ahead of its own deliveries.
                || book.issuedAhead.values.contains { $0.product == product }
        }

        /// Whether a sent purchase of the product other than `id` was unrefunded when the probe asked, kept or
        /// folded (see `refundStood`).
        func unrefundedPurchase(of product: String, besides id: String) -> Bool {
            if (book.folded[product]?.unrefunded ?? 0) > 0 { return true }
            return book.txs.values.contains {
                $0.id != id && $0.product == product && $0.genuine && $0.sent && !$0.forged && !refundStood($0)
            }
        }

        /// The chosen parts of each transaction's trail, as witness entries, oldest first.
        func evidence(_ parts: [(OracleTransaction, Part)], pending: WitnessEntry? = nil) -> [WitnessEntry] {
            var seen: Set<[UInt64]> = []
            var entries: [WitnessEntry] = []
            for (tx, part) in parts {
                for entry in tx.trail.entries(part) where seen.insert([entry.delivery, UInt64(entry.phrase)]).inserted {
                    let phrase = Int(entry.phrase) < phrases.count ? phrases[Int(entry.phrase)] : "…"
                    entries.append(
                        WitnessEntry(
                            at: entry.at,
                            delivery: entry.delivery,
                            transactionId: tx.id,
                            sentence: "delivery \(entry.delivery) (transaction \(tx.id)): \(phrase)"
                        )
                    )
                }
            }
            if let pending { entries.append(pending) }
            return Array(entries.sorted { $0.at < $1.at }.suffix(10))
        }

        func evidence(_ txs: [OracleTransaction], _ part: Part, pending: WitnessEntry? = nil) -> [WitnessEntry] {
            evidence(txs.map { ($0, part) }, pending: pending)
        }
    }
}
