public import Chaos
public import Profile
import Simulation
import Synchronization

/// The oracle and the invariant checker of one run.
///
/// Feed it every planned delivery when it is dispatched (``sent(_:at:)``, which applies the action's truth),
/// every outcome (``record(_:outcome:at:)``), and every probe result (``check(account:state:at:final:)``).
/// Then ask for the ``verdict(unchecked:)``. Thread-safe: every method takes a short lock.
///
/// A delivery without an answer is indeterminate (Jepsen's `:info`): the checker accepts either outcome for it
/// but never a second grant. "No lost purchase" is required of acknowledged (2xx) purchases, and of genuine
/// purchases whose every attempt (retries and redeliveries included) the target answered with a rejection.
/// Results near an expiry or a state change (within ``Options/boundarySeconds``) are unknown, never pass or fail.
/// A non-renewing subscription must be entitled for its catalog period after purchase; after that the target
/// decides when it ends (Apple's transaction carries no expiry), so either answer is accepted.
///
/// ```swift
/// let checker = Checker(profile: profile, startMillis: start)
/// checker.sent(delivery, at: now)
/// checker.record(delivery, outcome: .acknowledged(status: 200), at: now)
/// _ = checker.check(account: token, state: try await probe.state(of: token), at: now, final: true)
/// let verdict = checker.verdict(unchecked: Checker.unchecked(target: profile.target, probeReturnsGrants: true))
/// ```
public final class Checker: Sendable {
    /// Tuning of the checker.
    public struct Options: Sendable, Hashable {
        /// Results within this many seconds of an expiry or of a state change are unknown.
        public var boundarySeconds: Double = 2
        /// Whether a subscription in billing retry (without grace) must be entitled: nil accepts either.
        public var billingRetryEntitled: Bool? = nil
        /// Most witnesses kept (all violations are counted).
        public var maxWitnesses = 1000
        /// The verdict is unknown when more than this fraction of decided-or-not checks is unknown.
        public var maxUnknownFraction = 0.2
        /// Recent history entries kept per transaction for witnesses, besides the decisive ones (the purchase,
        /// the first two and the latest acknowledgments, the first and the latest rejection, the refund).
        public var entriesPerTransaction = 3
        /// When an account holds more transactions than this, the oldest settled ones (consumables, past
        /// subscription periods, ended non-renewing subscriptions, purchases whose every attempt was rejected)
        /// fold into per-product counts, so memory grows with accounts rather than with actions. A folded
        /// purchase still counts as bought and as unrefunded; folding only loosens bounds and never creates a
        /// violation.
        public var foldAbove = 16

        /// The defaults.
        public init() {}
    }

    private let state: Mutex<State>
    private let options: Options
    private let startMillis: Int64
    private let seed: UInt64
    private let groupOf: [String: String]
    private let typeOf: [String: ProductKind]
    /// Decides whether a rejected attempt will be retried or redelivered, so that "every attempt was rejected"
    /// is known only once the last one was answered (the same pure policy the run uses).
    private let policy: ChaosPolicy
    /// Whether device deliveries reach the target at all: without a device endpoint they are never attempted.
    private let devicesReachable: Bool

    /// Creates the checker of a run.
    /// - Parameters:
    ///   - profile: the run's profile (catalog and seed).
    ///   - startMillis: the world's t = 0 in wall-clock milliseconds.
    ///   - options: tuning.
    public init(profile: Profile, startMillis: Int64, options: Options = Options()) {
        self.options = options
        self.startMillis = startMillis
        self.seed = profile.seed
        var groupOf: [String: String] = [:]
        var typeOf: [String: ProductKind] = [:]
        for product in profile.catalog.products {
            typeOf[product.id] = product.type
            if let group = product.group { groupOf[product.id] = group }
        }
        self.groupOf = groupOf
        self.typeOf = typeOf
        self.policy = ChaosPolicy(profile: profile)
        self.devicesReachable = profile.target.embeddedLedger || profile.target.deviceURL != nil
        state = Mutex(State())
    }

    // MARK: - Feeding

    /// Records that a delivery is dispatched (call it before sending, and also for markers that send nothing):
    /// applies its truth to the oracle. Its history entry says "was dispatched": whether it was sent is known
    /// only from its outcome (``record(_:outcome:at:)``).
    public func sent(_ delivery: PlannedDelivery, at t: Double) {
        let action = delivery.action
        let truth = action.truth
        let phrase = describe(delivery) + (delivery.sends ? " was dispatched" : " happened")
        let limit = options.entriesPerTransaction
        let foldAbove = options.foldAbove
        // Retries and redeliveries continue the attempt chain of the delivery they follow; any other copy starts
        // its own chain (see `Tx.chains`).
        let startsChain = delivery.sends && delivery.copy != .retry && delivery.copy != .redelivery
        state.withLock { state in
            var book = state.books[action.appAccountToken] ?? Book()
            let entry = LogEntry(at: t, delivery: delivery.id, phrase: state.intern(phrase))
            book.latest = max(book.latest, truth.effectiveDate)
            defer {
                if book.txs.count > foldAbove { book.fold(keep: foldAbove / 2) }
                state.books[action.appAccountToken] = book
            }
            if delivery.isForged {
                if let id = truth.transactionId {
                    var tx = book.txs[id] ?? book.newTx(id, product: truth.productId ?? "?", type: truth.productType)
                    tx.forged = true
                    // What a target that trusts the forgery would credit: the payload's quantity.
                    if !tx.genuine { tx.quantity = truth.quantity }
                    tx.trail.note(entry, as: .purchase, limit: limit)
                    book.txs[id] = tx
                }
                state.mark(action.appAccountToken)
                return
            }
            switch truth.kind {
            case .grant, .reinstate:
                guard let id = truth.transactionId, let product = truth.productId else { return }
                // A late copy of a transaction already folded into the counts: counted once, ignore it. If every
                // earlier attempt was rejected, this copy may still be accepted: it is no longer known as lost.
                if book.txs[id] == nil, let number = UInt64(id), book.foldedIDs.contains(number) {
                    book.accepted(number)
                    return
                }
                var tx = book.txs[id] ?? book.newTx(id, product: product, type: truth.productType)
                tx.genuine = true
                tx.sent = tx.sent || delivery.sends
                if truth.kind == .grant && startsChain { tx.chains += 1 }
                tx.quantity = truth.quantity
                tx.group = truth.groupId
                tx.original = truth.originalTransactionId
                tx.expires = truth.expiresDate
                if truth.kind == .reinstate { tx.reinstatedDate = max(tx.reinstatedDate, truth.effectiveDate) }
                // The latest signedDate decides between a refund and its reversal, whatever their arrival order.
                if truth.kind == .reinstate && tx.revoked && truth.effectiveDate > tx.revokedDate {
                    // The target owes it again only once it acknowledges the reversal.
                    tx.acked = false
                    tx.revoked = false
                    tx.revocationAcked = false
                    book.gone.remove(id)
                    book.gone.remove("product:" + product)
                }
                tx.trail.note(entry, as: .purchase, limit: limit)
                book.txs[id] = tx
                if let old = truth.supersedes { book.txs[old]?.superseded = true }
                if truth.productType == .autoRenewable { book.apply(truth) }
            case .revoke:
                guard let id = truth.transactionId else { return }
                if book.txs[id] == nil, let product = truth.productId, var folded = book.folded[product] {
                    // A refund of a transaction folded away: its units may have been counted as owed. Refunded
                    // entitlements are never folded, so a folded one was unrefunded until now.
                    folded.acked = max(0, folded.acked - truth.quantity)
                    if truth.productType != .consumable, let number = UInt64(id), book.foldedIDs.contains(number) {
                        folded.unrefunded = max(0, folded.unrefunded - 1)
                    }
                    book.folded[product] = folded
                }
                // A refunded purchase is not lost, whatever its deliveries got.
                if let number = UInt64(id) { book.accepted(number) }
                var tx = book.txs[id] ?? book.newTx(id, product: truth.productId ?? "?", type: truth.productType)
                tx.genuine = true
                if truth.effectiveDate < tx.reinstatedDate {
                    // A refund older than a reversal already seen (a reordered delivery): the reversal stands.
                    tx.trail.note(entry, as: .refund, limit: limit)
                    book.txs[id] = tx
                    state.mark(action.appAccountToken)
                    return
                }
                if !tx.revoked { tx.revokedDate = truth.effectiveDate }
                tx.revoked = true
                tx.trail.note(entry, as: .refund, limit: limit)
                book.txs[id] = tx
                if truth.productType == .autoRenewable { book.apply(truth) }
                state.mark(action.appAccountToken)
            case .subscriptionStatus:
                book.apply(truth)
                if let id = truth.transactionId { book.txs[id]?.trail.note(entry, as: .recent, limit: limit) }
            case .pending:
                if let product = truth.productId {
                    book.pending[product] = WitnessEntry(
                        at: t,
                        delivery: delivery.id,
                        transactionId: nil,
                        sentence: "delivery \(delivery.id): " + phrase
                    )
                    state.mark(action.appAccountToken)
                }
            case .none:
                if let id = truth.transactionId { book.txs[id]?.trail.note(entry, as: .recent, limit: limit) }
            }
        }
    }

    /// Records what happened to a dispatched delivery.
    public func record(_ delivery: PlannedDelivery, outcome: DeliveryOutcome, at t: Double) {
        let truth = delivery.action.truth
        let phrase = describe(delivery) + " " + describe(outcome)
        let limit = options.entriesPerTransaction
        var isDevice = false
        switch delivery.action.delivery {
        case .device, .report: isDevice = true
        case .notification, .marker: break
        }
        // Whether the App Store or the device will try this delivery again (also after a refused connection):
        // until the last attempt is answered, a rejection is not final.
        let continues =
            !delivery.isForged && truth.kind == .grant
            && policy.followUps(after: delivery, outcome: outcome, at: t).contains {
                $0.copy == .retry || $0.copy == .redelivery
            }
        let neverAttempted = isDevice && !devicesReachable
        state.withLock { state in
            if !delivery.isForged, truth.kind != .pending, truth.kind != .none, !neverAttempted {
                state.genuineDispatched += 1
                switch outcome {
                case .acknowledged: state.genuineAcknowledged += 1
                case .rejected: state.genuineRejected += 1
                case .indeterminate, .notSent: break
                }
            }
            guard var book = state.books[delivery.action.appAccountToken] else { return }
            let entry = LogEntry(at: t, delivery: delivery.id, phrase: state.intern(phrase))
            defer { state.books[delivery.action.appAccountToken] = book }
            guard let id = truth.transactionId else { return }
            guard var tx = book.txs[id] else {
                // A folded transaction: an acknowledged late copy means it was accepted after all.
                if outcome.isAcknowledged, let number = UInt64(id) { book.accepted(number) }
                return
            }
            defer { book.txs[id] = tx }
            // Answers to a purchase (or to a forged copy) are the decisive ones; keep them apart from the rest.
            var part = Part.recent
            if truth.kind == .revoke && !delivery.isForged {
                part = .refund
            } else if truth.kind == .grant || truth.kind == .reinstate || delivery.isForged {
                switch outcome {
                case .acknowledged: part = .acks
                case .rejected: part = .rejections
                case .indeterminate, .notSent: part = .recent
                }
            }
            tx.trail.note(entry, as: part, limit: limit)
            guard !delivery.isForged else { return }
            let acked = outcome.isAcknowledged
            switch truth.kind {
            case .grant, .reinstate:
                if acked {
                    tx.acked = true
                    tx.accepted = true
                }
                switch outcome {
                case .acknowledged: break
                case .rejected(let status):
                    if truth.kind == .grant {
                        tx.rejected += 1
                        tx.lastRejection = status
                    }
                case .indeterminate: tx.indeterminate = true
                // A refused attempt that is retried tells nothing: the retries decide.
                case .notSent: if !neverAttempted && truth.kind == .grant && !continues { tx.unsent = true }
                }
                // Each chain ends once: at the answer of its last attempt.
                if truth.kind == .grant && !continues { tx.chains = max(0, tx.chains - 1) }
            case .revoke:
                if acked { tx.revocationAcked = true }
                if case .indeterminate = outcome { tx.revocationIndeterminate = true }
            case .subscriptionStatus, .pending, .none:
                break
            }
        }
    }

    /// The accounts that had an Ask to Buy, a forgery or a refund since the last call: the ones worth a safety
    /// probe during the run.
    public func drainAccountsOfInterest() -> [String] {
        state.withLock { state in
            defer { state.interesting.removeAll(keepingCapacity: true) }
            return state.interesting.sorted()
        }
    }

    /// The checks of each invariant so far and the violations found, for a live metrics endpoint; safe from
    /// any thread, and cheap (no witness is copied).
    public func liveTallies() -> (tallies: [Invariant: Tally], violations: Int) {
        state.withLock { ($0.tallies, $0.violationCount) }
    }

    /// What the oracle keeps for one account (for tests of its memory): the transactions kept, the slots
    /// reserved for them, the bytes of one slot, the folded transaction IDs and the bytes those take.
    func storage(
        of account: String
    ) -> (kept: Int, reserved: Int, recordBytes: Int, foldedIDs: Int, foldedIDBytes: Int) {
        state.withLock { state in
            let book = state.books[account] ?? Book()
            return (
                book.txs.count, book.txs.capacity, MemoryLayout<Tx>.stride, book.foldedIDs.count,
                book.foldedIDs.bytes
            )
        }
    }

    /// Every account the oracle knows (to probe at settle), sorted.
    public func knownAccounts() -> [String] { state.withLock { $0.books.keys.sorted() } }

    /// Records that a probe of an account failed: each invariant it would have checked is unknown.
    public func probeFailed(account: String, error: any Error, at t: Double, final: Bool) {
        let invariants =
            final ? Invariant.allCases : [.noDoubleGrant, .noUnlockWithoutVerifiedPurchase, .noStaleRegression]
        // A ProbeError already says it is a probe's ("probe failed: …"); other errors get that said once here.
        let reason = error is ProbeError ? "\(error)" : "probe failed: \(error)"
        state.withLock { state in
            if final {
                state.finalProbes += 1
                state.finalProbeFailures += 1
                if state.firstFinalProbeFailure == nil { state.firstFinalProbeFailure = reason }
            }
            for invariant in invariants {
                state.tallies[invariant, default: Tally()].unknown += 1
                state.sampleUnknown("\(invariant.rawValue) \(account): \(reason)")
            }
        }
    }

    // MARK: - Checking

    /// Checks every invariant that applies to one probe result.
    /// - Parameters:
    ///   - account: the `appAccountToken` probed.
    ///   - observed: what the probe returned.
    ///   - t: when the probe answered, seconds since the start of the run.
    ///   - final: true after the settle time (all six invariants); false during the run (safety invariants only).
    /// - Returns: one result per invariant checked.
    @discardableResult
    public func check(account: String, state observed: AccountState, at t: Double, final: Bool) -> [CheckResult] {
        let now = startMillis + Int64((t * 1000).rounded())
        return state.withLock { state in
            // UUIDs compare case-insensitively: a probe may name the account as the backend stores it.
            let account =
                state.books[account] == nil && state.books[AccountToken.canonical(account)] != nil
                ? AccountToken.canonical(account) : account
            if final { state.finalProbes += 1 }
            var book = state.books[account] ?? Book()
            var findings: [Invariant: Finding] = [:]
            let context = Context(
                book: book,
                observed: observed,
                now: now,
                boundary: Int64(options.boundarySeconds * 1000),
                phrases: state.phrases
            )
            findings[.noUnlockWithoutVerifiedPurchase] = unlockFinding(context)
            findings[.noDoubleGrant] = doubleGrantFinding(context)
            findings[.noStaleRegression] = regressionFinding(context, book: &book)
            if final {
                findings[.revocationHonored] = revocationFinding(context)
                findings[.noLostPurchase] = lostFinding(context)
                findings[.subscriptionState] = subscriptionFinding(context)
            }
            state.books[account] = book
            var results: [CheckResult] = []
            for invariant in Invariant.allCases {
                guard let finding = findings[invariant] else { continue }
                let outcome: CheckResult.Outcome
                switch finding {
                case .pass:
                    outcome = .pass
                    state.tallies[invariant, default: Tally()].passed += 1
                case .unknown(let reason):
                    outcome = .unknown(reason)
                    state.tallies[invariant, default: Tally()].unknown += 1
                    state.sampleUnknown("\(invariant.rawValue) \(account) at \(format(t))s: \(reason)")
                case .fail(let summary, let entries, let shows):
                    let witness = Witness(
                        invariant: invariant,
                        account: account,
                        at: t,
                        summary: summary,
                        entries: entries.sorted { $0.at < $1.at },
                        proof: "the probe at t=\(format(t))s " + shows,
                        observed: observed,
                        seed: seed
                    )
                    outcome = .fail(witness)
                    state.tallies[invariant, default: Tally()].failed += 1
                    state.violationCount += 1
                    if state.witnesses.count < options.maxWitnesses { state.witnesses.append(witness) }
                }
                results.append(CheckResult(invariant: invariant, account: account, outcome: outcome))
            }
            return results
        }
    }

    /// The invariants a run cannot check with this target configuration.
    /// - Parameters:
    ///   - target: the profile's target.
    ///   - probeReturnsGrants: whether the probe's answers carried `grants` (nil if unknown yet).
    public static func unchecked(target: Target, probeReturnsGrants: Bool?) -> [Unchecked] {
        guard target.probe != nil || target.embeddedLedger else {
            return Invariant.allCases.map {
                Unchecked(invariant: $0, reason: "no probe (target.probe): what the target grants cannot be read")
            }
        }
        var list: [Unchecked] = []
        if probeReturnsGrants == false {
            list.append(
                Unchecked(
                    invariant: .noDoubleGrant,
                    reason: "partly: the probe returns no grants, so only consumable balances show double grants"
                )
            )
        }
        if target.deviceURL == nil && !target.embeddedLedger {
            list.append(
                Unchecked(
                    invariant: .noLostPurchase,
                    reason:
                        "partly: no device endpoint (target.deviceURL), so device deliveries and redeliveries are not exercised"
                )
            )
        }
        return list
    }

    /// The verdict so far.
    /// - Parameter unchecked: what the run could not check (see ``unchecked(target:probeReturnsGrants:)``).
    public func verdict(unchecked: [Unchecked]) -> Verdict {
        state.withLock { state in
            let totals = state.tallies.values.reduce(into: Tally()) {
                $0.passed += $1.passed
                $0.failed += $1.failed
                $0.unknown += $1.unknown
            }
            let all = totals.passed + totals.failed + totals.unknown
            let outcome: Verdict.Outcome
            var reason: String?
            if state.violationCount > 0 {
                outcome = .fail
            } else if state.genuineDispatched > 0 && state.genuineAcknowledged == 0 {
                // Invariants "hold" trivially on a target that accepted nothing: such a run proves nothing.
                outcome = .unknown
                reason =
                    state.genuineRejected > 0
                    ? "the target acknowledged none of the \(state.genuineDispatched) genuine deliveries "
                        + "(\(state.genuineRejected) rejected, the rest unanswered or not sent), so the invariants held only on an empty state"
                    : "none of the \(state.genuineDispatched) genuine deliveries got a 2xx answer, so nothing was checked"
            } else if totals.passed == 0 || Double(totals.unknown) > options.maxUnknownFraction * Double(all) {
                outcome = .unknown
                reason =
                    totals.passed == 0
                    ? "no check could decide"
                    : "\(totals.unknown) of \(all) checks could not decide (more than \(Int(options.maxUnknownFraction * 100))%)"
                // Failed probes are the usual cause, and the one a user can fix: say so first.
                if state.finalProbeFailures > 0, let undecided = reason {
                    reason =
                        "\(state.finalProbeFailures) of \(state.finalProbes) final probes failed: "
                        + "\(state.firstFinalProbeFailure ?? "?"); \(undecided)"
                }
            } else {
                outcome = .pass
            }
            return Verdict(
                outcome: outcome,
                reason: reason,
                violations: state.witnesses,
                violationCount: state.violationCount,
                tallies: state.tallies,
                unknownSamples: (reason.map { [$0] } ?? []) + state.unknownSamples,
                unchecked: unchecked,
                seed: seed
            )
        }
    }

    // MARK: - Invariants

    private struct Context {
        var book: Book
        var observed: AccountState
        var now: Int64
        var boundary: Int64
        var phrases: [String]

        func genuine(_ product: String) -> [(String, Tx)] {
            book.txs.filter { $0.value.product == product && $0.value.genuine && $0.value.sent }.map {
                ($0.key, $0.value)
            }
        }

        /// Units of the product's distinct verified purchases sent (kept or folded).
        func genuineUnits(_ product: String) -> Int {
            genuine(product).reduce(book.folded[product]?.sent ?? 0) { $0 + $1.1.quantity }
        }

        /// Transactions of the product that exist only in forged deliveries.
        func forgedOnly(_ product: String) -> [Tx] {
            book.txs.values.filter { $0.product == product && $0.forged && !$0.genuine }
        }

        /// Whether any verified purchase of the product was sent (kept or folded).
        func bought(_ product: String) -> Bool {
            book.folded[product] != nil || !genuine(product).isEmpty
        }

        /// Whether a sent purchase of the product other than `id` is unrefunded, kept or folded.
        func unrefundedPurchase(of product: String, besides id: String) -> Bool {
            if (book.folded[product]?.unrefunded ?? 0) > 0 { return true }
            return book.txs.values.contains {
                $0.id != id && $0.product == product && $0.genuine && $0.sent && !$0.revoked && !$0.forged
            }
        }

        /// The chosen parts of each transaction's trail, as witness entries, oldest first.
        func evidence(_ parts: [(Tx, Part)], pending: WitnessEntry? = nil) -> [WitnessEntry] {
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

        func evidence(_ txs: [Tx], _ part: Part, pending: WitnessEntry? = nil) -> [WitnessEntry] {
            evidence(txs.map { ($0, part) }, pending: pending)
        }
    }

    private func unlockFinding(_ c: Context) -> Finding {
        for entitlement in c.observed.entitlements {
            if let id = entitlement.transactionId, let tx = c.book.txs[id], tx.forged && !tx.genuine {
                return .fail(
                    "the target entitles \(entitlement.productId) through transaction \(id), which exists only in a forged delivery",
                    c.evidence([tx], .all),
                    showing(entitlement)
                )
            }
            if !c.bought(entitlement.productId) {
                let forged = c.book.txs.values.filter { $0.product == entitlement.productId && $0.forged }
                if let pending = c.book.pending[entitlement.productId] {
                    return .fail(
                        "the target entitles \(entitlement.productId), whose only purchase was pending (Ask to Buy) or declined",
                        c.evidence(forged, .all, pending: pending),
                        showing(entitlement)
                    )
                }
                let how =
                    forged.isEmpty ? "no purchase of it was ever sent" : "only forged transactions of it were sent"
                return .fail(
                    "the target entitles \(entitlement.productId) but \(how)",
                    c.evidence(forged, .all),
                    showing(entitlement)
                )
            }
        }
        for (product, balance) in c.observed.balances where balance > 0 && !c.bought(product) {
            let forged = c.book.txs.values.filter { $0.product == product && $0.forged }
            let pending = c.book.pending[product]
            return .fail(
                "the target shows a balance of \(balance) \(product) but no verified purchase of it was sent",
                c.evidence(forged, .all, pending: pending),
                "showed a balance of \(balance) \(product)"
            )
        }
        for (product, balance) in c.observed.balances where balance > 0 && c.bought(product) {
            // More than the genuine purchases allow, and forged transactions of the product can explain the
            // excess: a forgery was credited. (A probe without per-transaction grants cannot tell it from a
            // double grant; forged units covering the excess make the forgery the plainer reading.)
            let upper = c.genuineUnits(product)
            let forged = c.forgedOnly(product)
            let forgedUnits = forged.reduce(0) { $0 + $1.quantity }
            if balance > upper && forgedUnits > 0 && balance <= upper + forgedUnits {
                return .fail(
                    "the target shows \(balance) \(product) but the verified purchases sent add up to \(upper), and "
                        + "forged transactions of it were sent: a forgery was credited (or, if the target rejected "
                        + "them all, a purchase was credited twice)",
                    c.evidence(forged + c.genuine(product).map(\.1), .all),
                    "showed a balance of \(balance) \(product)"
                )
            }
        }
        for grant in c.observed.grants ?? [] where grant.count > 0 {
            guard let tx = c.book.txs[grant.transactionId] else {
                if let number = UInt64(grant.transactionId), c.book.foldedIDs.contains(number) { continue }
                return .fail(
                    "the target granted transaction \(grant.transactionId), which the App Store never issued",
                    [],
                    showing(grant)
                )
            }
            if tx.forged && !tx.genuine {
                return .fail(
                    "the target granted transaction \(grant.transactionId), which exists only in a forged delivery",
                    c.evidence([tx], .all),
                    showing(grant)
                )
            }
        }
        return .pass
    }

    private func doubleGrantFinding(_ c: Context) -> Finding {
        for grant in c.observed.grants ?? [] where grant.count > 1 {
            let tx = c.book.txs[grant.transactionId]
            // The decisive events: the copies the target acknowledged (each one a grant).
            return .fail(
                "the target granted transaction \(grant.transactionId) \(grant.count) times",
                c.evidence(tx.map { [$0] } ?? [], [.purchase, .acks, .recent]),
                showing(grant)
            )
        }
        for (product, balance) in c.observed.balances where balance > 0 {
            let sent = c.genuine(product)
            guard c.bought(product) else { continue }
            let upper = c.genuineUnits(product)
            // An excess that forged units explain is filed as an unlock without a verified purchase.
            let forgedUnits = c.forgedOnly(product).reduce(0) { $0 + $1.quantity }
            if balance > upper && !(forgedUnits > 0 && balance <= upper + forgedUnits) {
                return .fail(
                    "the target shows \(balance) \(product) but the distinct purchases sent add up to \(upper)",
                    c.evidence(sent.map(\.1), .acks),
                    "showed a balance of \(balance) \(product)"
                )
            }
        }
        return .pass
    }

    private func regressionFinding(_ c: Context, book: inout Book) -> Finding {
        var failure: Finding?
        var observedMax: [String: Int64] = [:]
        for entitlement in c.observed.entitlements {
            guard let group = groupOf[entitlement.productId], let expires = entitlement.expiresDate else { continue }
            observedMax[group] = max(observedMax[group] ?? .min, expires)
        }
        for (group, seen) in observedMax {
            if let previous = book.maxSeenExpiry[group], seen < previous,
                let truth = book.subs.values.first(where: { $0.group == group }), truth.expires >= previous,
                truth.status != .revoked
            {
                // The stale delivery that set the older expiry, and the newer one it overrode.
                let stale = book.txs.values.filter { $0.group == group && $0.acked && $0.expires == seen }
                let newer = book.txs.values.filter { $0.group == group && $0.acked && $0.expires == previous }
                let txs = stale.isEmpty ? book.txs.values.filter { $0.group == group && $0.acked } : stale + newer
                failure =
                    failure
                    ?? .fail(
                        "the target moved the expiry of group \(group) back from \(previous) to \(seen) ms although no newer data shortened it",
                        c.evidence(Array(txs), .acks),
                        "showed group \(group) expiring at \(seen) ms, after \(previous) ms earlier"
                    )
            }
            book.maxSeenExpiry[group] = max(book.maxSeenExpiry[group] ?? .min, seen)
        }
        let entitledIDs = Set(c.observed.entitlements.compactMap(\.transactionId))
        let entitledProducts = Set(c.observed.entitlements.map(\.productId))
        for (id, tx) in book.txs where tx.revoked && tx.revocationAcked && tx.genuine {
            if entitledIDs.contains(id) {
                if book.gone.contains(id) {
                    failure =
                        failure
                        ?? .fail(
                            "transaction \(id) of \(tx.product) was revoked, disappeared, then came back without a refund reversal",
                            c.evidence([tx], [.refund, .acks]),
                            "showed entitlement \(tx.product) (transaction \(id)) again"
                        )
                }
            } else {
                book.gone.insert(id)
            }
            guard tx.type == .nonConsumable, !c.unrefundedPurchase(of: tx.product, besides: id) else { continue }
            let key = "product:" + tx.product
            if entitledProducts.contains(tx.product) {
                if book.gone.contains(key) {
                    failure =
                        failure
                        ?? .fail(
                            "\(tx.product) was revoked, disappeared, then came back without a refund reversal",
                            c.evidence([tx], [.refund, .acks]),
                            "showed entitlement \(tx.product) again"
                        )
                }
            } else {
                book.gone.insert(key)
            }
        }
        return failure ?? .pass
    }

    private func revocationFinding(_ c: Context) -> Finding {
        var unknown: String?
        // The target's own books: a transaction the App Store refunded must read `revoked` there.
        for listed in c.observed.transactions ?? [] where listed.state == .granted {
            guard let tx = c.book.txs[listed.transactionId], tx.genuine, tx.revoked, tx.revocationAcked else {
                continue
            }
            return .fail(
                "the target's books still show refunded transaction \(listed.transactionId) of \(tx.product) as granted",
                c.evidence([tx], [.purchase, .refund, .acks]),
                showing(listed)
            )
        }
        let entitledProducts = Set(c.observed.entitlements.map(\.productId))
        for (id, tx) in c.book.txs.sorted(by: { $0.value.sequence < $1.value.sequence })
        where tx.revoked && tx.genuine {
            guard tx.revocationAcked else {
                if tx.revocationIndeterminate { unknown = "the refund of \(id) got no answer" }
                continue
            }
            if let entitlement = c.observed.entitlements.first(where: { $0.transactionId == id }) {
                return .fail(
                    "the target still entitles \(tx.product) through refunded transaction \(id)",
                    c.evidence([tx], [.purchase, .refund, .acks]),
                    showing(entitlement)
                )
            }
            switch tx.type {
            case .nonConsumable, .nonRenewing:
                // Another unrefunded purchase of the product, kept or folded, may be what the target entitles.
                if entitledProducts.contains(tx.product) && !c.unrefundedPurchase(of: tx.product, besides: id) {
                    let entitlement = c.observed.entitlements.first { $0.productId == tx.product }
                    return .fail(
                        "the target still entitles \(tx.product) although its only purchase \(id) was refunded",
                        c.evidence([tx], [.purchase, .refund, .acks]),
                        entitlement.map(showing) ?? "showed entitlement \(tx.product)"
                    )
                }
                // Revoked too much: the refund of this transaction also took away another, unrefunded one.
                if !entitledProducts.contains(tx.product), let victim = overRevoked(by: tx, c) {
                    return .fail(
                        "the target revoked too much: the refund of transaction \(id) also removed unrefunded transaction \(victim.id) of \(tx.product)",
                        c.evidence([(tx, .refund), (victim, [.purchase, .acks])]),
                        "showed no entitlement to \(tx.product)"
                    )
                }
            case .autoRenewable:
                if let group = tx.group, let sub = c.book.subs[tx.original ?? ""], sub.status == .revoked,
                    let entitlement = c.observed.entitlements.first(where: { groupOf[$0.productId] == group })
                {
                    return .fail(
                        "the target still entitles subscription group \(group) although transaction \(id) was refunded",
                        c.evidence([tx], [.purchase, .refund]),
                        showing(entitlement)
                    )
                }
            case .consumable, nil:
                break
            }
        }
        for (product, balance) in c.observed.balances where typeOf[product] == .consumable {
            let sent = c.genuine(product)
            let refunded = sent.filter { $0.1.revoked && $0.1.revocationAcked }
            guard !refunded.isEmpty else { continue }
            let allowed = sent.filter { !($0.1.revoked && $0.1.revocationAcked) }.reduce(
                c.book.folded[product]?.sentNotRefunded ?? 0
            ) { $0 + $1.1.quantity }
            // Units that forged transactions explain are an unlock without a verified purchase (filed there);
            // only what remains beyond them proves a refund was not taken back.
            let upper = c.genuineUnits(product)
            let forgedUnits = c.forgedOnly(product).reduce(0) { $0 + $1.quantity }
            let forgedExplains = forgedUnits > 0 && balance > upper && balance <= upper + forgedUnits
            if (forgedExplains ? balance - forgedUnits : balance) > allowed {
                return .fail(
                    "the target shows \(balance) \(product) but only \(allowed) remain once refunds are taken back",
                    c.evidence(refunded.map(\.1), .refund),
                    "showed a balance of \(balance) \(product)"
                )
            }
        }
        return unknown.map { .unknown($0) } ?? .pass
    }

    /// An acknowledged, unrefunded purchase of the same product that the target no longer entitles after
    /// `refunded`'s refund, if one is owed now (a non-renewing one only within its period, away from its end).
    private func overRevoked(by refunded: Tx, _ c: Context) -> Tx? {
        c.book.txs.values.filter { tx in
            guard tx.id != refunded.id, tx.product == refunded.product, tx.genuine, tx.acked, !tx.revoked,
                !tx.forged
            else { return false }
            guard tx.type == .nonRenewing else { return true }
            guard let expires = tx.expires else { return false }
            return c.now + c.boundary < expires
        }.min { $0.sequence < $1.sequence }
    }

    private func lostFinding(_ c: Context) -> Finding {
        var unknown: String?
        let entitledProducts = Set(c.observed.entitlements.map(\.productId))
        var owed: [String: Int] = [:]
        var owedTxs: [String: [Tx]] = [:]
        for (id, tx) in c.book.txs.sorted(by: { $0.value.sequence < $1.value.sequence })
        where tx.genuine && !tx.revoked {
            if tx.neverAccepted {
                return neverAcceptedFailure(tx, c)
            }
            if tx.awaitingRetry {
                unknown = "every attempt of purchase \(id) so far was rejected, and another is still to come"
            }
            guard tx.acked else { continue }
            switch tx.type {
            case .nonConsumable:
                if !entitledProducts.contains(tx.product) {
                    return .fail(
                        "the target acknowledged purchase \(id) of \(tx.product) but does not entitle it",
                        c.evidence([tx], [.purchase, .acks, .refund]),
                        "showed no entitlement to \(tx.product)"
                    )
                }
            case .nonRenewing:
                // Owed for its catalog period after purchase; after that the target decides when it ends.
                guard let expires = tx.expires else { continue }
                if abs(c.now - expires) < c.boundary {
                    unknown = "\(tx.product) ends within the boundary"
                } else if c.now < expires && !entitledProducts.contains(tx.product) {
                    return .fail(
                        "the target acknowledged purchase \(id) of \(tx.product), owed until at least \(expires), but does not entitle it",
                        c.evidence([tx], [.purchase, .acks, .refund]),
                        "showed no entitlement to \(tx.product)"
                    )
                }
            case .consumable:
                owed[tx.product, default: 0] += tx.quantity
                owedTxs[tx.product, default: []].append(tx)
            case .autoRenewable, nil:
                break
            }
        }
        if let sample = c.book.neverAcceptedSample {
            return neverAcceptedFailure(sample, c, more: c.book.neverAccepted.count)
        } else if let number = c.book.neverAccepted.min() {
            return .fail(
                "genuine delivery never accepted: the target answered every attempt to deliver purchase \(number) with a rejection (\(c.book.neverAccepted.count) such purchases)",
                [],
                "was not needed: the target's own rejections prove it (the run's history lists them)"
            )
        }
        for (product, folded) in c.book.folded where folded.acked > 0 { owed[product, default: 0] += folded.acked }
        for (product, lower) in owed.sorted(by: { $0.key < $1.key }) {
            let balance = c.observed.balances[product] ?? 0
            if balance < lower {
                return .fail(
                    "the target shows \(balance) \(product) but acknowledged purchases of \(lower)",
                    c.evidence(owedTxs[product] ?? [], .acks),
                    "showed a balance of \(balance) \(product)"
                )
            }
        }
        return unknown.map { .unknown($0) } ?? .pass
    }

    private func neverAcceptedFailure(_ tx: Tx, _ c: Context, more: Int = 0) -> Finding {
        let others = more > 1 ? " (and \(more - 1) other purchases of this account)" : ""
        let owned =
            c.observed.entitlements.contains { $0.productId == tx.product }
            ? "showed \(tx.product) entitled, though the target rejected every delivery of this purchase"
            : (c.observed.balances[tx.product] ?? 0) > 0
                ? "showed a balance of \(c.observed.balances[tx.product] ?? 0) \(tx.product); the purchase itself was rejected every time"
                : "showed nothing granted for \(tx.product)"
        return .fail(
            "genuine delivery never accepted: the target answered all \(tx.rejected) attempts to deliver purchase \(tx.id) of \(tx.product) with a rejection (last \(tx.lastRejection))\(others)",
            c.evidence([tx], [.purchase, .rejections]),
            owned
        )
    }

    /// Subscription state covers the target's per-transaction books too: a granted period whose end differs
    /// from the one Apple signed (say a refund that arrived before its renewal, so the target cancelled the
    /// previous period and stretched it over the refunded one) makes the target entitle the subscription for
    /// a time it was not bought, or not for a time it was. That is a wrong subscription state, not a stale
    /// regression: no older data overrode newer, the target computed the period wrongly from current data.
    private func subscriptionFinding(_ c: Context) -> Finding {
        var unknown: String?
        for listed in c.observed.transactions ?? [] where listed.state == .granted {
            // An upgraded (superseded) period may legitimately end early; a refunded one is revocation's.
            guard let end = listed.periodEnd, let tx = c.book.txs[listed.transactionId], tx.genuine, tx.acked,
                !tx.revoked, !tx.superseded, tx.type == .autoRenewable, let truthEnd = tx.expires
            else { continue }
            if abs(end - truthEnd) > c.boundary {
                return .fail(
                    "the target's books give transaction \(listed.transactionId) of \(tx.product) a period ending at \(end), but the App Store signed \(truthEnd)",
                    c.evidence([tx], [.purchase, .acks, .refund, .recent]),
                    showing(listed)
                )
            }
        }
        for (original, sub) in c.book.subs where sub.status != .revoked {
            let entitlement = c.observed.entitlements.first { groupOf[$0.productId] == sub.group }
            let entitled = entitlement != nil
            let end = sub.status == .gracePeriod ? (sub.grace ?? sub.expires) : sub.expires
            let nearBoundary =
                abs(c.now - sub.expires) < c.boundary || abs(c.now - end) < c.boundary
                || c.now - sub.truthDate < c.boundary
            let series = c.book.txs.values.filter { $0.original == original && $0.genuine && !$0.revoked }
            if nearBoundary {
                unknown = "subscription \(original) is within \(c.boundary) ms of an expiry or a change"
                continue
            }
            let shows = entitlement.map(showing) ?? "showed no entitlement in group \(sub.group)"
            if sub.status == .billingRetry {
                guard let rule = options.billingRetryEntitled, entitled != rule else { continue }
                return .fail(
                    "subscription \(original) is in billing retry, where the profile wants entitled = \(rule)",
                    c.evidence(Array(series), [.purchase, .acks]),
                    shows
                )
            }
            let truthEntitled = (sub.status == .active || sub.status == .gracePeriod) && c.now < end
            // The level owed is the current transaction's: an upgrade (also by an offer) takes effect at once,
            // a downgrade only at the next renewal. Judged once the target acknowledged that transaction.
            if truthEntitled, let entitlement, entitlement.productId != sub.product,
                let current = c.book.txs[sub.transactionId], current.acked, !current.revoked
            {
                return .fail(
                    "subscription \(original) is owed \(sub.product) since transaction \(sub.transactionId), which the target acknowledged, but the target entitles \(entitlement.productId)",
                    c.evidence([current], [.purchase, .acks, .recent]),
                    showing(entitlement)
                )
            }
            if truthEntitled && !entitled {
                let covering = series.filter { ($0.expires ?? 0) > c.now + c.boundary }
                if covering.contains(where: \.acked) {
                    return .fail(
                        "subscription \(original) (\(sub.product)) is active until \(end) and the target acknowledged it, but does not entitle it",
                        c.evidence(covering, [.purchase, .acks]),
                        shows
                    )
                }
                if covering.contains(where: \.indeterminate) {
                    unknown = "the current period of subscription \(original) got no answer"
                }
            } else if !truthEntitled && entitled {
                return .fail(
                    "subscription \(original) (\(sub.product)) ended at \(end) (status \(sub.status)) but the target still entitles group \(sub.group)",
                    c.evidence(Array(series), [.acks, .refund, .recent]),
                    shows
                )
            }
        }
        return unknown.map { .unknown($0) } ?? .pass
    }

    private func showing(_ entitlement: AccountState.Entitlement) -> String {
        var text = "showed entitlement \(entitlement.productId)"
        if let id = entitlement.transactionId { text += " (transaction \(id))" }
        if let expires = entitlement.expiresDate { text += " until \(expires)" }
        return text
    }

    private func showing(_ listed: AccountState.TransactionState) -> String {
        var text = "listed transaction \(listed.transactionId) of \(listed.productId) as \(listed.state.rawValue)"
        if let start = listed.periodStart, let end = listed.periodEnd {
            text += " for \(start)–\(end)"
        } else if let end = listed.periodEnd {
            text += " until \(end)"
        }
        return text
    }

    private func showing(_ grant: AccountState.Grant) -> String {
        "showed transaction \(grant.transactionId) granted \(grant.count) time\(grant.count == 1 ? "" : "s")"
    }

    // MARK: - Sentences

    private func describe(_ delivery: PlannedDelivery) -> String {
        var text: String
        switch delivery.action.delivery {
        case .notification(let note):
            text = "webhook \(note.notificationType)\(note.subtype.map { "/" + $0 } ?? "")"
        case .device(let device):
            text = "device \(device.device) (\(device.source.rawValue)) delivery"
        case .report(let report):
            text = "device report \(report.purchaseResult) for \(report.productId)"
        case .marker:
            text = "\(delivery.action.lifecycle.rawValue)"
        }
        if delivery.copy != .original { text += " [\(delivery.copy.rawValue)]" }
        if let forgery = delivery.forgery { text += " [forged: \(forgery)\(Self.apiAnswer(to: delivery))]" }
        let faults = delivery.faults.map(\.fault).filter { $0 != "duplicate" && $0 != "forgery" }
        if !faults.isEmpty { text += " [\(faults.joined(separator: ", "))]" }
        return text
    }

    /// What the App Store Server API answers when a backend asks it about a pulled forgery's id: the
    /// witness of a grant names it, since that answer is what the backend should have believed.
    static func apiAnswer(to delivery: PlannedDelivery) -> String {
        guard case .device(let device) = delivery.action.delivery else { return "" }
        switch delivery.forgery {
        case "made-up-transaction-id":
            return "; transaction \(device.transaction.transactionId), which the App Store Server API answers with "
                + "404 TransactionIdNotFoundError (4040010)"
        case "other-account-transaction-id":
            return "; transaction \(device.transaction.transactionId) of another account, whose signed answer from "
                + "the App Store Server API carries that account's appAccountToken, not "
                + delivery.action.appAccountToken
        default:
            return ""
        }
    }

    private func describe(_ outcome: DeliveryOutcome) -> String {
        switch outcome {
        case .acknowledged(let status): "was acknowledged with \(status)"
        case .rejected(let status): "was rejected with \(status)"
        case .indeterminate(let reason): "got no answer (\(reason)); the target may or may not have committed it"
        case .notSent(let reason, _): "was not sent (\(reason))"
        }
    }
}

// MARK: - Oracle state

private enum Finding {
    case pass
    case unknown(String)
    /// The summary, the witness entries, and what the probe showed (a phrase after "the probe at t=…s").
    case fail(String, [WitnessEntry], String)
}

/// One line of a transaction's history, compact: the sentence is interned in the checker's phrase table.
private struct LogEntry: Sendable {
    var at: Double
    var delivery: UInt64
    var phrase: UInt32
    /// The trail's part it is kept under (a `Part` raw value), in what would be padding.
    var part: UInt8 = 0
}

/// Which parts of a transaction's trail a witness cites.
private struct Part: OptionSet, Sendable {
    let rawValue: UInt8
    /// The first dispatch of the transaction (its purchase).
    static let purchase = Part(rawValue: 1)
    /// Acknowledged deliveries: the first two (a double grant's two copies) and the latest (a replay).
    static let acks = Part(rawValue: 2)
    /// Rejected deliveries: the first and the latest.
    static let rejections = Part(rawValue: 4)
    /// The refund's dispatch and answers.
    static let refund = Part(rawValue: 8)
    /// The latest other entries.
    static let recent = Part(rawValue: 16)
    static let all: Part = [.purchase, .acks, .rejections, .refund, .recent]
}

/// A transaction's evidence, bounded: a witness needs the decisive events, not the whole history. Kept in
/// one array, each entry tagged with its part, so a transaction holds one allocation rather than one a part.
private struct Trail: Sendable {
    private var kept: [LogEntry] = []

    mutating func note(_ entry: LogEntry, as part: Part, limit: Int) {
        var entry = entry
        entry.part = part.rawValue
        switch part {
        case .purchase:
            if kept.contains(where: { $0.part == Part.purchase.rawValue }) {
                note(entry, as: .recent, limit: limit)
            } else {
                kept.append(entry)
            }
        case .acks: keep(entry, 3)
        case .rejections: keep(entry, 2)
        case .refund: keep(entry, 3)
        default:
            guard limit > 0 else { return }
            entry.part = Part.recent.rawValue
            let recent = kept.indices.filter { kept[$0].part == entry.part }
            if recent.count >= limit, let oldest = recent.first { kept.remove(at: oldest) }
            kept.append(entry)
        }
    }

    /// Keeps the first `count - 1` entries of the entry's part and the latest one.
    private mutating func keep(_ entry: LogEntry, _ count: Int) {
        let same = kept.indices.filter { kept[$0].part == entry.part }
        if same.count < count { kept.append(entry) } else { kept[same[count - 1]] = entry }
    }

    /// The entries of the chosen parts: the purchase, acknowledgments, rejections, refund, then the rest.
    func entries(_ parts: Part) -> [LogEntry] {
        var list: [LogEntry] = []
        for part in [Part.purchase, .acks, .rejections, .refund, .recent] where parts.contains(part) {
            list += kept.filter { $0.part == part.rawValue }
        }
        return list
    }
}

/// Quantities of transactions folded away (see `Checker.Options.foldAbove`).
private struct Folded: Sendable {
    /// Units of verified purchases sent.
    var sent = 0
    /// Units acknowledged and not refunded.
    var acked = 0
    /// Units sent and not refunded with an acknowledged refund.
    var sentNotRefunded = 0
    /// Non-consumable and non-renewing purchases sent and not refunded: a refund of another purchase of the
    /// product does not end the entitlement while one remains.
    var unrefunded = 0
}

/// One transaction's truth and answers. A soak keeps up to `Checker.Options.foldAbove` of these for every
/// account for the whole run, so the scalars are stored narrow (counts and statuses in 32 bits, flags in
/// bits, the original transaction ID as a number) behind full-width accessors: 128 bytes instead of 216,
/// and no string of its own for each period of a subscription.
private struct Tx: KeyedByID, Sendable {
    var id: String
    var product: String
    var group: String?
    var revokedDate: Int64 = 0
    /// The signedDate of the latest refund reversal seen.
    var reinstatedDate: Int64 = 0
    var trail = Trail()
    private var storedExpires = Int64.min
    private var originalNumber: UInt64 = 0
    private var originalText: String?
    private var storedQuantity: Int32 = 1
    private var storedRejected: Int32 = 0
    private var storedLastRejection: Int32 = 0
    private var storedChains: Int32 = 0
    private var storedSequence: UInt32
    private var flags: UInt16 = 0
    var type: ProductKind?

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
    /// A decimal ID is kept as its number; anything else (never minted by the world) as text.
    var original: String? {
        get { originalNumber != 0 ? String(originalNumber) : originalText }
        set {
            if let newValue, let number = UInt64(newValue), number != 0, String(number) == newValue {
                originalNumber = number
                originalText = nil
            } else {
                originalNumber = 0
                originalText = newValue
            }
        }
    }
    /// Attempts of the purchase answered with a rejection.
    var rejected: Int {
        get { Int(storedRejected) }
        set { storedRejected = Int32(clamping: newValue) }
    }
    var lastRejection: Int {
        get { Int(storedLastRejection) }
        set { storedLastRejection = Int32(clamping: newValue) }
    }
    /// Attempt chains still open: each copy of a purchase delivery starts one, and it ends with the answer to
    /// its last retry or redelivery. Apple's retries, device redeliveries and any later retry policy all
    /// continue a chain, so "every attempt was rejected" includes them.
    var chains: Int {
        get { Int(storedChains) }
        set { storedChains = Int32(clamping: newValue) }
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
    /// An attempt chain of the purchase ended with an attempt that never left the harness (missed slot,
    /// refused connection), so the target may never have seen it.
    var unsent: Bool {
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

    init(id: String, sequence: UInt64, product: String, type: ProductKind?) {
        self.id = id
        // An account's count of transactions: far below 2^32 in any run.
        self.storedSequence = UInt32(truncatingIfNeeded: sequence)
        self.product = product
        self.type = type
    }

    /// Answered, and only with rejections, with no attempt left: the target said no to a genuine purchase.
    /// Timeouts, resets and unsent attempts leave it unknown.
    var neverAccepted: Bool {
        genuine && !forged && rejected > 0 && !accepted && chains == 0 && !indeterminate && !unsent && !revoked
    }

    /// Rejected so far, with a retry or redelivery still to come.
    var awaitingRetry: Bool {
        genuine && !forged && rejected > 0 && !accepted && chains > 0 && !indeterminate && !unsent && !revoked
    }
}

private struct Sub: Sendable {
    var group: String
    var product: String
    var transactionId: String
    var status: SubscriptionStatus
    var expires: Int64
    var grace: Int64?
    var truthDate: Int64
}

private struct Book: Sendable {
    /// The transactions kept (not folded), in the order first seen.
    var txs = SmallTable<Tx>()
    var subs: [String: Sub] = [:]
    var pending: [String: WitnessEntry] = [:]
    var maxSeenExpiry: [String: Int64] = [:]
    var gone: Set<String> = []
    var folded: [String: Folded] = [:]
    /// IDs of folded transactions (about 4 bytes each), so late copies are not counted twice.
    var foldedIDs = CompactIDSet()
    /// IDs of folded purchases whose every attempt was rejected, and the first of them, kept for its witness.
    var neverAccepted: Set<UInt64> = []
    var neverAcceptedSample: Tx?
    var sequence: UInt64 = 0
    var latest: Int64 = 0

    /// Forgets that a folded purchase had every attempt rejected (a later copy may be accepted, or it was
    /// refunded).
    mutating func accepted(_ number: UInt64) {
        guard neverAccepted.remove(number) != nil else { return }
        if neverAcceptedSample.flatMap({ UInt64($0.id) }) == number { neverAcceptedSample = nil }
    }

    mutating func newTx(_ id: String, product: String, type: ProductKind?) -> Tx {
        sequence += 1
        return Tx(id: id, sequence: sequence, product: product, type: type)
    }

    /// Folds the oldest settled transactions into per-product counts until at most `keep` remain (or none is
    /// settled). Settled: a verified consumable whose refund, if any, was answered; a subscription period that
    /// is no longer current; an unrefunded non-renewing subscription a minute past its catalog period; a purchase
    /// whose every attempt was rejected. Refunded non-consumables and non-renewing subscriptions stay, so a
    /// folded one is known to be unrefunded.
    mutating func fold(keep: Int) {
        let settled = txs.values.filter { tx in
            guard tx.genuine, !tx.forged, tx.chains == 0 else { return false }
            if tx.neverAccepted { return true }
            guard !(tx.revoked && !tx.revocationAcked), !tx.indeterminate else { return false }
            switch tx.type {
            case .consumable: return tx.sent
            case .autoRenewable:
                guard let original = tx.original, let sub = subs[original] else { return false }
                return sub.transactionId != tx.id && (tx.expires ?? .max) <= sub.expires
            case .nonRenewing: return !tx.revoked && tx.expires.map { $0 + 60_000 < latest } ?? false
            case .nonConsumable, nil: return false
            }
        }.sorted { $0.sequence < $1.sequence }
        for tx in settled.prefix(max(0, txs.count - keep)) {
            txs[tx.id] = nil
            if let number = UInt64(tx.id) {
                foldedIDs.insert(number)
                if tx.neverAccepted {
                    neverAccepted.insert(number)
                    if neverAcceptedSample == nil { neverAcceptedSample = tx }
                }
            }
            var folded = self.folded[tx.product] ?? Folded()
            switch tx.type {
            case .consumable:
                folded.sent += tx.quantity
                if tx.acked && !tx.revoked { folded.acked += tx.quantity }
                if !(tx.revoked && tx.revocationAcked) { folded.sentNotRefunded += tx.quantity }
            case .nonConsumable, .nonRenewing:
                if tx.sent && !tx.revoked { folded.unrefunded += 1 }
            case .autoRenewable, nil:
                break
            }
            self.folded[tx.product] = folded
        }
        txs.shrink()
    }

    /// Applies a subscription truth if it is not older than what is known (truths are snapshots by date).
    mutating func apply(_ truth: Truth) {
        guard let original = truth.originalTransactionId, let group = truth.groupId, let status = truth.status,
            let product = truth.productId, let transaction = truth.transactionId
        else { return }
        if let current = subs[original], current.truthDate > truth.effectiveDate { return }
        subs[original] = Sub(
            group: group,
            product: product,
            transactionId: transaction,
            status: status,
            expires: truth.expiresDate ?? 0,
            grace: truth.gracePeriodExpiresDate,
            truthDate: truth.effectiveDate
        )
    }
}

private struct State: Sendable {
    var books: [String: Book] = [:]
    var tallies: [Invariant: Tally] = [:]
    var witnesses: [Witness] = []
    var violationCount = 0
    var unknownSamples: [String] = []
    var interesting: Set<String> = []
    /// Genuine deliveries (purchases, refunds, reversals, renewals) whose outcome came in, and how many of them
    /// the target acknowledged or rejected: a run that acknowledged none cannot pass.
    var genuineDispatched = 0
    var genuineAcknowledged = 0
    var genuineRejected = 0
    /// Final probes answered or failed, the failures, and the first failure's reason (the verdict quotes it).
    var finalProbes = 0
    var finalProbeFailures = 0
    var firstFinalProbeFailure: String?
    var phrases: [String] = []
    var phraseIndex: [String: UInt32] = [:]

    /// Interns a phrase; past 100,000 distinct phrases, new ones share a placeholder.
    mutating func intern(_ phrase: String) -> UInt32 {
        if let index = phraseIndex[phrase] { return index }
        guard phrases.count < 100_000 else { return UInt32.max }
        let index = UInt32(phrases.count)
        phrases.append(phrase)
        phraseIndex[phrase] = index
        return index
    }

    mutating func mark(_ account: String) {
        if interesting.count < 10_000 { interesting.insert(account) }
    }

    mutating func sampleUnknown(_ text: String) {
        if unknownSamples.count < 100 { unknownSamples.append(text) }
    }
}
