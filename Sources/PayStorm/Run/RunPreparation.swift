import AppStoreServerAPI
import Chaos
import Checking
import Foundation
import Load
package import Profile
import Reporting
package import RunControl
import Simulation
package import TargetProcesses

/// A run's profile as loaded and the options it plays with, before anything starts.
private struct LoadedRun {
    var profile: Profile
    var thresholds: [Threshold]
    /// The options with the replayed account found in the run's namespace.
    var options: RunOptions
    var startedAt: Date
    /// The admissions of a thinned run to play back (`--admissions`).
    var admissions: [ArrivalAdmission.Change]?
    /// The profile's request hook, started.
    var hook: RequestHookProcess?
}

extension PayStormRun {
    /// Loads the profile, creates the report folder, starts or locates the target, provisions its accounts, and
    /// makes the run's parts. Interrupted while the target is checked or provisioned, it goes on without failing:
    /// the run then sends nothing and reports itself interrupted.
    func prepare() throws(RunError) {
        let (profile, thresholds) = try Self.load(options)
        var options = self.options
        options.account = try RunNamespace.account(options, profile: profile)
        var admissions: [ArrivalAdmission.Change]?
        if let path = options.admissionsPath { admissions = try AdmissionsFile.read(path: path) }
        var loaded = LoadedRun(
            profile: profile,
            thresholds: thresholds,
            options: options,
            startedAt: Date(),
            admissions: admissions
        )
        // A run that fails before it can send (unreachable target, missing PKI, a ledger that does not start)
        // leaves no folder behind (the state machine says so); `latest` moves only once the run starts.
        let folder = try Self.reportFolder(options: options, profile: profile, date: loaded.startedAt)
        self.folder = folder
        var target = try TargetSetup.prepare(profile: profile, options: options, folder: folder, log: log)
        let ledger = target.ledger
        onEnd { ledger?.stop() }
        let engine = try Self.loadEngine(profile: profile)
        // Interrupted, the engine stops its run in progress and every later one, wherever the run is.
        watch(engine)
        try target.connect(
            profile: profile,
            with: engine,
            only: options.account,
            shard: options.shard,
            interruption: options.interruption,
            log: log
        )
        // The world mints with the tokens the backend dictated, and a replayed account plays under its own.
        loaded.profile.dictatedTokens = TargetSetup.dictatedTokens(target.endpoints.accounts, profile: profile)
        if let only = options.account {
            loaded.options.account = target.endpoints.accounts.dictatedTokens[AccountDirectory.normalized(only)] ?? only
        }
        let api = try RunAPI.start(
            profile: profile,
            file: options.profilePath,
            target: target,
            folder: folder,
            log: log
        )
        onEnd { api?.shutdown() }
        loaded.hook = try Self.startHook(profile: profile)
        if let hook = loaded.hook { onEnd { hook.close() } }
        parts = try makeParts(loaded, folder: folder, target: target, engine: engine, api: api)
    }

    /// The parts of a run whose target is ready: minting (started before the clock, so the first sends never wait
    /// on a signature), the checker, the outputs and the scheduler; `latest` then names the run's folder.
    private func makeParts(
        _ loaded: LoadedRun,
        folder: ReportFolder,
        target: PreparedTarget,
        engine: LoadEngine,
        api: RunAPI?
    ) throws(RunError) -> RunParts {
        let startMillis = Int64((Date().timeIntervalSince1970 + 1.5) * 1000)
        let (pipeline, bodies, cache, restarts) = Self.mintPipeline(
            loaded,
            target: target,
            api: api,
            startMillis: startMillis
        )
        pipeline.start()
        onEnd { pipeline.stopAndWait() }
        let checker = Self.checker(loaded, store: api?.store ?? bodies.receipts?.store, startMillis: startMillis)
        let (recorder, history, metrics) = try Self.outputs(
            loaded,
            folder: folder,
            startMillis: startMillis,
            watching: (checker, pipeline.admission)
        )
        onEnd { metrics?.shutdown() }
        let restartWindows = RestartWindows(restarts)
        let (scheduler, safetyProbes) = Self.makeScheduler(
            loaded,
            target: target,
            minting: (pipeline, bodies, cache),
            checker: checker,
            outputs: (recorder, history),
            restartWindows: restartWindows,
            api: api,
            startMillis: startMillis
        )
        let latestNote = linkLatest(folder, shard: loaded.options.shard)
        return RunParts(
            profile: loaded.profile,
            options: loaded.options,
            thresholds: loaded.thresholds,
            startedAt: loaded.startedAt,
            target: target,
            engine: engine,
            api: api,
            pipeline: pipeline,
            checker: checker,
            recorder: recorder,
            history: history,
            metrics: metrics,
            scheduler: scheduler,
            safetyProbes: safetyProbes,
            restarts: restarts,
            restartWindows: restartWindows,
            folder: folder,
            latestNote: latestNote,
            startMillis: startMillis,
            log: log
        )
    }

    /// The run's checker. What the store of the App Store emulation (the API, `verifyReceipt`, device receipts)
    /// discloses is issued from its intended time, though a harness behind its schedule books a purchase only
    /// when it releases a delivery of it.
    private static func checker(_ loaded: LoadedRun, store: APIStore?, startMillis: Int64) -> Checker {
        guard let store else { return Checker(profile: loaded.profile, startMillis: startMillis) }
        let disclosure: Checker.Disclosure = { id, account, millis in
            store.disclosedProduct(of: id, toAccount: account, at: millis)
        }
        return Checker(profile: loaded.profile, startMillis: startMillis, disclosure: disclosure)
    }

    /// Points `latest` at the run's folder, unless the run is a shard: shards of one run often share a reports
    /// folder (a Job's pods on one volume), where one `latest` would name whichever started last.
    /// - Returns: why `latest` does not name the folder when it should (also said on the console), else nil.
    private func linkLatest(_ folder: ReportFolder, shard: Shard?) -> String? {
        guard shard == nil, let note = folder.linkAsLatest() else { return nil }
        log("note: " + note)
        return note
    }

    /// The run's recorder (timeseries, latency log), its history and, with `--metrics-listen`, the metrics
    /// endpoint, started.
    fileprivate static func outputs(
        _ loaded: LoadedRun,
        folder: ReportFolder,
        startMillis: Int64,
        watching: (checker: Checker, admission: ArrivalAdmission?)
    ) throws(RunError) -> (LoadRecorder, HistoryLog, MetricsEndpoint?) {
        let (profile, options) = (loaded.profile, loaded.options)
        let snapshots = options.metricsListen == nil ? nil : LoadSnapshots()
        do {
            let recorder = try LoadRecorder(
                directory: folder.url.path,
                startTime: Date(timeIntervalSince1970: Double(startMillis) / 1000),
                status: options.status,
                plannedDuration: .milliseconds(Int64(profile.durationSeconds * 1000)),
                snapshots: snapshots
            )
            let history = try HistoryLog(
                directory: options.history ? folder.url.path : nil,
                capBytes: options.historyMaxMegabytes << 20,
                startMillis: startMillis
            )
            let metrics = try metricsEndpoint(
                options: options,
                snapshots: snapshots,
                checker: watching.checker,
                admission: watching.admission
            )
            return (recorder, history, metrics)
        } catch let error as RunError {
            throw error
        } catch let error as OutputFileError {
            throw .cannotWrite(error.description)
        } catch {
            throw .cannotWrite("cannot write \(folder.url.path): \(error.localizedDescription)")
        }
    }

    /// The run's report folder, created exclusively; a `--metrics-listen` address off loopback must be one of
    /// the profile's allowed hosts.
    static func reportFolder(options: RunOptions, profile: Profile, date: Date) throws(RunError) -> ReportFolder {
        if let listen = options.metricsListen, !listen.loopback, !profile.target.allowedHosts.contains(listen.host) {
            throw .badInput(
                "--metrics-listen \(listen.host):\(listen.port): \(listen.host) is not loopback and not in "
                    + "target.allowedHosts of \(options.profilePath)"
            )
        }
        do {
            return try ReportFolder(
                root: URL(fileURLWithPath: options.reportsDirectory),
                profile: profile.name,
                seed: profile.seed,
                date: date,
                label: options.shard?.label
            )
        } catch {
            throw .cannotWrite("\(error)")
        }
    }

    /// The world (fed into the App Store Server API's store when there is one, and thinned at the source while
    /// minting cannot keep up, or as `admissions` replay), its chaos, and the pipeline that mints its deliveries
    /// (a shard's only), started; and the restarts the chaos plans.
    fileprivate static func mintPipeline(
        _ loaded: LoadedRun,
        target: PreparedTarget,
        api: RunAPI?,
        startMillis: Int64
    ) -> (MintPipeline, DeliveryBodies, BodyCache, [TargetRestartEvent]) {
        let (profile, options, admissions) = (loaded.profile, loaded.options, loaded.admissions)
        // The store the world feeds: the API's, or one of its own when device requests carry receipts.
        let store = api?.store ?? (DeviceReceipts.needed(by: target.endpoints) ? APIStore() : nil)
        let bodies = DeliveryBodies(
            minter: minter(profile: profile, pki: target.pki),
            endpoints: target.endpoints,
            receipts: store.map { DeviceReceipts(store: $0, startMillis: startMillis) }
        )
        // The schedule is thinned at the source while minting cannot keep up, unless a replay plays the
        // admissions of the run it replays.
        let admission =
            admissions.map { ArrivalAdmission(seed: profile.seed, replaying: $0) }
            ?? ArrivalAdmission(seed: profile.seed)
        // With an App Store Server API (or receipts), every action is recorded into the store as the world yields it.
        let world = APIFeed(World(profile: profile, startMillis: startMillis, admission: admission), store: store)
        let chaos = ChaosStream(world, profile: profile)
        let cache = BodyCache()
        // The run's clock, for shedding what minting cannot sign in time.
        let runStart = Double(startMillis) / 1000
        let clock: @Sendable () -> Double = { Date().timeIntervalSince1970 - runStart }
        let pipeline =
            if options.shard != nil || options.account != nil {
                MintPipeline(
                    stream: ShardDeliveries(base: chaos, shard: options.shard, account: options.account),
                    bodies: bodies,
                    cache: cache,
                    clock: clock,
                    admission: admission
                )
            } else {
                MintPipeline(stream: chaos, bodies: bodies, cache: cache, clock: clock, admission: admission)
            }
        return (pipeline, bodies, cache, chaos.restarts)
    }

    /// The live metrics endpoint of `--metrics-listen`, started; nil without it.
    static func metricsEndpoint(
        options: RunOptions,
        snapshots: LoadSnapshots?,
        checker: Checker,
        admission: ArrivalAdmission?
    ) throws(RunError) -> MetricsEndpoint? {
        guard let listen = options.metricsListen, let snapshots else { return nil }
        let endpoint = try MetricsEndpoint(listen: listen, snapshots: snapshots, checker: checker, admission: admission)
        options.announce("metrics: http://\(endpoint.address)/metrics")
        return endpoint
    }

    /// The scheduler that feeds the engine from the mint pipeline and routes answers to the oracle (and each
    /// webhook attempt to the App Store Server API's history), and the run's command-based safety probes (also
    /// the transform of an HTTP probe's answers).
    fileprivate static func makeScheduler(
        _ loaded: LoadedRun,
        target: PreparedTarget,
        minting: (MintPipeline, DeliveryBodies, BodyCache),
        checker: Checker,
        outputs: (LoadRecorder, HistoryLog),
        restartWindows: RestartWindows,
        api: RunAPI?,
        startMillis: Int64
    ) -> (RunScheduler, SafetyProbes?) {
        let (profile, options) = (loaded.profile, loaded.options)
        let safetyProbes = Self.safetyProbes(
            profile: profile,
            target: target,
            checker: checker,
            startMillis: startMillis,
            interruption: options.interruption
        )
        let scheduler = RunScheduler(
            pipeline: minting.0,
            cache: minting.2,
            bodies: minting.1,
            checker: checker,
            policy: ChaosPolicy(profile: profile),
            endpoints: target.endpoints,
            history: outputs.1,
            recorder: outputs.0,
            only: options.account,
            restartWindows: restartWindows,
            endOfSchedule: profile.durationSeconds,
            endOfFollowUps: profile.durationSeconds + profile.longestSettleSeconds,
            transformer: profile.target.probe?.transform != nil ? safetyProbes : nil,
            commandProbes: target.endpoints.probe == nil ? safetyProbes : nil,
            attempts: api.map { WebhookAttempts(store: $0.store, startMillis: startMillis) },
            hook: hookStage(loaded, startMillis: startMillis)
        )
        return (scheduler, safetyProbes)
    }

    /// The request hook's stage on the run's clock, when the profile has a hook.
    fileprivate static func hookStage(_ loaded: LoadedRun, startMillis: Int64) -> RequestHookStage? {
        guard let process = loaded.hook, let config = loaded.profile.target.requestHook else { return nil }
        return RequestHookStage(process: process, config: config) {
            Date().timeIntervalSince1970 - Double(startMillis) / 1000
        }
    }

    /// The profile's request hook, started once its accounts are provisioned; nil without one.
    /// - Throws: `RunError.unreachable` when it cannot start.
    package static func startHook(profile: Profile) throws(RunError) -> RequestHookProcess? {
        guard let config = profile.target.requestHook else { return nil }
        do {
            return try RequestHookProcess(command: config.command)
        } catch {
            throw .unreachable("the request hook (\(config.label)) cannot start: \(error)")
        }
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
        let probe = ProcessProbe(config: config, accounts: target.endpoints.accounts, interruption: interruption)
        guard probe.readsByCommand || config.transform != nil else { return nil }
        return SafetyProbes(
            probe: probe,
            interval: config.intervalSeconds,
            clock: { Date().timeIntervalSince1970 - Double(startMillis) / 1000 },
            checker: checker
        )
    }
}
