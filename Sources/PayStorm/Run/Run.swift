import AppStoreModel
import Chaos
import Checking
public import Foundation
public import Load
package import Minting
public import Primitives
package import Profile
public import Reporting
public import RunControl
package import Signing
import Simulation
import Synchronization
import TargetProcesses

#if canImport(Glibc)
import Glibc
#endif

/// What `paystorm run` was asked to do.
public struct RunOptions: Sendable {
    /// The JSON5 profile to run.
    public var profilePath: String
    /// A seed that replaces the profile's.
    public var seed: UInt64?
    /// Flaws to switch on in the embedded reference ledger.
    public var flaws: [String] = []
    /// Where report folders go.
    public var reportsDirectory: String = "Reports"
    /// The live status mode.
    public var status: StatusMode = .plain(every: 5)
    /// Replay only this account: the world is generated whole (so the seed plays the same), but only
    /// this account's deliveries are sent and checked.
    public var account: String?
    /// The namespace of the run's identities (`Profile.namespace`): nil draws a fresh one for a target that keeps
    /// its state (any but the embedded ledger, which starts empty each run and keeps the seed's own, 0).
    public var namespace: UInt64?
    /// The namespace `account` was named in (a replay's `--namespace`: the replayed run's), when it is not the
    /// run's own: the account is then found by its index there and plays under the run's namespace, so a replay
    /// against a target that kept the replayed run's state does not meet it.
    public var accountNamespace: UInt64?
    /// The test PKI the target trusts (external targets); the embedded ledger gets a fresh one.
    public var pkiDirectory: String?
    /// Whether to stream the history (`history-NNNNNN.jsonl.gz` chunks).
    public var history = true
    /// The most the history's chunks may take on disk together, in MiB; the oldest chunks go first.
    public var historyMaxMegabytes = 512
    /// Where to serve live OpenMetrics at `GET /metrics` during the run (nil: nowhere).
    public var metricsListen: MetricsListen?
    /// Where the lines go that a user needs even from a quiet run: the `--metrics-listen` address, whose port
    /// is chosen when the run starts when it was given as 0.
    public var announce: @Sendable (String) -> Void = { _ in }
    /// The `paystorm` binary, for starting the embedded ledger (default: this process's executable).
    public var executablePath: String?
    /// Multiplies every segment of the rate schedule (capacity planning without editing the profile).
    public var rateScale: Double = 1
    /// Values of the profile's `${NAME}` variables given with `--set NAME=value`; they win over the
    /// environment.
    public var variables: [String: String] = [:]
    /// The shard of a run split across processes (`--shard INDEX/COUNT`): only its accounts are sent and
    /// checked, and the report records it for `paystorm merge`.
    public var shard: Shard?
    /// A schedule that replaces the profile's (`--rate R --duration D`, a capacity step's constant rate), applied
    /// before ``RunOptions/rateScale``: one constant segment, the shape a replay line can name.
    public var schedule: [RateSegment]?
    /// A settle period that replaces the profile's, in seconds (a capacity step keeps it short).
    public var settleSeconds: Double?
    /// A longest settle that replaces the profile's `settleMaxSeconds`, in seconds (a capacity step waits for no
    /// follow-up past its short settle).
    public var settleMaxSeconds: Double?
    /// The `admissions.csv` of a thinned run to play back (`--admissions FILE`), so its world is generated again
    /// exactly; nil thins the schedule anew whenever minting falls behind.
    public var admissionsPath: String?
    /// Stops the run early (the command line interrupts it on a signal): it then writes its report, marked
    /// interrupted, with what it decided until then. Copies of these options share it, so one interruption stops
    /// every run made from them (the steps of a capacity search).
    public var interruption = Interruption()

    /// Creates options for a profile.
    public init(profilePath: String) {
        self.profilePath = profilePath
    }
}

/// What a run found, and where it wrote it.
public struct RunOutcome: Sendable {
    /// The full report (also in `summary.json`).
    public var report: RunReport
    /// The run's report folder.
    public var folder: URL
    /// Seconds into the run at which each invariant first failed (the detection matrix).
    public var firstDetection: [String: Double]
    /// Why `latest` beside the folder does not name it (someone's file or folder of that name), for the
    /// console even when it is quiet; nil when it does.
    public var latestNote: String? = nil

    /// An outcome of a run, or of a merge of shards' runs.
    package init(report: RunReport, folder: URL, firstDetection: [String: Double], latestNote: String? = nil) {
        self.report = report
        self.folder = folder
        self.firstDetection = firstDetection
        self.latestNote = latestNote
    }
}

/// One PayStorm run: wires Profile → Simulation → Chaos → Load → Checking → Reporting.
///
/// ```swift
/// var options = RunOptions(profilePath: "Profiles/smoke.json5")
/// options.flaws = ["double-grant"]
/// let outcome = try PayStormRun.execute(options)
/// print(outcome.report.verdict)  // .fail, with a witness per violation
/// ```
public enum PayStormRun {
    /// Loads and validates a profile (and its thresholds) without running it.
    /// - Returns: one line describing the profile, and a second line when an option will be ignored.
    /// - Throws: `RunError.badProfile` naming the file, the JSON path and what was expected.
    public static func check(_ options: RunOptions) throws(RunError) -> String {
        let (profile, thresholds) = try load(options)
        // A real run reads the admissions file before it sends; so does the check.
        if let path = options.admissionsPath { _ = try AdmissionsFile.read(path: path) }
        let target = profile.target.embeddedLedger ? "the embedded ledger" : (profile.target.webhookURL ?? "")
        let notice = TargetSetup.ignoredPKINotice(profile: profile, options: options).map { "\n" + $0 } ?? ""
        return
            "\(options.profilePath): profile \(profile.name), seed \(profile.seed), \(profile.population.accounts) accounts, "
            + "\(format(profile.durationSeconds)) s of traffic + \(format(profile.settleSeconds)) s settle against \(target), "
            + "\(thresholds.count) threshold\(thresholds.count == 1 ? "" : "s")" + notice
    }

    /// The kinds a run records its traffic under (see `RunScheduler` and `FinalProbe`), which thresholds may
    /// name: genuine webhook and device deliveries, probes, deliberate forgeries and network faults, and the
    /// deliveries refused while the target is down for a planned restart.
    public static let thresholdKinds = ["webhook", "device", "probe", "forged", "network-fault", "restart"]

    package static func load(_ options: RunOptions) throws(RunError) -> (Profile, [Threshold]) {
        var profile: Profile
        do {
            profile = try Profile.load(path: options.profilePath, variables: ProfileVariables(set: options.variables))
        } catch let error as ProfileUnreadable {
            throw .noInput(error.description)
        } catch {
            throw .badProfile("\(error)")
        }
        try CommandCheck.checkPrograms(of: profile, file: options.profilePath)
        if let seed = options.seed { profile.seed = seed }
        profile.namespace =
            options.namespace
            ?? (profile.target.embeddedLedger ? options.accountNamespace ?? 0 : RunNamespace.fresh())
        if let schedule = options.schedule {
            // A replay line names only this shape (`--rate R --duration D`).
            guard schedule.count == 1, case .constant = schedule[0].shape else {
                throw .badInput("a schedule in place of the profile's is one constant segment (--rate R --duration D)")
            }
            profile.schedule = schedule
        }
        if let settle = options.settleSeconds { profile.settleSeconds = settle }
        if let longest = options.settleMaxSeconds { profile.settleMaxSeconds = longest }
        if options.rateScale != 1 {
            profile.schedule = profile.schedule.map { $0.scaled(by: options.rateScale) }
        }
        var thresholds: [Threshold] = []
        for (index, threshold) in profile.thresholds.enumerated() {
            do {
                thresholds.append(try Threshold.parse(threshold.text, kinds: thresholdKinds))
            } catch {
                throw .badProfile("\(options.profilePath): thresholds[\(index)]: \(error)")
            }
        }
        return (profile, thresholds)
    }

    /// Runs a profile to a verdict and writes its report folder.
    /// - Parameters:
    ///   - options: what to run.
    ///   - log: where progress lines go (the verdict is the caller's to print).
    /// - Returns: the report and where it was written; interrupted (``RunOptions/interruption``), the report
    ///   holds what was decided until then.
    /// - Throws: `RunError` when the run cannot start (bad profile, unreachable target, unwritable report).
    public static func execute(
        _ options: RunOptions,
        log: @escaping @Sendable (String) -> Void = { _ in }
    ) throws(RunError) -> RunOutcome {
        let (profile, thresholds) = try load(options)
        var options = options
        options.account = try RunNamespace.account(options, profile: profile)
        var admissions: [ArrivalAdmission.Change]?
        if let path = options.admissionsPath { admissions = try AdmissionsFile.read(path: path) }
        let startedAt = Date()
        let folder = try reportFolder(options: options, profile: profile, date: startedAt)
        // A run that fails before it can send (unreachable target, missing PKI, a ledger that does not
        // start) leaves no folder behind; `latest` moves only once the run starts.
        var started = false
        defer { if !started { folder.remove() } }

        var target = try TargetSetup.prepare(profile: profile, options: options, folder: folder, log: log)
        defer { target.ledger?.stop() }
        let engine = try loadEngine(profile: profile)
        // Interrupted, the engine stops its run in progress and every later one, wherever the run is.
        let stopping = options.interruption.onInterrupt { engine.cancel() }
        defer { stopping.cancel() }
        try setUp(&target, options: options, profile: profile, engine: engine, log: log)
        let api = try RunAPI.start(
            profile: profile,
            file: options.profilePath,
            target: target,
            folder: folder,
            log: log
        )
        defer { api?.shutdown() }
        return try start(
            options: options,
            loaded: (profile, thresholds, startedAt, admissions),
            folder: folder,
            target: target,
            engine: engine,
            api: api,
            markStarted: { started = true },
            log: log
        )
    }

    /// Checks that the target answers and provisions its accounts. Interrupted meanwhile, it stops there without
    /// failing: the run then sends nothing and reports itself interrupted.
    private static func setUp(
        _ target: inout PreparedTarget,
        options: RunOptions,
        profile: Profile,
        engine: LoadEngine,
        log: @escaping @Sendable (String) -> Void
    ) throws(RunError) {
        do {
            guard !options.interruption.isInterrupted else { return }
            try TargetSetup.checkReachable(target.endpoints, with: engine)
            try TargetSetup.provision(
                &target,
                profile: profile,
                only: options.account,
                shard: options.shard,
                interruption: options.interruption,
                log: log
            )
        } catch  where options.interruption.isInterrupted {
            return
        }
    }

    /// The run from its clock on: mints, plays the schedule, settles, probes and reports. `markStarted` is called
    /// once the run is committed to its folder (sending is about to start).
    private static func start(
        options: RunOptions,
        loaded: (
            profile: Profile, thresholds: [Threshold], startedAt: Date, admissions: [ArrivalAdmission.Change]?
        ),
        folder: ReportFolder,
        target: PreparedTarget,
        engine: LoadEngine,
        api: RunAPI?,
        markStarted: () -> Void,
        log: @escaping @Sendable (String) -> Void
    ) throws(RunError) -> RunOutcome {
        let (profile, thresholds, startedAt, admissions) = loaded
        // Minting starts before the clock does, so the first sends never wait on a signature.
        let startMillis = Int64((Date().timeIntervalSince1970 + 1.5) * 1000)
        let (pipeline, bodies, cache, restarts) = mintPipeline(
            options: options,
            profile: profile,
            target: target,
            api: api,
            admissions: admissions,
            startMillis: startMillis
        )
        pipeline.start()
        defer { pipeline.stopAndWait() }

        let checker = Checker(profile: profile, startMillis: startMillis)
        let (recorder, history, snapshots) = try outputs(
            options: options,
            profile: profile,
            folder: folder,
            startMillis: startMillis
        )
        let metrics = try metricsEndpoint(
            options: options,
            snapshots: snapshots,
            checker: checker,
            admission: pipeline.admission
        )
        // Served through settle and the final probes too (their checks still count), until the report is out.
        defer { metrics?.shutdown() }
        let restartWindows = RestartWindows(restarts)
        let (scheduler, safetyProbes) = makeScheduler(
            options: options,
            profile: profile,
            target: target,
            minting: (pipeline, bodies, cache),
            checker: checker,
            outputs: (recorder, history),
            restartWindows: restartWindows,
            api: api,
            startMillis: startMillis
        )
        let latestNote = folder.linkAsLatest()
        if let latestNote { log("note: " + latestNote) }
        markStarted()

        let parts = RunParts(
            profile: profile,
            options: options,
            target: target,
            engine: engine,
            api: api,
            pipeline: pipeline,
            checker: checker,
            recorder: recorder,
            history: history,
            scheduler: scheduler,
            safetyProbes: safetyProbes,
            startMillis: startMillis,
            log: log
        )
        return try playAndReport(
            parts,
            restarts: (restarts, restartWindows),
            thresholds: thresholds,
            startedAt: startedAt,
            folder: folder,
            latestNote: latestNote
        )
    }

    /// Plays the schedule (and the target restarts the chaos planned), settles, probes every account, and writes
    /// the report.
    private static func playAndReport(
        _ parts: RunParts,
        restarts: ([TargetRestartEvent], RestartWindows),
        thresholds: [Threshold],
        startedAt: Date,
        folder: ReportFolder,
        latestNote: String?
    ) throws(RunError) -> RunOutcome {
        let restartThread = restartPlayer(
            options: parts.options,
            target: parts.target,
            engine: parts.engine,
            restarts: restarts,
            startMillis: parts.startMillis,
            folder: folder,
            log: parts.log
        )
        restartThread.start()
        defer { restartThread.cancel() }
        // Credentials stay fresh through settling and the final probe too, which render requests with them.
        let refresher = AccountRefresher.forRun(
            profile: parts.profile,
            options: parts.options,
            directory: parts.target.endpoints.accounts,
            startMillis: parts.startMillis,
            log: parts.log
        )
        refresher?.start()
        defer { refresher?.finish() }
        let (stats, harnessLimit) = play(parts)
        if let failure = stats.failure { throw .internalError("the load engine failed: \(failure)") }

        var (notes, probeSawGrants) = settle(parts, stats: stats)
        let interruptedBy = parts.options.interruption.signal
        restartThread.finish()
        notes += restartThread.notes
        restartThread.judgeRecovery(
            checker: parts.checker,
            atEnd: interruptedBy == nil && (parts.options.shard?.index ?? 0) == 0
        )
        refresher?.finish()
        notes += refresher?.notes ?? []
        if let latestNote { notes.append(latestNote) }
        var outcome = try report(
            parts,
            stats: stats,
            thresholds: thresholds,
            run: RunFacts(
                startedAt: startedAt,
                interruptedBy: interruptedBy,
                harnessLimit: harnessLimit,
                notes: notes,
                probeSawGrants: probeSawGrants
            ),
            folder: folder
        )
        outcome.latestNote = latestNote
        return outcome
    }

    package static func format(_ seconds: Double) -> String { String(format: "%g", seconds) }

    /// The load engine of a run: the profile's timeout, CA file and connections per host.
    package static func loadEngine(profile: Profile) throws(RunError) -> LoadEngine {
        do {
            return try LoadEngine(
                LoadEngineConfiguration(
                    connectionsPerHost: profile.target.connections,
                    maxInFlight: 4096,
                    connectTimeout: .seconds(3),
                    totalTimeout: .milliseconds(Int64(profile.target.requestTimeoutSeconds * 1000)),
                    caFile: profile.target.tlsCAFile,
                    maxCapturedBodyBytes: 64 * 1024,
                    lateAfter: .milliseconds(10),
                    tickInterval: .seconds(1)
                )
            )
        } catch {
            throw .internalError("cannot start the load engine: \(error)")
        }
    }

    /// The minter of a run: the PKI the target trusts and the profile's app identity.
    package static func minter(profile: Profile, pki: TestPKI) -> Minter {
        Minter(
            pki: pki,
            app: AppIdentity(
                bundleId: profile.target.bundleId,
                appAppleId: profile.target.appAppleId,
                environment: profile.target.environment
            )
        )
    }

    /// The run's command-based safety probes: rounds of a `command` or `bulk` probe on the accounts of
    /// interest, or the `transform` of an `http` probe's answers; nil when the target has neither (the
    /// embedded ledger is probed over HTTP by the scheduler).
    static func safetyProbes(
        profile: Profile,
        target: PreparedTarget,
        checker: Checker,
        startMillis: Int64,
        interruption: Interruption
    ) -> SafetyProbes? {
        guard target.ledger == nil, let config = profile.target.probe, config.intervalSeconds > 0 else { return nil }
        let probe = ProcessProbe(config: config, interruption: interruption)
        guard probe.readsByCommand || config.transform != nil else { return nil }
        return SafetyProbes(
            probe: probe,
            interval: config.intervalSeconds,
            clock: { Date().timeIntervalSince1970 - Double(startMillis) / 1000 },
            checker: checker
        )
    }
}

extension RateSegment {
    /// The same segment with every rate multiplied by `factor`.
    func scaled(by factor: Double) -> RateSegment {
        switch shape {
        case .constant(let rate):
            RateSegment(.constant(rate: rate * factor), seconds: seconds)
        case .ramp(let from, let to):
            RateSegment(.ramp(from: from * factor, to: to * factor), seconds: seconds)
        case .steps(let from, let to, let count):
            RateSegment(.steps(from: from * factor, to: to * factor, count: count), seconds: seconds)
        case .spike(let base, let peak, let at, let length):
            RateSegment(
                .spike(base: base * factor, peak: peak * factor, atSeconds: at, spikeSeconds: length),
                seconds: seconds
            )
        case .sine(let mean, let amplitude, let period):
            RateSegment(
                .sine(mean: mean * factor, amplitude: amplitude * factor, periodSeconds: period),
                seconds: seconds
            )
        }
    }
}
