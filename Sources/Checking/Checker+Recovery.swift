public import Chaos
import Primitives
import Profile
import Simulation
import Synchronization
public import TargetContract

// The final probe alone cannot see a fault that later traffic repairs: a grant acknowledged, then lost when the
// target crashed, and delivered again before the end; an expiry applied out of order and overwritten by the next
// renewal. Two reads close those windows. Right after the target comes back, before anything is delivered to the
// accounts it may have lost, a probe must show every grant it acknowledged before it went down (Jepsen's read
// after a nemesis). And during the run, a subscription the target acknowledged as running is entitled, whatever
// it took since: only data that the App Store signed later, and that the books already hold, may end it.

extension Checker {
    /// The accounts whose deliveries the target acknowledged before `down` (seconds since the start of the run)
    /// and after their latest probe asked: what a crash at `down` could have lost, and nothing else.
    /// - Parameter down: when the target stopped answering (a planned restart's kill, or the first refused
    ///   connection of an outage).
    /// - Returns: the accounts, sorted.
    public func accountsAcknowledgedUnprobed(before down: Double) -> [String] {
        let cutoff = Int64((down * 1000).rounded(.down))
        return state.withLock { state in
            state.books.accounts { $0.firstUnread > 0 && $0.firstUnread <= cutoff }.sorted()
        }
    }

    /// Checks a probe made right after the target came back from an outage: the safety invariants as during the
    /// run, and no-lost-purchase for what the target acknowledged before it went down. A grant acknowledged then
    /// and missing now was lost in the outage, whatever later deliveries repair.
    /// - Parameters:
    ///   - account: the `appAccountToken` probed.
    ///   - observed: what the probe returned.
    ///   - t: when the probe answered, seconds since the start of the run.
    ///   - asked: when the probe asked.
    ///   - down: when the target went down (the kill of a planned restart), seconds since the start of the run.
    /// - Returns: one result per invariant checked.
    @discardableResult
    public func checkAfterRecovery(
        account: String,
        state observed: AccountState,
        at t: Double,
        asked: Double,
        down: Double
    ) -> [CheckResult] {
        let cutoff = Int64((down * 1000).rounded(.down))
        return judge(
            account: account,
            observed: observed,
            at: t,
            final: false,
            asked: asked,
            canWait: false,
            down: cutoff
        ) ?? []
    }

    /// No-lost-purchase right after an outage: every verified purchase the target acknowledged before `down`
    /// (milliseconds since the start of the run) and still owes shows. Transactions with a refund in their past
    /// are left to the final probe (a reversal's acknowledgment may still be on its way), and so are
    /// subscriptions (``acknowledgedSubscriptionFinding(_:)`` reads them in every probe). Nil when nothing
    /// acknowledged before the outage is owed now.
    func lostAcrossRestartFinding(_ context: Context, down: Int64) -> Finding? {
        let entitled = Set(context.observed.entitlements.map(\.productId))
        var owedUnits: [String: (units: Int, txs: [OracleTransaction])] = [:]
        var checked = false
        for tx in context.book.txs.values.sorted(by: { $0.sequence < $1.sequence })
        where tx.genuine && !tx.revoked && tx.revokedDate == 0 && tx.acknowledged(by: down) {
            switch tx.type {
            case .nonConsumable, .nonRenewing:
                // A non-renewing subscription is owed for its catalog period only.
                if tx.type == .nonRenewing, (tx.expires ?? .min) <= context.now + context.boundary { continue }
                checked = true
                if !entitled.contains(tx.product) {
                    return lostAcrossRestart(
                        tx,
                        context,
                        down: down,
                        shows: "showed no entitlement to \(tx.product)",
                        about: .transaction(tx.id)
                    )
                }
            case .consumable:
                checked = true
                owedUnits[tx.product, default: (0, [])].units += tx.quantity
                owedUnits[tx.product, default: (0, [])].txs.append(tx)
            case .autoRenewable, nil:
                break
            }
        }
        for (product, owed) in owedUnits.sorted(by: { $0.key < $1.key }) {
            // What folded away is owed too when all of it was acknowledged before the outage. A read judged
            // after later acknowledgments folded cannot tell those units apart, so it counts none of them.
            let folded = context.book.folded[product]
            let lower = owed.units + (folded.map { $0.latestAckMillis <= down ? $0.acked : 0 } ?? 0)
            let balance = context.observed.balances[product] ?? 0
            if balance < lower, let last = owed.txs.last {
                return lostAcrossRestart(
                    last,
                    context,
                    down: down,
                    shows: "showed a balance of \(balance) \(product), below the \(lower) it had acknowledged",
                    about: .product(product),
                    also: owed.txs.dropLast()
                )
            }
        }
        return checked ? .pass : nil
    }

    private func lostAcrossRestart(
        _ tx: OracleTransaction,
        _ context: Context,
        down: Int64,
        shows: String,
        about: Subject,
        also: ArraySlice<OracleTransaction> = []
    ) -> Finding {
        let acknowledged = tx.trail.earliest(.acks).map { "at t=\(format($0))s" } ?? "before it went down"
        return .fail(
            "the target acknowledged purchase \(tx.id) of \(tx.product) \(acknowledged), went down at "
                + "t=\(format(Double(down) / 1000))s, and the first probe after it came back shows it lost",
            context.evidence([tx] + Array(also), [.purchase, .acks]),
            shows,
            about: about
        )
    }

    /// Subscription state during the run: a series the target had acknowledged as running past the probe is
    /// entitled. Only what the books can be sure the target holds counts: a transaction it acknowledged before
    /// the probe asked, with no refund in its past, not superseded by an upgrade it acknowledged, whose
    /// acknowledged expiry is past the boundary, in a series the App Store still has active or in grace, and
    /// nothing of the series acknowledged while the probe was in flight (the target may have read its state
    /// before applying it). Data that ends the series earlier is in the books as soon as it is dispatched, so a
    /// series ended by anything still in flight is not owed. Nil when no series is sure enough to judge.
    func acknowledgedSubscriptionFinding(_ context: Context) -> Finding? {
        var checked = false
        for (original, sub) in context.book.subs {
            guard sub.status == .active || sub.status == .gracePeriod, sub.owed(at: context.now),
                !sub.near(context.now, boundary: context.boundary), sub.lastAcknowledged <= context.asked
            else { continue }
            let known = context.book.txs.values.filter {
                $0.original == original && $0.genuine && $0.acknowledged(by: context.asked)
            }
            let running = known.filter { tx in
                !tx.revoked && tx.revokedDate == 0 && tx.reinstatedDate == 0
                    && (tx.acknowledgedExpires ?? 0) > context.now + context.boundary && !tx.isSuperseded(among: known)
            }
            guard !running.isEmpty else { continue }
            checked = true
            guard !context.observed.entitlements.contains(where: { groupOf[$0.productId] == sub.group }) else {
                continue
            }
            let until = running.compactMap(\.acknowledgedExpires).max() ?? sub.end
            return .fail(
                "subscription \(original) (\(sub.product)) runs until \(until) by what the target acknowledged, "
                    + "and nothing signed later ended it, but the target does not entitle it",
                context.evidence(evidenceParts(running: running, series: original, context)),
                "showed no entitlement in group \(sub.group)",
                about: .transaction(sub.transactionId)
            )
        }
        return checked ? .pass : nil
    }

    /// The running periods' purchases and acknowledgments, and the latest answers of the whole series (a stale
    /// expiry the target took after the renewal, say).
    private func evidenceParts(
        running: [OracleTransaction],
        series original: String,
        _ context: Context
    ) -> [(OracleTransaction, Part)] {
        let series = context.book.txs.values.filter { $0.original == original && $0.genuine }
        return running.map { ($0, .purchase) } + running.map { ($0, .acks) } + series.map { ($0, .recent) }
    }
}

extension Checker {
    /// Whether the account is in the sampled share whose subscription state changes get a safety probe
    /// (`ProbeConfig.windowShare`): drawn from the seed and the token alone, so a replay probes the same accounts.
    public func followsWindows(_ account: String) -> Bool {
        guard windowSample > 0 else { return false }
        guard windowSample < .max else { return true }
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325 ^ seed
        for byte in account.utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        return SplitMix64.mix(hash) < windowSample
    }

    /// Whether the delivery changes a subscription's state as a target keeps it: a purchase, renewal, upgrade or
    /// reinstatement of an auto-renewable subscription, or a status change (expiry, grace, billing retry or
    /// recovery), genuine or not, reordered or retried.
    public func changesSubscriptionState(_ delivery: PlannedDelivery) -> Bool {
        let truth = delivery.action.truth
        switch truth.kind {
        case .grant, .reinstate: return truth.productType == .autoRenewable
        case .subscriptionStatus: return true
        case .revoke, .pending, .none: return false
        }
    }
}
