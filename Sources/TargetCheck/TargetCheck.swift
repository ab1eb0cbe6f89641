import AppStoreModel
import AppStoreServerAPI
import Chaos
import Checking
import Foundation
import Load
import Minting
public import PayStorm
import Profile
import Reporting
public import RunControl
import Signing
import Simulation
import TargetProcesses

/// `paystorm target check PROFILE`: proves a profile's mapping of a target in seconds, before a long run.
///
/// It sends one genuine purchase through each configured role (the device's delivery first, then the App
/// Store's webhook, as in a run), the webhook again with the same bytes, one forged notification and one
/// pending device report (each on its own fresh account), probes the three accounts, and judges them with the
/// run's own checker. Requests are built, classified and probed by the run's own functions, so the check
/// always exercises what a run would send.
///
/// ```swift
/// var options = RunOptions(profilePath: "Profiles/smoke.json5")
/// let outcome = try TargetCheck.execute(options)
/// print(outcome.text)  // the table; outcome.passed decides the exit code
/// ```
public enum TargetCheck {
    /// The forgery sent: a broken signature, which every verifier rejects, online checks or not.
    static let forgery = "bad-signature"

    /// Runs the check.
    /// - Parameters:
    ///   - options: the profile, `--pki`, `--set` values and (for the embedded ledger) flaws; the rest is unused.
    ///   - log: where progress lines go.
    /// - Returns: the table and whether the mapping works.
    /// - Throws: `RunError` when the check cannot start (bad profile, missing PKI, unreachable target).
    public static func execute(
        _ options: RunOptions,
        log: @escaping @Sendable (String) -> Void = { _ in }
    ) throws(RunError) -> TargetCheckOutcome {
        let (profile, _) = try PayStormRun.load(options)
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("paystorm-check-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: work) }
        let folder: ReportFolder
        do {
            folder = try ReportFolder(root: work, profile: profile.name, seed: profile.seed)
        } catch {
            throw .cannotWrite("\(error)")
        }
        var target = try TargetSetup.prepare(profile: profile, options: options, folder: folder, log: log)
        defer { target.ledger?.stop() }
        // The run's engine: the check sends one request at a time, so its connection limits never matter.
        let engine = try PayStormRun.loadEngine(profile: profile)
        let interruption = options.interruption
        let stopping = interruption.onInterrupt { engine.cancel() }
        defer { stopping.cancel() }
        var outcome = try check(
            &target,
            profile: profile,
            options: options,
            engine: engine,
            folder: folder,
            log: log
        )
        if let signal = interruption.signal {
            outcome.interruptedBy = signal
            outcome.passed = false
            outcome.notes.append(
                "the check was interrupted (\(signal.name)): a request not sent or an account not probed decides nothing"
            )
        }
        return outcome
    }

    /// The check once its target is ready: provisions, sends, probes and judges. Interrupted, each step that
    /// waits ends at once and the rest send nothing.
    private static func check(
        _ target: inout PreparedTarget,
        profile: Profile,
        options: RunOptions,
        engine: LoadEngine,
        folder: ReportFolder,
        log: @escaping @Sendable (String) -> Void
    ) throws(RunError) -> TargetCheckOutcome {
        let interruption = options.interruption
        // Only the check's accounts are provisioned (a backend may dictate their tokens), then its world is made.
        // Interrupted, nothing is sent: the table says so, row by row.
        var checked = try Plan.profile(profile)
        try target.connect(profile: checked, with: engine, interruption: interruption, log: log)
        checked.dictatedTokens = TargetSetup.dictatedTokens(target.endpoints.accounts, profile: checked)
        let plan = try Plan(checking: checked, original: profile)
        let api = try startAPI(
            for: plan,
            profile: profile,
            file: options.profilePath,
            target: target,
            folder: folder,
            log: log
        )
        defer { api?.shutdown() }
        // Every date of the plan must lie in the past when it is sent: a target may refuse what is signed
        // in the future, and no App Store sends it.
        interruption.sleep(until: Date(timeIntervalSince1970: Double(plan.startMillis) / 1000 + plan.latest + 0.05))

        var checkerOptions = Checker.Options()
        // The probe follows the deliveries within a second, by design; nothing in the plan expires soon.
        checkerOptions.boundarySeconds = 0.2
        let checker = Checker(profile: plan.profile, startMillis: plan.startMillis, options: checkerOptions)
        let sent = try send(plan, to: target, profile: profile, engine: engine, checker: checker)
        // A moment for a target that commits just after answering, then the run's own final probe.
        interruption.sleep(min(profile.settleSeconds, 1))
        // A soak re-provisions every refreshSeconds: once now, so the probe below reads with the fresh fields.
        let refreshed = refreshAccounts(
            profile: plan.profile,
            directory: target.endpoints.accounts,
            interruption: interruption
        )
        let probed = probe(
            sent,
            plan: plan,
            target: target,
            profile: profile,
            engine: engine,
            checker: checker,
            interruption: interruption
        )
        var outcome = judge(sent, probed, plan: plan, target: target)
        if profile.target.accounts?.provision != nil {
            outcome.setup += "\nprovisioned \(plan.profile.population.accounts) accounts (target.accounts.provision)"
        }
        if let refreshed {
            outcome.notes.append(refreshed.note)
            if refreshed.failed { outcome.passed = false }
        }
        return outcome
    }

    /// The App Store Server API a backend that pulls asks about the plan's purchases, started with them in its
    /// store; served without faults, since the check proves the mapping, not the backend's resilience. Nil when the
    /// profile serves none.
    private static func startAPI(
        for plan: Plan,
        profile: Profile,
        file: String,
        target: PreparedTarget,
        folder: ReportFolder,
        log: @escaping @Sendable (String) -> Void
    ) throws(RunError) -> RunAPI? {
        var faultless = profile
        faultless.target.appStoreAPI?.faults = AppStoreAPIFaults()
        let api = try RunAPI.start(profile: faultless, file: file, target: target, folder: folder, log: log)
        if let api { record(plan, into: api.store) }
        return api
    }

    /// The bodies of the plan's requests, as a run mints them: with the receipts of the plan's world when a
    /// device template names `{appReceipt}`.
    static func bodies(for plan: Plan, target: PreparedTarget, profile: Profile) -> DeliveryBodies {
        var receipts: DeviceReceipts?
        if DeviceReceipts.needed(by: target.endpoints) {
            let store = APIStore()
            record(plan, into: store)
            receipts = DeviceReceipts(store: store, startMillis: plan.startMillis)
        }
        let minter = PayStormRun.minter(profile: profile, pki: target.pki)
        return DeliveryBodies(minter: minter, endpoints: target.endpoints, receipts: receipts)
    }

    /// Records the plan's genuine actions into an App Store's store, each at its world time.
    static func record(_ plan: Plan, into store: APIStore) {
        for action in plan.steps.map(\.delivery).filter({ !$0.isForged }).map(\.action) {
            store.record(action, at: plan.startMillis + Int64((action.at * 1000).rounded()))
        }
    }

    /// Runs the provisioning command a second time when the profile asks a run to refresh the accounts
    /// (`target.accounts.refreshSeconds`): a command that is not idempotent fails here, in seconds, instead of a
    /// soak's first refresh an hour in. Nil when the profile asks for no refresh.
    static func refreshAccounts(
        profile: Profile,
        directory: AccountDirectory,
        interruption: Interruption
    ) -> (note: String, failed: Bool)? {
        guard let accounts = profile.target.accounts, let command = accounts.provision,
            let interval = accounts.refreshSeconds
        else { return nil }
        let every = "as a run will every \(PayStormRun.format(interval)) s (target.accounts.refreshSeconds)"
        let tokens = TargetSetup.accountsToProvision(profile: profile, only: nil, shard: nil)
        let started = Date()
        do throws(RunError) {
            let fresh = try AccountProvisioning.run(
                command,
                tokens: tokens,
                timeout: accounts.timeoutSeconds,
                interruption: interruption
            )
            if let change = directory.changedToken(in: fresh) {
                return ("the provisioning command, run again \(every), cannot be taken: \(change)", true)
            }
            directory.refresh(with: fresh)
        } catch {
            return ("the provisioning command failed when run again, \(every): \(error)", true)
        }
        let seconds = String(format: "%.1f", Date().timeIntervalSince(started))
        return ("the provisioning command ran again in \(seconds) s, \(every); the probe read with its fields", false)
    }

    /// The requests as sent: the table so far (one row per step), and the steps that went out, each with its
    /// row and how its answer was classified.
    struct Sent {
        var rows: [TargetCheckRow] = []
        var steps: [(step: Step, row: Int, outcome: DeliveryOutcome)] = []
    }

    /// What the final probe read: each account's state, the checker's results on it, and the samples of
    /// undecided checks (which say why a probe failed).
    struct Probed {
        var hasProbe: Bool
        var states: [String: AccountState] = [:]
        var results: [String: [Invariant: CheckResult.Outcome]] = [:]
        var unknowns: [String] = []
        var notes: [String] = []
    }

    /// Mints and sends each step of the plan in order, one request at a time, telling the checker; a role
    /// without a URL gets a "not configured" row. A duplicate reuses the bytes of the delivery it repeats.
    static func send(
        _ plan: Plan,
        to target: PreparedTarget,
        profile: Profile,
        engine: LoadEngine,
        checker: Checker
    ) throws(RunError) -> Sent {
        let bodies = Self.bodies(for: plan, target: target, profile: profile)
        var sent = Sent()
        var bytes: [UInt64: [UInt8]] = [:]
        // The check sends what a run would: its hooked roles' requests as the request hook answers them.
        let hook = try PayStormRun.startHook(profile: profile)
        defer { hook?.close() }
        for step in plan.steps {
            let body: [UInt8]
            do {
                if let same = step.delivery.sameBytesAs, let earlier = bytes[same] {
                    body = earlier
                } else {
                    guard let minted = try bodies.body(for: step.delivery) else { continue }
                    body = minted
                }
            } catch {
                throw .internalError("cannot mint the \(step.sends) for \(step.role): \(error)")
            }
            bytes[step.delivery.id] = body
            guard
                let (rendered, classification) = target.endpoints.request(
                    for: step.delivery,
                    body: body,
                    id: sent.rows.count
                )
            else {
                sent.rows.append(TargetCheckRow(notConfigured: step))
                continue
            }
            let request = try target.endpoints.hooked(rendered, for: step.delivery, through: hook, profile)
            checker.sent(step.delivery, at: plan.now())
            let result = engine.sendOne(request)
            let outcome =
                result.map { Endpoints.outcome(of: $0, classification: classification) }
                ?? .notSent(reason: "the load engine did not send it")
            checker.record(step.delivery, outcome: outcome, at: plan.now())
            sent.steps.append((step, sent.rows.count, outcome))
            sent.rows.append(
                TargetCheckRow(
                    role: step.role,
                    sends: step.sends,
                    request: "\(request.method) \(request.url)",
                    status: result.map(Self.status) ?? "not sent",
                    classified: Self.describe(outcome),
                    probe: "-"
                )
            )
        }
        return sent
    }

    /// The run's own final probe over the accounts the sent steps used, when the target has a probe.
    static func probe(
        _ sent: Sent,
        plan: Plan,
        target: PreparedTarget,
        profile: Profile,
        engine: LoadEngine,
        checker: Checker,
        interruption: Interruption
    ) -> Probed {
        let accounts = Array(Set(sent.steps.map(\.step.delivery.action.appAccountToken))).sorted()
        var probed = Probed(hasProbe: target.endpoints.probe != nil || profile.target.probe != nil)
        let final = FinalProbe(
            endpoints: target.endpoints,
            config: profile.target.probe,
            engine: engine,
            interruption: interruption
        )
        final.onState = { account, state in probed.states[account] = state }
        if probed.hasProbe {
            _ = final.run(accounts: accounts, checker: checker, startMillis: plan.startMillis) { checked, _ in
                for result in checked {
                    probed.results[result.account, default: [:]][result.invariant] = result.outcome
                }
            }
        }
        probed.unknowns = checker.verdict(unchecked: []).unknownSamples
        probed.notes = final.notes
        return probed
    }

    /// The table completed with what the probe saw and a hint on each row that looks wrong, and the result.
    static func judge(_ sent: Sent, _ probed: Probed, plan: Plan, target: PreparedTarget) -> TargetCheckOutcome {
        var rows = sent.rows
        var notes: [String] = []
        if !probed.hasProbe {
            notes.append("no probe (target.probe): what the target granted was not checked")
        }
        for (step, index, outcome) in sent.steps {
            let account = step.delivery.action.appAccountToken
            let found = probed.results[account] ?? [:]
            if probed.hasProbe {
                if let state = probed.states[account] {
                    rows[index].probe = Self.describe(state, product: step.product)
                } else {
                    rows[index].probe = "probe failed"
                }
            }
            rows[index].hint = hint(
                for: step,
                outcome: outcome,
                probed: !probed.hasProbe || probed.states[account] != nil,
                state: probed.states[account],
                found: found,
                probeFailure: (target.endpoints.probeURL(for: account).map { "GET \($0)" } ?? "the probe command")
                    + ": " + (probed.unknowns.first { $0.contains(account) } ?? "no answer")
            )
        }
        notes += probed.notes
        let products = plan.products.map { "\($0.id) (\($0.type.rawValue))" }.joined(separator: ", ")
        let buyers = plan.accounts.buyers.joined(separator: ", ")
        return TargetCheckOutcome(
            rows: rows,
            target: target.description,
            setup: "product\(plan.products.count == 1 ? "" : "s") \(products)\naccounts: purchase \(buyers), forgery "
                + "\(plan.accounts.forgery), pending report \(plan.accounts.pending)",
            notes: notes,
            passed: !rows.contains { $0.hint != nil }
        )
    }
}
