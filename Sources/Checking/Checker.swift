public import Chaos
public import Profile
import Simulation
import Synchronization
public import TargetContract

/// The oracle and the invariant checker of one run.
///
/// Feed it every planned delivery when it is dispatched (``sent(_:at:)``, which applies the action's truth),
/// every outcome (``record(_:outcome:at:)``), and every probe result (``check(account:state:at:final:asked:)``);
/// deliveries the harness shed go in runs through ``bookMissed(_:reason:)``.
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

    let state: Mutex<OracleState>
    let options: Options
    let startMillis: Int64
    let seed: UInt64
    let groupOf: [String: String]
    let typeOf: [String: ProductKind]
    /// Each catalog product's label (its ID and group), shared by its transactions.
    let labels: [String: Label]
    /// Decides whether a rejected attempt will be retried or redelivered, so that "every attempt was rejected"
    /// is known only once the last one was answered (the same pure policy the run uses).
    let policy: ChaosPolicy
    /// Whether device deliveries reach the target at all: without a device endpoint they are never attempted.
    let devicesReachable: Bool
    /// Whether device reports have an endpoint (`target.deviceReport`, or contract v1's at the device URL).
    let reportsReachable: Bool
    /// Whether the target learns of purchases only from deliveries: the run serves it no App Store Server API
    /// whose transaction history could name a purchase no delivery brought.
    let learnsOnlyFromDeliveries: Bool
    /// How long after its acknowledgment a refund may fold (milliseconds): past the probe's timeout, so no
    /// probe still to be judged asked before the refund stood, with a minute to spare.
    let refundsSettle: Int64
    /// The real-time buffer the target declares it keeps past each expiry (milliseconds; 0: none).
    let expiryGrace: Int64
    /// Accounts whose subscription state changes get a safety probe: those whose hash (with the seed) falls
    /// below this share of `UInt64.max` (see `ProbeConfig.windowShare`).
    let windowSample: UInt64
    /// What the run's App Store emulation tells a backend, if it has one (see ``Disclosure``).
    let disclosure: Disclosure?

    /// The product of a transaction that the run's App Store emulation (the App Store Server API, `verifyReceipt`,
    /// receipts in device requests) discloses to an account by a time, else nil; its arguments are the
    /// transaction ID, the account's `appAccountToken` and the time in UNIX milliseconds. The emulation knows a
    /// purchase from its intended time, while a harness behind its schedule books it only when it releases a
    /// delivery of it: a transaction disclosed to the account by the probe's answer is one the App Store issued.
    public typealias Disclosure = @Sendable (_ transactionId: String, _ account: String, _ millis: Int64) -> String?

    /// Creates the checker of a run.
    /// - Parameters:
    ///   - profile: the run's profile (catalog and seed).
    ///   - startMillis: the world's t = 0 in wall-clock milliseconds.
    ///   - options: tuning.
    ///   - disclosure: what the run's App Store emulation discloses to a backend, if the run has one.
    public init(profile: Profile, startMillis: Int64, options: Options = Options(), disclosure: Disclosure? = nil) {
        self.options = options
        self.disclosure = disclosure
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
        self.labels = Dictionary(
            profile.catalog.products.map { ($0.id, Label(product: $0.id, group: $0.group)) },
            uniquingKeysWith: { _, last in last }
        )
        self.policy = ChaosPolicy(profile: profile)
        self.devicesReachable = profile.target.embeddedLedger || profile.target.deviceURL != nil
        self.reportsReachable = profile.target.embeddedLedger || profile.target.deviceReport != nil
        self.learnsOnlyFromDeliveries = profile.target.appStoreAPI == nil
        self.refundsSettle = Int64((60 + (profile.target.probe?.timeoutSeconds ?? 30)) * 1000)
        self.expiryGrace = Int64(((profile.target.probe?.expiryGraceSeconds ?? 0) * 1000).rounded())
        let share = profile.target.probe?.windowShare ?? ProbeConfig.defaultWindowShare
        self.windowSample = share >= 1 ? .max : UInt64(share * 0x1p64)
        var initial = OracleState()
        initial.books.reserve(accounts: profile.population.accounts)
        state = Mutex(initial)
    }

    /// The label of a product and group: the catalog's shared one when they match it, else a new one (a
    /// forgery or a refund seen before its purchase names no group yet).
    func label(_ product: String, group: String?) -> Label {
        if let label = labels[product], label.group == group { return label }
        return Label(product: product, group: group)
    }

    // MARK: - Feeding

    /// Records that a delivery is dispatched (call it before sending, and also for markers that send nothing):
    /// applies its truth to the oracle. Its history entry says "was dispatched" (or that it had no endpoint to go
    /// to): whether it was sent is known only from its outcome (``record(_:outcome:at:)``).
    public func sent(_ delivery: PlannedDelivery, at t: Double) {
        // Most deliveries' phrases are looked up; the rest are made before taking the lock.
        let key = PhraseKey.of(delivery)
        let made = key == nil ? describe(delivery) + dispatched(delivery) : nil
        state.withLock { state in
            var phrase = state.cachedPhrase(key, interned: true)
            if phrase == nil {
                phrase = state.phrase(key, interned: true) { made ?? describe(delivery) + dispatched(delivery) }
            }
            guard let phrase else { return }
            let entry = LogEntry(at: t, delivery: delivery.id, phrase: phrase.index ?? .max)
            dispatch(delivery, entry: entry, sentence: { phrase.text }, at: t, in: &state)
        }
    }

    /// Records what happened to a dispatched delivery.
    public func record(_ delivery: PlannedDelivery, outcome: DeliveryOutcome, at t: Double) {
        let key = PhraseKey.of(delivery, outcome: outcome)
        let made = key == nil ? describe(delivery) + " " + describe(outcome) : nil
        let continues = continuesChain(delivery, outcome: outcome, at: t)
        let fate = notificationFate(delivery, outcome: outcome, at: t)
        state.withLock { state in
            state.reach.note(outcome, at: t)
            // A delivery of an account the oracle never saw dispatched: nothing to book (as before, no phrase).
            let known =
                state.books.position(of: delivery.action.appAccountToken, index: delivery.action.account) != nil
            var phrase = state.cachedPhrase(key, interned: known)
            if phrase == nil {
                phrase = state.phrase(key, interned: known) { made ?? describe(delivery) + " " + describe(outcome) }
            }
            guard let phrase else { return }
            let entry = known ? LogEntry(at: t, delivery: delivery.id, phrase: phrase.index ?? .max) : nil
            answer(
                delivery,
                outcome: outcome,
                continues: continues,
                notification: fate,
                entry: entry,
                sentence: { phrase.text },
                at: t,
                in: &state
            )
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

    /// How many distinct phrases the history entries share (for tests of its memory).
    var phraseCount: Int { state.withLock { $0.phrases.count } }

    /// What the oracle keeps for one account (for tests of its memory): the transactions kept, the slots
    /// reserved for them, the bytes of one slot, the folded transaction IDs and the bytes those take, and the
    /// refunds folded.
    func storage(
        of account: String
    ) -> (kept: Int, reserved: Int, recordBytes: Int, foldedIDs: Int, foldedIDBytes: Int, foldedRefunds: Int) {
        state.withLock { state in
            let book = state.books[account] ?? AccountBook()
            return (
                book.txs.count, book.txs.capacity, MemoryLayout<OracleTransaction>.stride, book.foldedIDs.count,
                book.foldedIDs.bytes, book.foldedRefunds.count
            )
        }
    }

    /// Every account the oracle knows (to probe at settle), sorted.
    public func knownAccounts() -> [String] { state.withLock { $0.books.accounts.sorted() } }

    /// Records that a probe of an account failed: each invariant it would have checked is unknown.
    public func probeFailed(account: String, error: any Error, at t: Double, final: Bool) {
        let invariants =
            final
            ? Invariant.probed
            : [.noDoubleGrant, .noUnlockWithoutVerifiedPurchase, .noDoubleRefund, .noStaleRegression]
        // A ProbeError already says it is a probe's ("probe failed: …"); other errors get that said once here.
        let reason = error is ProbeError ? "\(error)" : "probe failed: \(error)"
        state.withLock { state in
            if final {
                state.finalProbes += 1
                state.finalProbeFailures += 1
                if state.firstFinalProbeFailure == nil { state.firstFinalProbeFailure = reason }
            }
            // No-double-refund is checked only on probes that list refunds: until one did, a failed probe
            // leaves it as it was (unchecked), not undecided.
            for invariant in invariants where invariant != .noDoubleRefund || state.tallies[invariant] != nil {
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
    ///   - final: true after the settle time (every invariant a probe checks, ``Invariant/probed``); false during the run (safety invariants only).
    ///   - asked: when the probe asked (the target read its state between then and `t`), if earlier than `t`:
    ///     a refund acknowledged after it may not show in the answer yet.
    /// - Returns: one result per invariant checked.
    @discardableResult
    public func check(
        account: String,
        state observed: AccountState,
        at t: Double,
        final: Bool,
        asked: Double? = nil
    ) -> [CheckResult] {
        judge(account: account, observed: observed, at: t, final: final, asked: asked, canWait: false, down: nil) ?? []
    }

    /// A final check that may wait: like ``check(account:state:at:final:asked:)`` with `final` true, but when
    /// nothing failed and an invariant is undecided only because the probe came within the boundary of an
    /// expiry or a state change, nothing is counted and nil comes back: probe the account again once
    /// ``waitSeconds`` have passed, and check that answer with ``check(account:state:at:final:asked:)``.
    public func checkFinal(account: String, state observed: AccountState, at t: Double) -> [CheckResult]? {
        judge(account: account, observed: observed, at: t, final: true, asked: nil, canWait: true, down: nil)
    }

    /// How long after a probe that ``checkFinal(account:state:at:)`` put off a new probe is past the boundary
    /// that kept it undecided.
    public var waitSeconds: Double { 2 * options.boundarySeconds + 0.5 }

    /// - Parameter down: for a probe right after the target came back, when it went down (milliseconds since the
    ///   start of the run): what it acknowledged before then must show (see ``checkAfterRecovery(account:state:at:asked:down:)``).
    func judge(
        account: String,
        observed: AccountState,
        at t: Double,
        final: Bool,
        asked: Double?,
        canWait: Bool,
        down: Int64?
    ) -> [CheckResult]? {
        let now = startMillis + Int64((t * 1000).rounded())
        return state.withLock { state in
            // UUIDs compare case-insensitively: a probe may name the account as the backend stores it.
            let account =
                state.books[account] == nil && state.books[AccountToken.canonical(account)] != nil
                ? AccountToken.canonical(account) : account
            var book = state.books[account] ?? AccountBook()
            var findings: [Invariant: Finding] = [:]
            let context = Context(
                book: book,
                observed: observed,
                now: now,
                asked: Int64((min(asked ?? t, t) * 1000).rounded(.down)),
                answered: Int64((t * 1000).rounded(.up)),
                boundary: Int64(options.boundarySeconds * 1000),
                phrases: state.phrases,
                learnsOnlyFromDeliveries: learnsOnlyFromDeliveries,
                disclosed: { [disclosure] id in disclosure?(id, account, now) }
            )
            findings[.noUnlockWithoutVerifiedPurchase] = unlockFinding(context)
            noteUnlocksOnPending(context, book: &book)
            findings[.noDoubleGrant] = doubleGrantFinding(context)
            if let refunds = doubleRefundFinding(context) { findings[.noDoubleRefund] = refunds }
            findings[.noStaleRegression] = regressionFinding(context, book: &book)
            // Everything acknowledged before the probe asked was read (what came after still waits for a read).
            if book.lastAcknowledged <= context.asked { book.firstUnread = 0 }
            if !final {
                findings[.subscriptionState] = acknowledgedSubscriptionFinding(context)
            }
            if let down {
                findings[.noLostPurchase] = lostAcrossRestartFinding(context, down: down)
            }
            if final {
                findings[.revocationHonored] = revocationFinding(context)
                findings[.noLostPurchase] = lostFinding(context)
                findings[.subscriptionState] = subscriptionFinding(context)
            }
            // What the probe showed is kept (expiries seen), even when the verdict on it waits.
            state.books.store(book, for: account)
            if canWait, Self.waitingDecides(findings) { return nil }
            if final {
                state.finalProbes += 1
                noteHeld(book, account: account, in: &state)
            }
            return tally(findings, account: account, observed: observed, at: t, in: &state)
        }
    }

    /// Whether some finding is undecided only for now, and none failed.
    private static func waitingDecides(_ findings: [Invariant: Finding]) -> Bool {
        var later = false
        for finding in findings.values {
            switch finding {
            case .fail: return false
            case .unknown(_, let waiting): later = later || waiting
            case .pass: break
            }
        }
        return later
    }

    /// Counts each finding, keeps the witnesses of failures, and returns one result per invariant.
    private func tally(
        _ findings: [Invariant: Finding],
        account: String,
        observed: AccountState,
        at t: Double,
        in state: inout OracleState
    ) -> [CheckResult] {
        var results: [CheckResult] = []
        for invariant in Invariant.allCases {
            guard let finding = findings[invariant] else { continue }
            let outcome: CheckResult.Outcome
            switch finding {
            case .pass:
                outcome = .pass
                state.tallies[invariant, default: Tally()].passed += 1
            case .unknown(let reason, _):
                outcome = .unknown(reason)
                state.tallies[invariant, default: Tally()].unknown += 1
                state.sampleUnknown("\(invariant.rawValue) \(account) at \(format(t))s: \(reason)")
            case .fail(let summary, let entries, let shows, let subject):
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
                let key = ViolationKey(invariant: invariant, account: account, subject: subject)
                outcome = .fail(state.book(witness, key: key, limit: options.maxWitnesses))
            }
            results.append(CheckResult(invariant: invariant, account: account, outcome: outcome))
        }
        return results
    }
}
