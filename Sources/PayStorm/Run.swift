import AppStoreModel
import Chaos
import Checking
public import Foundation
public import Load
import Minting
public import Profile
public import Reporting
import Signing
import Simulation
import Synchronization

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
    /// The test PKI the target trusts (external targets); the embedded ledger gets a fresh one.
    public var pkiDirectory: String?
    /// Whether to stream the history (`history-NNNNNN.jsonl.gz` chunks).
    public var history = true
    /// The most the history's chunks may take on disk together, in MiB; the oldest chunks go first.
    public var historyMaxMegabytes = 512
    /// Where to serve live OpenMetrics at `GET /metrics` during the run (nil: nowhere).
    public var metricsListen: MetricsListen?
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
    /// A schedule that replaces the profile's (a capacity step's constant rate), applied before ``RunOptions/rateScale``.
    public var schedule: [RateSegment]?
    /// A settle period that replaces the profile's, in seconds (a capacity step keeps it short).
    public var settleSeconds: Double?

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
    /// The engine of the run in progress, so a signal handler can stop it.
    private static let current = Mutex<LoadEngine?>(nil)
    private static let interrupted = Atomic<Bool>(false)

    /// Stops the run in progress (SIGINT/SIGTERM); it still writes its report.
    public static func interrupt() {
        interrupted.store(true, ordering: .relaxed)
        current.withLock { $0?.stop() }
    }

    /// Loads and validates a profile (and its thresholds) without running it.
    /// - Returns: one line describing the profile, and a second line when an option will be ignored.
    /// - Throws: ``RunError/badProfile(_:)`` naming the file, the JSON path and what was expected.
    public static func check(_ options: RunOptions) throws(RunError) -> String {
        let (profile, thresholds) = try load(options)
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

    static func load(_ options: RunOptions) throws(RunError) -> (Profile, [Load.Threshold]) {
        var profile: Profile
        do {
            profile = try Profile.load(path: options.profilePath, variables: ProfileVariables(set: options.variables))
        } catch let error as ProfileUnreadable {
            throw .noInput(error.description)
        } catch {
            throw .badProfile("\(error)")
        }
        if let seed = options.seed { profile.seed = seed }
        if let schedule = options.schedule { profile.schedule = schedule }
        if let settle = options.settleSeconds { profile.settleSeconds = settle }
        if options.rateScale != 1 {
            profile.schedule = profile.schedule.map { $0.scaled(by: options.rateScale) }
        }
        var thresholds: [Load.Threshold] = []
        for (index, threshold) in profile.thresholds.enumerated() {
            do {
                thresholds.append(try Load.Threshold.parse(threshold.text, kinds: thresholdKinds))
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
    /// - Returns: the report and where it was written.
    /// - Throws: ``RunError`` when the run cannot start (bad profile, unreachable target, unwritable report).
    public static func execute(
        _ options: RunOptions,
        log: @escaping @Sendable (String) -> Void = { _ in }
    ) throws(RunError) -> RunOutcome {
        interrupted.store(false, ordering: .relaxed)
        let (profile, thresholds) = try load(options)
        if let listen = options.metricsListen, !listen.loopback, !profile.target.allowedHosts.contains(listen.host) {
            throw .badInput(
                "--metrics-listen \(listen.host):\(listen.port): \(listen.host) is not loopback and not in "
                    + "target.allowedHosts of \(options.profilePath)"
            )
        }
        let startedAt = Date()
        let folder: ReportFolder
        do {
            folder = try ReportFolder(
                root: URL(fileURLWithPath: options.reportsDirectory),
                profile: profile.name,
                seed: profile.seed,
                date: startedAt,
                label: options.shard?.label
            )
        } catch {
            throw .cannotWrite("\(error)")
        }
        // A run that fails before it can send (unreachable target, missing PKI, a ledger that does not
        // start) leaves no folder behind; `latest` moves only once the run starts.
        var started = false
        defer { if !started { folder.remove() } }

        var target = try TargetSetup.prepare(profile: profile, options: options, folder: folder, log: log)
        defer { target.ledger?.stop() }
        let engine = try loadEngine(profile: profile)
        try TargetSetup.checkReachable(target.endpoints, with: engine)
        try TargetSetup.provision(&target, profile: profile, only: options.account, shard: options.shard, log: log)

        let bodies = DeliveryBodies(minter: minter(profile: profile, pki: target.pki), endpoints: target.endpoints)
        // Minting starts before the clock does, so the first sends never wait on a signature.
        let lead = 1.5
        let startMillis = Int64((Date().timeIntervalSince1970 + lead) * 1000)
        let world = World(profile: profile, startMillis: startMillis)
        let chaos = ChaosStream(world, profile: profile)
        let restarts = chaos.restarts
        let cache = BodyCache()
        // The run's clock, for shedding what minting cannot sign in time.
        let runStart = Double(startMillis) / 1000
        let clock: @Sendable () -> Double = { Date().timeIntervalSince1970 - runStart }
        let pipeline =
            if let shard = options.shard {
                MintPipeline(
                    stream: ShardDeliveries(base: chaos, shard: shard),
                    bodies: bodies,
                    cache: cache,
                    clock: clock
                )
            } else {
                MintPipeline(stream: chaos, bodies: bodies, cache: cache, clock: clock)
            }
        pipeline.start()
        defer { pipeline.stopAndWait() }

        let checker = Checker(profile: profile, startMillis: startMillis)
        let recorder: LoadRecorder
        let history: HistoryLog
        let snapshots = options.metricsListen == nil ? nil : LoadSnapshots()
        do {
            recorder = try LoadRecorder(
                directory: folder.url.path,
                startTime: Date(timeIntervalSince1970: Double(startMillis) / 1000),
                status: options.status,
                plannedDuration: .milliseconds(Int64(profile.durationSeconds * 1000)),
                snapshots: snapshots
            )
            history = try HistoryLog(
                directory: options.history ? folder.url.path : nil,
                capBytes: options.historyMaxMegabytes << 20,
                startMillis: startMillis
            )
        } catch let error as RunError {
            throw error
        } catch let error as OutputFileError {
            throw .cannotWrite(error.description)
        } catch {
            throw .cannotWrite("cannot write \(folder.url.path): \(error.localizedDescription)")
        }
        var metrics: MetricsEndpoint?
        if let listen = options.metricsListen, let snapshots {
            let endpoint = try MetricsEndpoint(listen: listen, snapshots: snapshots, checker: checker)
            log("metrics: http://\(endpoint.address)/metrics")
            metrics = endpoint
        }
        // Served through settle and the final probes too (their checks still count), until the report is out.
        defer { metrics?.shutdown() }
        let restartWindows = RestartWindows(restarts)
        let safetyProbes = Self.safetyProbes(
            profile: profile,
            target: target,
            checker: checker,
            startMillis: startMillis
        )
        let scheduler = RunScheduler(
            pipeline: pipeline,
            cache: cache,
            bodies: bodies,
            checker: checker,
            policy: ChaosPolicy(profile: profile),
            endpoints: target.endpoints,
            history: history,
            recorder: recorder,
            only: options.account,
            restartWindows: restartWindows,
            endOfSchedule: profile.durationSeconds,
            endOfFollowUps: profile.durationSeconds + profile.settleSeconds,
            transformer: profile.target.probe?.transform != nil ? safetyProbes : nil
        )
        current.withLock { $0 = engine }
        defer { current.withLock { $0 = nil } }
        folder.linkAsLatest()
        started = true

        let webhook = target.endpoints.webhook
        // The target is restarted once per run, not once per shard: shard 0 plays the restarts, and every
        // shard still classes its sends into the planned windows as `restart`.
        let restartThread = RestartPlayer(
            events: (options.shard?.index ?? 0) == 0 ? restarts : [],
            ledger: target.ledger,
            startMillis: startMillis,
            logPath: folder.file("restart.log").path,
            windows: restartWindows,
            reachable: { engine.probe(url: webhook).map { "\($0.error): \($0.detail)" } },
            log: log
        )
        restartThread.start()
        defer { restartThread.cancel() }

        let wait = Double(startMillis) / 1000 - Date().timeIntervalSince1970
        if wait > 0 { Thread.sleep(forTimeInterval: wait) }
        // Safety probes during the run: the profile's interval, or every 2 s on the embedded ledger.
        let probeInterval =
            target.endpoints.probe == nil ? 0 : profile.target.probe?.intervalSeconds ?? (target.ledger != nil ? 2 : 0)
        var lastSafetyRound = 0.0
        var saturation = HarnessSaturation(cpuAtStart: HarnessSaturation.processCPUSeconds())
        var saturationTold = false
        let stats = engine.run(timed: scheduler) { result in
            scheduler.handle(result)
        } tick: { stats in
            // An interrupt that came before the engine started is honored at its first tick.
            if interrupted.load(ordering: .relaxed) { engine.stop() }
            recorder.tick(stats)
            let now = stats.elapsed.seconds
            saturation.observe(
                at: now,
                sent: stats.sent,
                releaseLag: stats.releaseLag.seconds,
                mintWaited: pipeline.waited.seconds,
                shed: pipeline.shed,
                cpu: HarnessSaturation.processCPUSeconds()
            )
            // Said as soon as it is known, so whoever watches does not read the coming latency as the target's.
            if !saturationTold, let limit = saturation.limit {
                saturationTold = true
                log(limit.sentence + ": sends beyond PayStorm's own ceiling are counted as missed")
            }
            if probeInterval > 0 && now - lastSafetyRound >= probeInterval {
                lastSafetyRound = now
                scheduler.scheduleSafetyProbes(at: now, delay: 0.5)
            }
            // Command and bulk probes rate-cap their own rounds, off this thread.
            if let safetyProbes, target.endpoints.probe == nil, now <= profile.durationSeconds {
                safetyProbes.offer(
                    checker.drainAccountsOfInterest().filter { options.account == nil || $0 == options.account }
                )
            }
        }
        safetyProbes?.finish()
        scheduler.flushShed()
        history.flush()
        if let failure = stats.failure { throw .internalError("the load engine could not start: \(failure)") }

        // Settle, then read the final state of every account the oracle knows.
        var notes: [String] = []
        var probeSawGrants: Bool? = scheduler.probeSawGrants || safetyProbes?.sawGrants == true ? true : nil
        notes += safetyProbes?.notes ?? []
        if !interrupted.load(ordering: .relaxed) {
            // Settle counts from the end of the schedule: the engine kept sending retries and redeliveries due
            // within it, so only what remains of it is left to wait.
            let settleLeft = max(0, profile.settleSeconds - max(0, stats.elapsed.seconds - profile.durationSeconds))
            log(String(format: "settling for %.1f s more, then probing every account", settleLeft))
            Thread.sleep(forTimeInterval: settleLeft)
            let accounts = options.account.map { [$0] } ?? checker.knownAccounts()
            let final = FinalProbe(
                endpoints: target.endpoints,
                config: target.ledger == nil ? profile.target.probe : nil,
                engine: engine
            )
            let sawGrants = final.run(accounts: accounts, checker: checker, startMillis: startMillis) { results, t in
                scheduler.note(results, at: t)
            }
            if sawGrants {
                probeSawGrants = true
            } else if probeSawGrants == nil && !accounts.isEmpty {
                probeSawGrants = false
            }
            notes += final.notes
        }
        let wasInterrupted = interrupted.load(ordering: .relaxed)
        restartThread.finish()
        notes += restartThread.notes
        let summary = recorder.finish(
            stats,
            thresholds: thresholds,
            settings: ["seed": String(profile.seed)],
            writesSummary: false
        )
        history.close()
        if let dropped = history.droppedNote { notes.append(dropped) }

        let unchecked = Checker.unchecked(target: profile.target, probeReturnsGrants: probeSawGrants)
        let verdict = checker.verdict(unchecked: unchecked)
        notes += scheduler.mintFailures.prefix(20).map { "minting error: \($0)" }
        if scheduler.followUpsAfterSettle > 0 {
            notes.append(
                "\(scheduler.followUpsAfterSettle) retries or redeliveries fell after the settle period "
                    + "and were not sent"
            )
        }
        if wasInterrupted { notes.append("the run was interrupted; figures cover what was sent until then") }
        let harnessLimit = saturation.limit
        if let harnessLimit {
            let line =
                harnessLimit.sentence + ": latency from then on includes PayStorm's own delay, "
                + "so latency thresholds it breaches are unknown"
            log(line)
            notes.append(line)
        }
        // A safety round off the engine's thread may have seen an invariant fail first.
        let firstDetection = scheduler.firstDetection.merging(safetyProbes?.firstDetection ?? [:]) { min($0, $1) }
        let report = ReportBuilder.build(
            profile: profile,
            options: options,
            startedAt: startedAt,
            target: target.description,
            verdict: verdict,
            summary: summary,
            recorder: recorder,
            faults: scheduler.faultCounts,
            firstDetection: firstDetection,
            interrupted: wasInterrupted,
            notes: notes,
            acknowledgedOutside2xx: scheduler.acknowledgedOutside2xx,
            harnessLimited: harnessLimit,
            latencyThresholds: Set(thresholds.filter(\.metric.isLatency).map(\.expression))
        )
        do {
            try ReportWriter.writeAll(report, to: folder)
        } catch {
            throw .cannotWrite("\(error)")
        }
        var detections: [String: Double] = [:]
        for (invariant, t) in firstDetection { detections[invariant.rawValue] = t }
        return RunOutcome(report: report, folder: folder.url, firstDetection: detections)
    }

    static func format(_ seconds: Double) -> String { String(format: "%g", seconds) }

    /// The load engine of a run: the profile's timeout and CA file, 32 connections per host.
    static func loadEngine(profile: Profile) throws(RunError) -> LoadEngine {
        do {
            return try LoadEngine(
                LoadEngineConfiguration(
                    connectionsPerHost: 32,
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
    static func minter(profile: Profile, pki: TestPKI) -> Minter {
        Minter(
            pki: pki,
            app: AppIdentity(
                bundleId: profile.target.bundleId,
                appAppleId: profile.target.appAppleId,
                environment: Environment(rawValue: profile.target.environment)
            )
        )
    }

    /// The run's command-based safety probes: rounds of a `command` or `bulk` probe on the accounts of
    /// interest, or the `transform` of an `http` probe's answers; nil when the target has neither (the
    /// embedded ledger is probed over HTTP by the scheduler).
    private static func safetyProbes(
        profile: Profile,
        target: PreparedTarget,
        checker: Checker,
        startMillis: Int64
    ) -> SafetyProbes? {
        guard target.ledger == nil, let config = profile.target.probe, config.intervalSeconds > 0 else { return nil }
        let probe = ProcessProbe(config: config)
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
