import Chaos
import Checking
import Foundation
import Load
import Profile
import Reporting
import RunControl
import Simulation
import Synchronization

/// What the phases of one run share once its target is ready and its clock is set.
struct RunParts {
    let profile: Profile
    let options: RunOptions
    let target: PreparedTarget
    let engine: LoadEngine
    let api: RunAPI?
    let pipeline: MintPipeline
    let checker: Checker
    let recorder: LoadRecorder
    let history: HistoryLog
    let scheduler: RunScheduler
    let safetyProbes: SafetyProbes?
    let startMillis: Int64
    let log: @Sendable (String) -> Void
}

extension PayStormRun {
    /// The run's recorder (timeseries, latency log), its history and, with `--metrics-listen`, the snapshots the
    /// metrics endpoint serves.
    static func outputs(
        options: RunOptions,
        profile: Profile,
        folder: ReportFolder,
        startMillis: Int64
    ) throws(RunError) -> (LoadRecorder, HistoryLog, LoadSnapshots?) {
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
            return (recorder, history, snapshots)
        } catch let error as RunError {
            throw error
        } catch let error as OutputFileError {
            throw .cannotWrite(error.description)
        } catch {
            throw .cannotWrite("cannot write \(folder.url.path): \(error.localizedDescription)")
        }
    }

    /// Plays the schedule from the run's start time: the engine sends what the scheduler releases, and each
    /// tick records, drains the API's lines, watches PayStorm's own saturation and starts safety probes.
    /// - Returns: the engine's final counters and, when PayStorm fell behind its schedule, from when.
    static func play(_ parts: RunParts) -> (LoadEngineStats, HarnessLimit?) {
        let (profile, options, target, engine, api) = (
            parts.profile, parts.options, parts.target, parts.engine, parts.api
        )
        let (pipeline, checker, recorder, history) = (parts.pipeline, parts.checker, parts.recorder, parts.history)
        let (scheduler, safetyProbes, startMillis, log) = (
            parts.scheduler, parts.safetyProbes, parts.startMillis, parts.log
        )
        options.interruption.sleep(until: Date(timeIntervalSince1970: Double(startMillis) / 1000))
        // Safety probes during the run: the profile's interval, or every 2 s on the embedded ledger.
        let probeInterval =
            target.endpoints.probe == nil ? 0 : profile.target.probe?.intervalSeconds ?? (target.ledger != nil ? 2 : 0)
        var lastSafetyRound = 0.0
        var saturation = HarnessSaturation(cpuAtStart: HarnessSaturation.processCPUSeconds())
        var saturationTold = false
        var heapTrim = HeapTrim()
        let stats = engine.run(timed: scheduler) { result in
            scheduler.handle(result)
        } tick: { stats in
            recorder.tick(stats)
            api?.drain(into: history, startMillis: startMillis)
            let now = stats.elapsed.seconds
            heapTrim.tick(at: now)
            saturation.observe(
                at: now,
                sent: stats.sent,
                releaseLag: stats.releaseLag.seconds,
                mintWaited: pipeline.waited.seconds,
                shed: pipeline.shed,
                dropped: pipeline.admission?.counts.dropped ?? 0,
                cpu: HarnessSaturation.processCPUSeconds()
            )
            // Said as soon as it is known, so whoever watches does not read the coming latency as the target's.
            if !saturationTold, let limit = saturation.limit {
                saturationTold = true
                log(
                    limit.sentence
                        + ": PayStorm thins the schedule at the source to what it can sign, and counts what it drops"
                )
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
        api?.drain(into: history, startMillis: startMillis)
        history.flush()
        var limit = saturation.limit
        if let counts = pipeline.admission?.counts, counts.dropped > 0 {
            limit?.actions = HarnessLimit.DroppedActions(scheduled: Int(counts.arrivals), dropped: Int(counts.dropped))
        }
        return (stats, limit)
    }

    /// Waits out what remains of the settle period, then reads the final state of every account the oracle
    /// knows. Interrupted, it stops waiting at once, and the accounts not read by then are unknown.
    /// - Returns: notes for the report, and whether the probe returns per-transaction grants (nil: unknown).
    static func settle(_ parts: RunParts, stats: LoadEngineStats) -> (notes: [String], probeSawGrants: Bool?) {
        let (profile, options, target, engine) = (parts.profile, parts.options, parts.target, parts.engine)
        let (checker, scheduler, safetyProbes, log) = (parts.checker, parts.scheduler, parts.safetyProbes, parts.log)
        let startMillis = parts.startMillis
        // Settle, then read the final state of every account the oracle knows.
        var notes: [String] = []
        var probeSawGrants: Bool? = scheduler.probeSawGrants || safetyProbes?.sawGrants == true ? true : nil
        notes += safetyProbes?.notes ?? []
        if let waits = scheduler.connectionWaits.note(connections: profile.target.connections) { notes.append(waits) }
        if let resent = scheduler.connectionWaits.resentNote { notes.append(resent) }
        if !options.interruption.isInterrupted {
            // The engine kept sending the retries, redeliveries and relaunches due until none was left (or the
            // longest settle came): only what remains of the least settle is left to wait.
            let wait = SettleWait(
                schedule: profile.durationSeconds,
                least: profile.settleSeconds,
                longest: profile.longestSettleSeconds,
                engineStopped: stats.elapsed.seconds,
                cut: scheduler.followUpsAfterSettle
            )
            notes.append(wait.note)
            let settleLeft = wait.left
            // A Retry-After that held the safety probes holds the final probe too, as long as one of its own would.
            let held = min(
                FinalProbe.BackOff.longestWait,
                max(0, scheduler.probesHeldUntil - stats.elapsed.seconds - settleLeft)
            )
            log(
                wait.console + String(format: "; settling for %.1f s more", settleLeft)
                    + (held > 0 ? String(format: " and %.1f s as the target's Retry-After asked", held) : "")
                    + ", then probing every account"
            )
            options.interruption.sleep(settleLeft + held)
            let waited = waitForRestart(parts, until: profile.durationSeconds + profile.longestSettleSeconds)
            if waited >= 0.1 {
                let line = String(format: "the final probe waited %.1f s more for a planned restart to end", waited)
                log(line)
                notes.append(line)
            }
        }
        // Also when interrupted: the accounts it does not read are then made unknown.
        let accounts = options.account.map { [$0] } ?? checker.knownAccounts()
        let final = FinalProbe(
            endpoints: target.endpoints,
            config: target.ledger == nil ? profile.target.probe : nil,
            engine: engine,
            interruption: options.interruption
        )
        let sawGrants = final.run(accounts: accounts, checker: checker, startMillis: startMillis) { results, t in
            scheduler.note(results, at: t)
        }
        if sawGrants {
            probeSawGrants = true
        } else if probeSawGrants == nil && !accounts.isEmpty && !options.interruption.isInterrupted {
            probeSawGrants = false
        }
        notes += final.notes
        return (notes, probeSawGrants)
    }
}

/// Facts of a run that has played, for its report.
struct RunFacts {
    var startedAt: Date
    /// The signal that interrupted the run, if one did.
    var interruptedBy: StopSignal?
    var harnessLimit: HarnessLimit?
    var notes: [String]
    var probeSawGrants: Bool?
}

extension PayStormRun {
    /// Notes on what the target's answers meant beside the checks: refused credentials, "retry later", the
    /// purchases that left no check to make, and rate-limited safety probes. The first two are also said on the
    /// console.
    private static func answerNotes(_ parts: RunParts) -> [String] {
        let (scheduler, log) = (parts.scheduler, parts.log)
        let accounts = parts.profile.target.accounts
        let refused = scheduler.unauthorized.note(
            provisionedOnce: accounts?.provision != nil && accounts?.refreshSeconds == nil
        )
        let told = [refused, scheduler.deferred.note].compactMap { $0 }
        told.forEach(log)
        return told + [parts.checker.heldNote, scheduler.rateLimitedProbes.note].compactMap { $0 }
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
    static func mintPipeline(
        options: RunOptions,
        profile: Profile,
        target: PreparedTarget,
        api: RunAPI?,
        admissions: [ArrivalAdmission.Change]?,
        startMillis: Int64
    ) -> (MintPipeline, DeliveryBodies, BodyCache, [TargetRestartEvent]) {
        let bodies = DeliveryBodies(minter: minter(profile: profile, pki: target.pki), endpoints: target.endpoints)
        // The schedule is thinned at the source while minting cannot keep up, unless a replay plays the
        // admissions of the run it replays.
        let admission =
            admissions.map { ArrivalAdmission(seed: profile.seed, replaying: $0) }
            ?? ArrivalAdmission(seed: profile.seed)
        // With an App Store Server API, every action is recorded into its store as the world yields it.
        let world = APIFeed(
            World(profile: profile, startMillis: startMillis, admission: admission),
            store: api?.store
        )
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

    /// Missed sends at or above this share of those scheduled are told on the console and in the notes.
    static let missedShareTold = 0.01

    /// What a run that missed many of its sends did not test: a missed delivery obliges the target to nothing,
    /// so the verdict covers only what was sent, whether or not the run was harness-limited (misses in bursts
    /// shorter than its three ticks are not).
    static func missedNote(_ totals: LoadCounts) -> String? {
        guard totals.scheduled > 0, Double(totals.missed) >= missedShareTold * Double(totals.scheduled) else {
            return nil
        }
        let share = String(format: "%.1f%%", 100 * Double(totals.missed) / Double(totals.scheduled))
        return "\(totals.missed) of \(totals.scheduled) deliveries (\(share)) were missed, never sent (PayStorm was "
            + "behind its schedule or at its in-flight cap at their time): they oblige the target to nothing, so "
            + "the verdict covers only what was sent"
    }

    /// Closes the recorder and the history, judges the run, and writes its report folder.
    static func report(
        _ parts: RunParts,
        stats: LoadEngineStats,
        thresholds: [Threshold],
        run: RunFacts,
        folder: ReportFolder
    ) throws(RunError) -> RunOutcome {
        let (profile, options, target, api) = (parts.profile, parts.options, parts.target, parts.api)
        let (checker, recorder, history, scheduler) = (parts.checker, parts.recorder, parts.history, parts.scheduler)
        let (safetyProbes, startMillis, log) = (parts.safetyProbes, parts.startMillis, parts.log)
        var notes = target.notes + run.notes
        api?.drain(into: history, startMillis: startMillis)
        notes += api?.notes ?? []
        let summary = recorder.finish(
            stats,
            thresholds: thresholds,
            settings: ["seed": String(profile.seed)],
            writesSummary: false
        )
        history.close()
        if let dropped = history.droppedNote { notes.append(dropped) }

        let unchecked = Checker.unchecked(target: profile.target, probeReturnsGrants: run.probeSawGrants)
        let verdict = checker.verdict(unchecked: unchecked)
        notes += scheduler.mintFailures.prefix(20).map { "minting error: \($0)" }
        notes += scheduler.followUpNotes
        if let signal = run.interruptedBy {
            notes.append("the run was interrupted (\(signal.name)); figures cover what was sent until then")
        }
        if let harnessLimit = run.harnessLimit {
            let line =
                harnessLimit.sentence + ": latency from then on includes PayStorm's own delay, "
                + "so latency thresholds it breaches are unknown"
            log(line)
            notes.append(line)
        }
        if let missed = missedNote(summary.totals) {
            log(missed)
            notes.append(missed)
        }
        notes += answerNotes(parts)
        let admissions = try admissionsFile(parts.pipeline.admission, folder: folder)
        if let admissions {
            notes.append(admissions.note)
            if run.harnessLimit == nil { log(admissions.note) }
        }
        // A safety round off the engine's thread may have seen an invariant fail first.
        let firstDetection = scheduler.firstDetection.merging(safetyProbes?.firstDetection ?? [:]) { min($0, $1) }
        let report = ReportBuilder.build(
            profile: profile,
            options: options,
            startedAt: run.startedAt,
            target: target.description,
            verdict: verdict,
            summary: summary,
            recorder: recorder,
            faults: scheduler.faultCounts.merging(api?.faultCounts ?? [:], uniquingKeysWith: +),
            firstDetection: firstDetection,
            interruptedBy: run.interruptedBy,
            notes: notes,
            acknowledgedOutside2xx: scheduler.acknowledgedOutside2xx,
            harnessLimited: run.harnessLimit,
            latencyThresholds: Set(thresholds.filter(\.metric.isLatency).map(\.expression)),
            admissionsPath: admissions?.path
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

    /// Writes `admissions.csv` when the world dropped arrivals at the source (or played a replay's admissions
    /// back), so the run's witnesses can be replayed on the same world.
    /// - Returns: the file's path and a note for the report; nil when every arrival was admitted.
    static func admissionsFile(
        _ admission: ArrivalAdmission?,
        folder: ReportFolder
    ) throws(RunError) -> (path: String, note: String)? {
        guard let admission, !admission.changes.isEmpty else { return nil }
        let url = folder.file(AdmissionsFile.name)
        do {
            try Data(AdmissionsFile.render(admission.changes).utf8).write(to: url, options: .atomic)
        } catch {
            throw .cannotWrite("\(url.path): \(error.localizedDescription)")
        }
        let (arrivals, dropped) = admission.counts
        let note =
            "\(dropped) of \(arrivals) scheduled actions were dropped at the source while PayStorm could not keep "
            + "up (the same seed alone generates a different world: replays pass --admissions \(url.path))"
        return (url.path, note)
    }

    /// The live OpenMetrics endpoint of `--metrics-listen`, started; nil without it.
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

    /// The thread that plays the planned target restarts. The target is restarted once per run, not once per
    /// shard: shard 0 plays the restarts, and every shard still classes its sends into the planned windows as
    /// `restart`.
    static func restartPlayer(
        options: RunOptions,
        target: PreparedTarget,
        engine: LoadEngine,
        restarts: ([TargetRestartEvent], RestartWindows),
        startMillis: Int64,
        folder: ReportFolder,
        log: @escaping @Sendable (String) -> Void
    ) -> RestartPlayer {
        let webhook = target.endpoints.webhook
        return RestartPlayer(
            events: (options.shard?.index ?? 0) == 0 ? restarts.0 : [],
            ledger: target.ledger,
            startMillis: startMillis,
            logPath: folder.file("restart.log").path,
            windows: restarts.1,
            reachable: { engine.probe(url: webhook).map { "\($0.error): \($0.detail)" } },
            log: log,
            interruption: options.interruption
        )
    }

    /// The scheduler that feeds the engine from the mint pipeline and routes answers to the oracle (and each
    /// webhook attempt to the App Store Server API's history), and the run's command-based safety probes (also
    /// the transform of an HTTP probe's answers).
    static func makeScheduler(
        options: RunOptions,
        profile: Profile,
        target: PreparedTarget,
        minting: (MintPipeline, DeliveryBodies, BodyCache),
        checker: Checker,
        outputs: (LoadRecorder, HistoryLog),
        restartWindows: RestartWindows,
        api: RunAPI?,
        startMillis: Int64
    ) -> (RunScheduler, SafetyProbes?) {
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
            attempts: api.map { WebhookAttempts(store: $0.store, startMillis: startMillis) }
        )
        return (scheduler, safetyProbes)
    }
}
