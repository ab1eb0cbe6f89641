import RunControl

/// The phases of one run and what each event leads to: prepare, play, settle, probe, report.
///
/// A value with no I/O: each event returns the action that ``PayStormRun`` carries out next, so the order of the
/// phases, what an interruption changes and what a failure leaves behind are decided here, in one place, and
/// tested as a table. An interruption never skips a phase: each phase's waits end at once, the settle period is
/// not waited, the final probe marks what it does not read as unknown, and the report is still written, marked
/// interrupted.
///
/// ```swift
/// var machine = RunStateMachine()
/// machine.start()          // .prepare
/// machine.phaseEnded()     // .play
/// machine.interrupt(.terminate)  // .stopSending
/// machine.phaseEnded()     // .settle(wait: false)
/// ```
struct RunStateMachine: Sendable {
    /// A phase of a run, in the order they run.
    enum Phase: Sendable, Equatable, CaseIterable {
        /// Loads the target (or starts the embedded ledger), provisions accounts, starts minting and the outputs.
        case prepare
        /// Plays the schedule: the engine sends what the scheduler releases.
        case play
        /// Waits out the settle period, and a planned restart still under way.
        case settle
        /// Reads the final state of every account the oracle knows.
        case probe
        /// Judges the run and writes its report folder.
        case report
    }

    /// Where a run is.
    enum State: Sendable, Equatable {
        /// Not started.
        case idle
        /// In a phase.
        case running(Phase)
        /// Its report is written.
        case finished
        /// It failed; the error is the run's to throw.
        case failed
    }

    /// What the run does next.
    enum Action: Sendable, Equatable {
        /// Prepares the target and the run's parts.
        case prepare
        /// Plays the schedule.
        case play
        /// Settles: waits out the settle period when `wait`, else goes on at once (the run was interrupted).
        case settle(wait: Bool)
        /// Reads every account's final state.
        case probe
        /// Writes the report, marked interrupted by the signal when there is one.
        case report(interruptedBy: StopSignal?)
        /// Stops sending at once (cancels the load engine); the phase in progress then ends by itself.
        case stopSending
        /// Returns the outcome: the run is over.
        case finish
        /// Throws the run's error; `discardFolder` when the run never started sending, so it leaves no report
        /// folder behind.
        case fail(discardFolder: Bool)
        /// Nothing to do.
        case none
    }

    /// Where the run is.
    private(set) var state: State = .idle
    /// The first signal that interrupted the run, if one did.
    private(set) var interruptedBy: StopSignal?

    /// A run not started yet.
    init() {}

    /// Starts the run: it prepares. A run starts once; starting it again fails without touching its folder.
    mutating func start() -> Action {
        guard state == .idle else {
            state = .failed
            return .fail(discardFolder: false)
        }
        state = .running(.prepare)
        return .prepare
    }

    /// The phase in progress ended: the next one begins, or the run is over after its report.
    mutating func phaseEnded() -> Action {
        guard case .running(let phase) = state else {
            preconditionFailure("a phase ended while the run was \(state)")
        }
        switch phase {
        case .prepare:
            state = .running(.play)
            return .play
        case .play:
            state = .running(.settle)
            return .settle(wait: interruptedBy == nil)
        case .settle:
            state = .running(.probe)
            return .probe
        case .probe:
            state = .running(.report)
            return .report(interruptedBy: interruptedBy)
        case .report:
            state = .finished
            return .finish
        }
    }

    /// The phase in progress failed: the run fails. Before it sends (while preparing) it leaves no folder; later,
    /// its folder stays with what it wrote.
    mutating func phaseFailed() -> Action {
        guard case .running(let phase) = state else {
            preconditionFailure("a phase failed while the run was \(state)")
        }
        state = .failed
        return .fail(discardFolder: phase == .prepare)
    }

    /// A signal interrupted the run: only the first counts. While the run can still send it stops sending; the
    /// phases go on, hurried, to the report.
    mutating func interrupt(_ signal: StopSignal) -> Action {
        guard interruptedBy == nil else { return .none }
        interruptedBy = signal
        switch state {
        case .running(.prepare), .running(.play), .running(.settle), .running(.probe):
            return .stopSending
        case .idle, .running(.report), .finished, .failed:
            return .none
        }
    }
}
