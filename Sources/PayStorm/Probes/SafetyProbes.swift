import Checking
import Dispatch
import Synchronization
import TargetProcesses

/// Safety probes that run commands during the run, off the load engine's thread so that sending never waits
/// on them: rounds of a `command` or `bulk` probe on the accounts of interest (Ask to Buy, forgery, refund),
/// and the `transform` of an `http` probe's answers. Their results feed the checker as safety checks
/// (`final: false`).
///
/// Rounds are rate capped: one starts at most every `interval` seconds (from the start of the previous one),
/// never while the previous one still runs, and reads every account offered since, up to `batchLimit` (the
/// rest wait for the next round). A bulk probe therefore answers a whole round with one run of its command.
/// Rounds and transforms share one serial queue, so a slow command delays only other probes.
final class SafetyProbes: Sendable {
    private struct State {
        var pending: [String] = []
        var pendingSet: Set<String> = []
        var roundRunning = false
        var lastRound = -Double.infinity
        var closed = false
        var queuedTransforms = 0
        var droppedTransforms = 0
        var firstDetection: [Invariant: Double] = [:]
        var sawGrants = false
        var rounds = 0
        var answers = 0
        var failures = 0
        var firstFailure: String?
    }

    /// Transforms waiting beyond this are dropped (counted in ``notes``): a transform slower than the probe
    /// rate must not grow memory without bound, and the final probe reads every account anyway.
    private static let maxQueuedTransforms = 1000

    private let state = Mutex(State())
    private let queue = DispatchQueue(label: "paystorm.safety-probes")
    private let interval: Double
    private let batchLimit: Int
    private let clock: @Sendable () -> Double
    private let checker: Checker
    private let read: @Sendable ([String]) -> [ProcessProbe.Answer]
    private let transformBody: @Sendable ([UInt8]) -> Result<AccountState, ProbeError>

    /// - Parameters:
    ///   - interval: seconds between the starts of two rounds, at least.
    ///   - batchLimit: most accounts one round reads.
    ///   - clock: seconds since the start of the run.
    ///   - checker: where answers go.
    ///   - read: reads a batch of accounts (runs on the probes' queue).
    ///   - transform: turns an HTTP probe's body into a state (runs on the probes' queue).
    init(
        interval: Double,
        batchLimit: Int,
        clock: @escaping @Sendable () -> Double,
        checker: Checker,
        read: @escaping @Sendable ([String]) -> [ProcessProbe.Answer],
        transform: @escaping @Sendable ([UInt8]) -> Result<AccountState, ProbeError>
    ) {
        self.interval = interval
        self.batchLimit = max(1, batchLimit)
        self.clock = clock
        self.checker = checker
        self.read = read
        self.transformBody = transform
    }

    /// Safety probes through the profile's probe commands.
    convenience init(probe: ProcessProbe, interval: Double, clock: @escaping @Sendable () -> Double, checker: Checker) {
        self.init(
            interval: interval,
            batchLimit: probe.batchLimit,
            clock: clock,
            checker: checker,
            read: { probe.read($0) },
            transform: { probe.transform($0) }
        )
    }

    /// Adds accounts to read and starts a round if one is due (call it at every tick, also with none).
    func offer(_ accounts: [String]) {
        let batch: [String]? = state.withLock { state in
            guard !state.closed else { return nil }
            for account in accounts where state.pendingSet.insert(account).inserted { state.pending.append(account) }
            let now = clock()
            guard !state.roundRunning, !state.pending.isEmpty, now - state.lastRound >= interval else { return nil }
            let batch = Array(state.pending.prefix(batchLimit))
            state.pending.removeFirst(batch.count)
            state.pendingSet.subtract(batch)
            state.roundRunning = true
            state.lastRound = now
            state.rounds += 1
            return batch
        }
        guard let batch else { return }
        queue.async { [self] in
            // Each account was read by the command some time after this.
            let asked = clock()
            for answer in read(batch) { feed(answer.account, answer.state, at: clock(), asked: asked) }
            state.withLock { $0.roundRunning = false }
        }
    }

    /// Reads `accounts` at once, in a round of their own after the one running (if any): a read after the target
    /// came back from an outage that began at `down` (see `Checker.checkAfterRecovery`). Not rate capped: a
    /// restart is rare, and a redelivery must not repair what the read is for.
    func recover(_ accounts: [String], down: Double) {
        guard !accounts.isEmpty, state.withLock({ !$0.closed }) else { return }
        queue.async { [self] in
            let asked = clock()
            for answer in read(accounts) { feed(answer.account, answer.state, at: clock(), asked: asked, down: down) }
        }
    }

    /// Transforms one HTTP probe answer, asked for at `asked` and received at `t` seconds, and checks it; `down`:
    /// a read after recovery from an outage that began then (see `Checker.checkAfterRecovery`).
    func transform(account: String, body: [UInt8], at t: Double, asked: Double, down: Double? = nil) {
        let accepted = state.withLock { state in
            guard !state.closed, state.queuedTransforms < Self.maxQueuedTransforms else {
                state.droppedTransforms += 1
                return false
            }
            state.queuedTransforms += 1
            return true
        }
        guard accepted else { return }
        queue.async { [self] in
            feed(account, transformBody(body), at: t, asked: asked, down: down)
            state.withLock { $0.queuedTransforms -= 1 }
        }
    }

    /// Stops starting rounds and waits for the one running, so the final probe never overlaps it.
    func finish() {
        state.withLock { $0.closed = true }
        waitForRound()
    }

    /// Waits until the round running now, and the transforms queued, are done.
    func waitForRound() { queue.sync {} }

    /// When each invariant first failed in a safety probe here, in seconds.
    var firstDetection: [Invariant: Double] { state.withLock { $0.firstDetection } }
    /// Whether any answer carried `grants`.
    var sawGrants: Bool { state.withLock { $0.sawGrants } }
    /// How many rounds started.
    var rounds: Int { state.withLock { $0.rounds } }

    /// What the report should say about the safety probes.
    var notes: [String] {
        state.withLock { state in
            var notes: [String] = []
            if state.failures > 0 {
                notes.append(
                    "\(state.failures) of \(state.answers) safety probes failed (checks unknown): "
                        + (state.firstFailure ?? "")
                )
            }
            if state.droppedTransforms > 0 {
                notes.append(
                    "\(state.droppedTransforms) safety probe answers were not transformed (the queue was full)"
                )
            }
            return notes
        }
    }

    private func feed(
        _ account: String,
        _ answer: Result<AccountState, ProbeError>,
        at t: Double,
        asked: Double,
        down: Double? = nil
    ) {
        switch answer {
        case .success(let observed):
            let results =
                if let down {
                    checker.checkAfterRecovery(account: account, state: observed, at: t, asked: asked, down: down)
                } else {
                    checker.check(account: account, state: observed, at: t, final: false, asked: asked)
                }
            state.withLock { state in
                state.answers += 1
                if observed.grants != nil { state.sawGrants = true }
                for result in results {
                    if case .fail = result.outcome, state.firstDetection[result.invariant] == nil {
                        state.firstDetection[result.invariant] = t
                    }
                }
            }
        case .failure(let error):
            checker.probeFailed(account: account, error: error, at: t, final: false)
            state.withLock { state in
                state.answers += 1
                state.failures += 1
                if state.firstFailure == nil { state.firstFailure = "\(error)" }
            }
        }
    }
}
