public import Foundation
public import Load
public import PayStorm
import Primitives
import Profile
public import Reporting
public import RunControl
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// What `paystorm capacity` was asked to do.
public struct CapacityOptions: Sendable {
    /// The profile and everything a run takes (seed, PKI, flaws, variables, reports directory); its schedule
    /// is replaced by each step's constant rate.
    public var run: RunOptions
    /// The objectives, in the threshold grammar; empty: the profile's thresholds.
    public var slos: [String] = []
    /// The first rate in actions per second; nil: the rate the profile's schedule starts at.
    public var start: Double?
    /// The multiplier while stepping up.
    public var factor = 2.0
    /// The bisection stops when the good and bad rates are this close (a fraction of the good one).
    public var resolution = 0.05
    /// Each step's length, seconds.
    public var stepSeconds = 15.0
    /// The first seconds of each step, not judged.
    public var warmupSeconds = 5.0
    /// The most steps.
    public var maxSteps = 16
    /// The highest rate tried, actions per second; nil: 1,000 times the start.
    public var maxRate: Double?
    /// What this search measured (a commit, a build), written to `capacity.json` as `label` for
    /// `paystorm capacity trend`; nil: none.
    public var label: String?
    /// The longest the search waits, before each step after the first, for an external target to answer a light
    /// probe at its quiet latency again (see `docs/capacity.md`); 0: it does not probe.
    public var recoveryTimeoutSeconds = 60.0

    /// Creates options for a profile.
    public init(run: RunOptions) {
        self.run = run
    }
}

/// What a capacity search or a re-analysis found, and where it wrote it.
public struct CapacityOutcome: Sendable {
    /// The analysis (also in `capacity.json`).
    public var report: CapacityReport
    /// The folder holding `capacity.csv`, `capacity.json` and `capacity.html`.
    public var folder: URL
    /// The signal that stopped the search, if one did; the steps finished before it are analysed.
    public var interruptedBy: StopSignal?
}

/// `paystorm capacity`: finds the highest rate a target sustains within its objectives, one constant-rate
/// run of the profile per step (see ``CapacitySearch``), and fits the Universal Scalability Law to the steps.
///
/// ```swift
/// var options = CapacityOptions(run: RunOptions(profilePath: "Profiles/capacity.json5"))
/// options.slos = ["p99 < 250ms", "errorRate < 0.1%"]
/// let outcome = try PayStormCapacity.execute(options)
/// print(outcome.report.sentence)
/// ```
///
/// Interrupted (`RunOptions.interruption` of ``CapacityOptions/run``), the step in progress is cut short and
/// left out, and the report, its outcome `interrupted`, analyses the steps finished before.
public enum PayStormCapacity {
    /// The objective that judges correctness beside speed: a step whose run failed an invariant is a bad step,
    /// so the search finds the highest rate at which the target is both within its other objectives and right
    /// (a dedupe that races only under load double-grants from some rate up).
    public static let invariantsSLO = SLOObservation.invariantsExpression

    /// Whether the objectives include ``invariantsSLO``.
    public static func judgesInvariants(_ texts: [String]) -> Bool {
        texts.contains(where: isInvariantsSLO)
    }

    /// The objectives as a capacity report lists them: the thresholds, then ``invariantsSLO`` when judged.
    static func expressions(_ thresholds: [Threshold], invariants: Bool) -> [String] {
        thresholds.map(\.expression) + (invariants ? [invariantsSLO] : [])
    }

    private static func isInvariantsSLO(_ text: String) -> Bool {
        text.trimmingCharacters(in: .whitespaces) == invariantsSLO
    }

    /// Parses objectives in the threshold grammar (``invariantsSLO`` is not one, and is left out). Count
    /// metrics are judged on all traffic, so only latency objectives may name a kind.
    /// - Throws: `LoadConfigurationError` (Load) naming the objective.
    public static func parseSLOs(_ texts: [String]) throws(LoadConfigurationError) -> [Threshold] {
        try texts.filter { !isInvariantsSLO($0) }.map { text throws(LoadConfigurationError) in
            let slo = try Threshold.parse(text, kinds: PayStormRun.thresholdKinds)
            if slo.kind != nil && slo.kind != "all" && !slo.metric.isLatency {
                throw LoadConfigurationError("SLO '\(text)': only latency SLOs may name a kind; drop '\(slo.kind!).'")
            }
            return slo
        }
    }

    /// Runs the search and writes its folder: `Reports/<UTC time>-<profile>-<seed>-capacity/` with a report
    /// folder per step under `steps/`.
    /// - Parameters:
    ///   - options: what to search.
    ///   - log: where progress lines go.
    /// - Returns: the analysis and its folder.
    /// - Throws: `RunError` when the profile is bad or a step cannot run.
    public static func execute(
        _ options: CapacityOptions,
        log: @escaping @Sendable (String) -> Void = { _ in }
    ) throws(RunError) -> CapacityOutcome {
        let (profile, thresholds) = try PayStormRun.load(options.run)
        // The profile's thresholds go through the same rules as --slo: a count on one kind would be judged on
        // counts a step does not keep per kind, and always hold.
        let slos: [Threshold]
        let texts = options.slos.isEmpty ? thresholds.map(\.expression) : options.slos
        let invariants = judgesInvariants(texts)
        do {
            slos = try parseSLOs(texts)
        } catch {
            throw options.slos.isEmpty
                ? .badProfile("\(options.run.profilePath): thresholds: \(error)") : .badInput("\(error)")
        }
        let expressions = expressions(slos, invariants: invariants)
        guard !expressions.isEmpty else {
            throw .badInput("\(options.run.profilePath): no SLO: pass --slo or give the profile thresholds")
        }
        let first = profile.schedule.first.map { $0.rate(at: 0) > 0 ? $0.rate(at: 0) : $0.peakRate } ?? 0
        // The profile's first rate gives way to a lower --max-rate, so that the first step is the rate reported.
        let start = options.start ?? min(first, options.maxRate ?? first)
        guard start > 0 else {
            throw .badProfile("\(options.run.profilePath): schedule: starts at 0 actions/s; pass --start RATE")
        }
        let folder: ReportFolder
        do {
            folder = try ReportFolder(
                root: URL(fileURLWithPath: options.run.reportsDirectory),
                profile: profile.name,
                seed: profile.seed,
                label: "capacity"
            )
        } catch {
            throw .cannotWrite("\(error)")
        }
        let search = CapacitySearch(
            start: start,
            factor: options.factor,
            resolution: options.resolution,
            maxSteps: options.maxSteps,
            maxRate: options.maxRate ?? start * 1000
        )
        log(
            "capacity: \(profile.name), seed \(profile.seed), from \(CapacityReport.rate(start)) actions/s ×\(format(options.factor)), "
                + "\(format(options.stepSeconds)) s steps (the first \(format(options.warmupSeconds)) s warm-up, not judged), "
                + "SLOs: \(expressions.joined(separator: ", "))"
        )
        let recovery = try recoveryProbe(options, profile: profile, log: log)
        var steps: [CapacityStep] = []
        let results = try search.run { (index, rate) throws(RunError) -> Bool? in
            let waited = index == 1 ? nil : recovery.map { $0.awaitRecovery(timeout: options.recoveryTimeoutSeconds) }
            if let waited { log("before step \(index), \(waited.sentence)") }
            guard
                let step = try runStep(
                    index: index,
                    rate: rate,
                    options: options,
                    slos: (slos, invariants),
                    folder: folder.url,
                    recovery: waited
                )
            else { return nil }
            log(describe(step))
            steps.append(step)
            return step.isGood
        }
        let interruptedBy = options.run.interruption.signal
        var report = CapacityReport(
            steps: steps,
            slos: expressions,
            profile: profile.name,
            seed: profile.seed,
            interruptedBy: interruptedBy?.name,
            searchEnd: search.end(after: results)
        )
        report.label = options.label
        do {
            try CapacityWriter.writeAll(report, to: folder.url)
        } catch {
            throw .cannotWrite("\(error)")
        }
        return CapacityOutcome(report: report, folder: folder.url, interruptedBy: interruptedBy)
    }

    /// The probe that lets an external target recover between steps, its quiet latency measured now; nil when
    /// the search does not wait (`recoveryTimeoutSeconds` 0, the embedded ledger, a target that did not answer
    /// while quiet).
    private static func recoveryProbe(
        _ options: CapacityOptions,
        profile: Profile,
        log: @Sendable (String) -> Void
    ) throws(RunError) -> QuietTarget? {
        guard options.recoveryTimeoutSeconds > 0,
            let probe = try RecoveryProbe(profile: profile, interruption: options.run.interruption)
        else { return nil }
        guard let quiet = probe.quietLatency() else {
            if !options.run.interruption.isInterrupted {
                log(
                    "recovery: the target answered fewer than half of \(RecoveryProbe.quietProbes) quiet probes, "
                        + "so the search does not wait for it to recover between steps"
                )
            }
            return nil
        }
        let target = QuietTarget(probe: probe, quietMicros: quiet)
        log(
            "recovery: quiet latency \(CapacityRecovery.milliseconds(quiet)) (median of \(RecoveryProbe.quietProbes) "
                + "probes); before each step PayStorm probes until \(RecoveryProbe.window) in a row answer within "
                + "\(CapacityRecovery.milliseconds(target.boundMicros)) by median, at most "
                + "\(format(options.recoveryTimeoutSeconds)) s"
        )
        return target
    }

    /// One step: the profile at a constant rate, its report in `steps/`, then judged from that folder.
    /// - Returns: the step, or nil when the search was interrupted during it.
    private static func runStep(
        index: Int,
        rate: Double,
        options: CapacityOptions,
        slos: (thresholds: [Threshold], invariants: Bool),
        folder: URL,
        recovery: CapacityRecovery?
    ) throws(RunError) -> CapacityStep? {
        var run = options.run
        run.schedule = [RateSegment(.constant(rate: rate), seconds: options.stepSeconds)]
        // A step measures throughput; its final probes need the settle only to let the last answers in.
        run.settleSeconds = 1
        run.settleMaxSeconds = 1
        run.rateScale = 1
        run.status = .quiet
        run.reportsDirectory = folder.appendingPathComponent("steps").path
        if run.interruption.isInterrupted { return nil }
        let sampler = CPUSampler()
        let outcome: RunOutcome
        do {
            outcome = try PayStormRun(run).execute()
        } catch  where run.interruption.isInterrupted {
            sampler.stop()
            return nil
        }
        sampler.stop()
        if run.interruption.isInterrupted { return nil }
        // A request hook that failed stopped the step's run: what it did not send says nothing of the target, and
        // every later step would run through the same hook.
        if let failure = outcome.failure { throw .unreachable(failure) }
        // The judged window in wall-clock time: the run's clock starts at the latency log's StartTime.
        let startTime =
            (try? HistogramLogReader.read(path: outcome.folder.appendingPathComponent("latency.hlog").path))?
            .startTime
        let cpu = startTime.flatMap {
            sampler.cores(from: $0 + options.warmupSeconds, to: $0 + options.stepSeconds)
        }
        let plan = CapacityStepPlan(
            index: index,
            rate: rate,
            seconds: options.stepSeconds,
            warmupSeconds: options.warmupSeconds,
            harnessCPU: cpu,
            recovery: recovery
        )
        try write(plan, into: outcome.folder)
        do {
            return try CapacityStepReader.read(
                outcome.folder,
                name: "steps/" + outcome.folder.lastPathComponent,
                slos: slos.thresholds,
                invariants: slos.invariants
            ).step
        } catch {
            throw .internalError("step \(index) wrote a report it cannot read: \(error)")
        }
    }

    /// Writes a step's plan as `step.json` into its report folder.
    private static func write(_ plan: CapacityStepPlan, into folder: URL) throws(RunError) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        do {
            try encoder.encode(plan).write(to: folder.appendingPathComponent(CapacityStepPlan.fileName))
        } catch {
            throw .cannotWrite("\(folder.path)/\(CapacityStepPlan.fileName): \(error.localizedDescription)")
        }
    }

    /// One console line per step.
    static func describe(_ step: CapacityStep) -> String {
        let rate = CapacityReport.rate
        var line =
            "step \(step.index): \(rate(step.rate)) actions/s: offered \(rate(step.offered))/s, achieved "
            + "\(rate(step.achieved))/s, p99 \(String(format: "%.1f", Double(step.latency.p99) / 1000)) ms, "
            + "errors \(step.errors.values.reduce(0, +))"
        if let cpu = step.harnessCPU { line += String(format: ", PayStorm CPU %.2f cores", cpu) }
        if let limited = step.harnessLimited {
            line += " -> \(limited)"
        } else if step.isGood {
            line += " -> good"
        } else {
            line +=
                " -> broke "
                + step.slos.filter { !$0.held }.map { "\($0.expression) (\($0.observedText))" }
                .joined(separator: ", ")
        }
        if !step.failedInvariantsText.isEmpty { line += "; invariants failed: \(step.failedInvariantsText)" }
        return line
    }

    static func format(_ value: Double) -> String { String(format: "%g", value) }
}

/// Samples this process's CPU time a few times a second on its own thread, so the CPU PayStorm used over a
/// step's judged window can be told afterwards (the embedded ledger is another process and not counted).
final class CPUSampler: Sendable {
    private let samples = Mutex<[(wall: Double, cpu: Double)]>([])
    private let stopped = Atomic<Bool>(false)

    init() {
        Thread.detachNewThread { [self] in
            while !stopped.load(ordering: .relaxed) {
                let sample = (Date().timeIntervalSince1970, Self.processCPU())
                samples.withLock { $0.append(sample) }
                Thread.sleep(forTimeInterval: 0.25)
            }
        }
    }

    func stop() { stopped.store(true, ordering: .relaxed) }

    /// Cores used between two wall-clock times (seconds since the epoch), from the samples nearest them.
    func cores(from: Double, to: Double) -> Double? {
        let all = samples.withLock { $0 }
        guard let first = all.last(where: { $0.wall <= from }) ?? all.first,
            let last = all.first(where: { $0.wall >= to }) ?? all.last, last.wall > first.wall
        else { return nil }
        return (last.cpu - first.cpu) / (last.wall - first.wall)
    }

    private static func processCPU() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }
}
