import Chaos
import Checking
import Foundation
import Load
import Profile
import Reporting
import RunControl
import Simulation

/// What a run owns once its target is ready and its clock is set, and the phases that use it: play, settle and
/// probe here, report in `RunReporting.swift`. ``PayStormRun`` prepares it and carries out its phases.
struct RunParts {
    let profile: Profile
    let options: RunOptions
    let thresholds: [Threshold]
    let startedAt: Date
    let target: PreparedTarget
    let engine: LoadEngine
    let api: RunAPI?
    let pipeline: MintPipeline
    let checker: Checker
    let recorder: LoadRecorder
    let history: HistoryLog
    /// The live metrics endpoint of `--metrics-listen` (nil without it): served through settle and the final
    /// probe too (their checks still count), and through the linger after the report; the run's end closes it
    /// also when the run fails first.
    let metrics: MetricsEndpoint?
    let scheduler: RunScheduler
    let safetyProbes: SafetyProbes?
    /// The target restarts the chaos planned, and the windows in which they have the target down.
    let restarts: [TargetRestartEvent]
    let restartWindows: RestartWindows
    let folder: ReportFolder
    /// Why `latest` beside the report folder does not name it, if it does not.
    let latestNote: String?
    let startMillis: Int64
    let log: @Sendable (String) -> Void
}

/// Facts of a run as its phases find them, for its report.
struct RunFacts {
    /// The engine's final counters.
    var stats: LoadEngineStats?
    /// The signal that interrupted the run, if one did.
    var interruptedBy: StopSignal?
    var harnessLimit: HarnessLimit?
    var notes: [String] = []
    /// Whether the probe returns per-transaction grants (nil: unknown).
    var probeSawGrants: Bool?
    /// Why the request hook stopped the run, if it did.
    var hookFailure: String?
}

extension RunParts {
    /// The thread that plays the planned target restarts. The target is restarted once per run, not once per
    /// shard: shard 0 plays the restarts, and every shard still classes its sends into the planned windows as
    /// `restart`.
    func restartPlayer() -> RestartPlayer {
        let (engine, webhook) = (engine, target.endpoints.webhook)
        return RestartPlayer(
            events: (options.shard?.index ?? 0) == 0 ? restarts : [],
            ledger: target.ledger,
            startMillis: startMillis,
            logPath: folder.file("restart.log").path,
            windows: restartWindows,
            reachable: { engine.probe(url: webhook).map { "\($0.error): \($0.detail)" } },
            log: log,
            interruption: options.interruption
        )
    }

    /// The refresher that keeps the accounts' credentials fresh (`target.accounts.refreshSeconds`), nil when the
    /// profile asks for none.
    func refresher() -> AccountRefresher? {
        AccountRefresher.forRun(
            profile: profile,
            options: options,
            directory: target.endpoints.accounts,
            startMillis: startMillis,
            log: log
        )
    }

    /// Plays the schedule from the run's start time: the engine sends what the scheduler releases, and each
    /// tick records, drains the API's lines, watches PayStorm's own saturation and starts safety probes.
    /// - Returns: the engine's final counters and, when PayStorm fell behind its schedule, from when.
    func play() -> (LoadEngineStats, HarnessLimit?) {
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

    /// Waits out what remains of the settle period (`waiting`, unless the run was interrupted), and a planned
    /// restart still under way; adds the notes of the safety probes and of the settle to `facts`.
    func settle(stats: LoadEngineStats, waiting: Bool, facts: inout RunFacts) {
        facts.probeSawGrants = scheduler.probeSawGrants || safetyProbes?.sawGrants == true ? true : nil
        facts.notes += safetyProbes?.notes ?? []
        if let waits = scheduler.connectionWaits.note(connections: profile.target.connections) {
            facts.notes.append(waits)
        }
        if let resent = scheduler.connectionWaits.resentNote { facts.notes.append(resent) }
        guard waiting else { return }
        // The engine kept sending the retries, redeliveries and relaunches due until none was left (or the
        // longest settle came): only what remains of the least settle is left to wait.
        let wait = SettleWait(
            schedule: profile.durationSeconds,
            least: profile.settleSeconds,
            longest: profile.longestSettleSeconds,
            engineStopped: stats.elapsed.seconds,
            cut: scheduler.followUpsAfterSettle
        )
        facts.notes.append(wait.note)
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
        let waited = waitForRestart(until: profile.durationSeconds + profile.longestSettleSeconds)
        if waited >= 0.1 {
            let line = String(format: "the final probe waited %.1f s more for a planned restart to end", waited)
            log(line)
            facts.notes.append(line)
        }
    }

    /// Waits while a planned restart has the target down (killed, not yet answering again, its restart not
    /// failed), at most until `end` seconds into the run: the final probe would find the target gone and decide
    /// nothing. A restart can outlast the traffic that would have waited for it (none was refused by it).
    /// - Returns: the seconds waited.
    func waitForRestart(until end: Double) -> Double {
        let start = Double(startMillis) / 1000
        let clock = { Date().timeIntervalSince1970 - start }
        let began = clock()
        while scheduler.restartUnderWay(at: clock()), clock() < end {
            guard options.interruption.sleep(0.1) else { break }
        }
        return clock() - began
    }

    /// Reads the final state of every account the oracle knows (the replayed account alone). Interrupted, it
    /// stops at once, and the accounts not read by then are unknown.
    func probe(facts: inout RunFacts) {
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
            facts.probeSawGrants = true
        } else if facts.probeSawGrants == nil && !accounts.isEmpty && !options.interruption.isInterrupted {
            facts.probeSawGrants = false
        }
        facts.notes += final.notes
    }
}
