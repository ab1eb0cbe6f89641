import Load
import Reporting
public import RunControl
import Synchronization

/// One PayStorm run: wires Profile → Simulation → Chaos → Load → Checking → Reporting.
///
/// A run owns its parts (the target, the load engine, the mint pipeline, the checker, the outputs) and goes through
/// its phases, prepare, play, settle, probe and report, as `RunStateMachine` decides; whoever holds it may
/// interrupt it from any thread, and it then still writes its report, marked interrupted.
///
/// ```swift
/// var options = RunOptions(profilePath: "Profiles/smoke.json5")
/// options.flaws = ["double-grant"]
/// let run = PayStormRun(options)
/// // from a signal handler: run.interrupt(.terminate)
/// let outcome = try run.execute()
/// print(outcome.report.verdict)  // .fail, with a witness per violation
/// ```
public final class PayStormRun: Interruptible, @unchecked Sendable {
    // @unchecked: `interrupt`, `abandon` and `signal` are the only members called from other threads; they touch
    // `machine` and `engine` under their locks and the thread-safe `Interruption`. Every `var` belongs to the
    // thread that calls `execute()`.

    /// What the run was asked to do.
    public let options: RunOptions
    let log: @Sendable (String) -> Void
    private let machine = Mutex(RunStateMachine())
    /// The engine to stop when the run is interrupted, once it has one.
    private let engine = Mutex<LoadEngine?>(nil)
    private var error: RunError?
    /// The report folder, once created: removed again when the run fails before it sends.
    var folder: ReportFolder?
    /// The parts, once prepared.
    var parts: RunParts?
    private var facts = RunFacts()
    private var outcome: RunOutcome?
    /// Plays the target restarts the chaos planned, from the start of play.
    private var restartPlayer: RestartPlayer?
    /// Keeps the accounts' credentials fresh, from the start of play.
    private var refresher: AccountRefresher?
    /// What to stop or release when the run ends, in the order acquired; undone last first.
    private var cleanups: [() -> Void] = []

    /// A run of `options`, not started.
    /// - Parameters:
    ///   - options: what to run. Interrupting ``RunOptions/interruption`` interrupts the run too (a capacity
    ///     search stops every step with it).
    ///   - log: where progress lines go (the verdict is the caller's to print).
    public init(_ options: RunOptions, log: @escaping @Sendable (String) -> Void = { _ in }) {
        self.options = options
        self.log = log
    }

    /// Stops the run early: it stops sending, ends every wait, and writes its report with what it decided until
    /// then. Only the first call counts; callable from any thread (a signal handler).
    public func interrupt(_ signal: StopSignal) {
        options.interruption.interrupt(signal)
    }

    /// Kills the child processes the run is waiting on, for a command about to exit at once without unwinding.
    public func abandon() {
        options.interruption.abandon()
    }

    /// The signal that interrupted the run, nil while it runs on.
    public var signal: StopSignal? { options.interruption.signal }

    /// Runs the profile to a verdict and writes its report folder. A run executes once.
    /// - Returns: the report and where it was written; interrupted, the report holds what was decided until then.
    /// - Throws: `RunError` when the run cannot start (bad profile, unreachable target, unwritable report) or its
    ///   engine fails.
    public func execute() throws(RunError) -> RunOutcome {
        let watching = options.interruption.onInterrupt { [self] in noteInterruption() }
        defer { watching.cancel() }
        defer { cleanUp() }
        var action = machine.withLock { $0.start() }
        while true {
            switch action {
            case .prepare:
                action = carryOut(prepare)
            case .play:
                parts?.metrics?.run.enter(.play)
                action = carryOut(play)
            case .settle(let wait):
                parts?.metrics?.run.enter(.settle)
                action = carryOut { () throws(RunError) in settle(waiting: wait) }
            case .probe:
                parts?.metrics?.run.enter(.probe)
                action = carryOut(probe)
            case .report(let signal):
                parts?.metrics?.run.enter(.report)
                action = carryOut { () throws(RunError) in try report(interruptedBy: signal) }
            case .finish:
                guard let outcome else { throw .internalError("the run finished without a report") }
                return outcome
            case .fail(let discardFolder):
                cleanUp()
                if discardFolder { folder?.remove() }
                throw error ?? .internalError("a run executes once")
            case .stopSending, .none:
                throw .internalError("the run's phases stopped at \(action)")
            }
        }
    }

    /// Carries out one phase and tells the machine how it ended.
    private func carryOut(_ phase: () throws(RunError) -> Void) -> RunStateMachine.Action {
        do {
            try phase()
        } catch {
            self.error = error
            return machine.withLock { $0.phaseFailed() }
        }
        // A phase whose wait the interruption ended may end before the handler has told the machine.
        noteInterruption()
        return machine.withLock { $0.phaseEnded() }
    }

    /// Tells the machine of the interruption, if there is one, and stops sending when it says so. Called from the
    /// interruption's handler and from the run's thread at the end of each phase, whichever comes first.
    private func noteInterruption() {
        guard let signal = options.interruption.signal else { return }
        if machine.withLock({ $0.interrupt(signal) }) == .stopSending {
            engine.withLock { $0?.cancel() }
        }
    }

    /// Makes `engine` the one an interruption stops; stops it at once when the run was interrupted already.
    func watch(_ engine: LoadEngine) {
        self.engine.withLock { $0 = engine }
        if options.interruption.isInterrupted { engine.cancel() }
    }

    /// Keeps `cleanup` to run when the run ends, before those kept earlier.
    func onEnd(_ cleanup: @escaping () -> Void) {
        cleanups.append(cleanup)
    }

    private func cleanUp() {
        while let cleanup = cleanups.popLast() { cleanup() }
    }

    /// Plays the schedule and the planned restarts, with the accounts' credentials kept fresh.
    private func play() throws(RunError) {
        guard let parts else { throw .internalError("the run plays before it is prepared") }
        let restartPlayer = parts.restartPlayer()
        restartPlayer.start()
        onEnd { restartPlayer.cancel() }
        self.restartPlayer = restartPlayer
        // Credentials stay fresh through settling and the final probe too, which render requests with them.
        let refresher = parts.refresher()
        refresher?.start()
        onEnd { refresher?.finish() }
        self.refresher = refresher
        let (stats, harnessLimit) = parts.play()
        if let failure = stats.failure { throw .internalError("the load engine failed: \(failure)") }
        facts.stats = stats
        facts.harnessLimit = harnessLimit
        facts.hookFailure = parts.scheduler.hook?.failure
    }

    /// Waits out the settle period (unless interrupted) and a planned restart still under way.
    private func settle(waiting: Bool) {
        guard let parts, let stats = facts.stats else { return }
        // A run the request hook stopped does not wait: what it did not send obliges the target to nothing.
        parts.settle(stats: stats, waiting: waiting && facts.hookFailure == nil, facts: &facts)
    }

    /// Reads the final state of every account the oracle knows (also when interrupted: those it does not read are
    /// then unknown).
    private func probe() throws(RunError) {
        guard let parts else { throw .internalError("the run probes before it is prepared") }
        parts.probe(facts: &facts)
    }

    /// Ends the restarts and the refreshes, judges the run, and writes its report folder.
    private func report(interruptedBy signal: StopSignal?) throws(RunError) {
        guard let parts, let stats = facts.stats, let folder, let restartPlayer else {
            throw .internalError("the run reports before it played")
        }
        facts.interruptedBy = signal
        restartPlayer.finish()
        facts.notes += restartPlayer.notes
        restartPlayer.judgeRecovery(
            checker: parts.checker,
            atEnd: signal == nil && (parts.options.shard?.index ?? 0) == 0
        )
        refresher?.finish()
        facts.notes += refresher?.notes ?? []
        if let latestNote = parts.latestNote { facts.notes.append(latestNote) }
        var outcome = try parts.report(stats: stats, run: facts, folder: folder)
        outcome.latestNote = parts.latestNote
        outcome.failure = facts.hookFailure
        self.outcome = outcome
        parts.lingerMetrics(outcome.report)
    }
}
