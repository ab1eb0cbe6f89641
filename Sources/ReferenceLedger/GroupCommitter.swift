internal import Foundation
import Synchronization

/// Group commit: requests queue their events (their HTTP connections wait suspended); one committer thread
/// takes everything queued, commits it in one SQLite transaction (one fsync for many grants) and answers each
/// request with its own outcome.
/// While it commits, the next batch gathers. Requests announce themselves (`expect`) before they verify, so the
/// committer, woken by the first of a batch, waits for the ones already verifying (at most `gather`): an fsync
/// and the WAL pages it writes were half of the ledger's non-verifying CPU at under two deliveries a commit.
/// With a late delay (`ack-before-commit`), requests leave at once and the committer waits that long before
/// each batch.
// @unchecked: `queue`, `preparing` and `stopped` are guarded by `condition`.
final class GroupCommitter: @unchecked Sendable {
    struct Pending {
        let event: LedgerEvent
        let completion: @Sendable (Result<ApplyOutcome, any Error>) -> Void
    }

    private let store: LedgerStore
    private let metrics: LedgerMetrics
    private let late: Duration?
    private let condition = NSCondition()
    private var queue: [Pending] = []
    /// Requests between `expect()` and their `submit` or `abandon()`.
    private var preparing = 0
    private var stopped = false
    /// What the committer thread waits for, so that a submission wakes it only when it is due: a wake-up is a
    /// context switch, and a gathering batch used to be woken by each delivery it was still short of.
    private var waiting = Waiting.no
    private enum Waiting {
        /// Committing, or holding acknowledged deliveries back (`ack-before-commit`).
        case no
        /// An empty queue.
        case work
        /// A batch gathering until the queue holds `target` or nothing is verifying.
        case batch(target: Int)
    }
    /// The longest a batch waits for requests that were verifying when it began.
    private let gather: Duration
    private let finished = DispatchSemaphore(value: 0)

    init(store: LedgerStore, metrics: LedgerMetrics, late: Duration?, gather: Duration = .milliseconds(1)) {
        self.store = store
        self.metrics = metrics
        self.late = late
        self.gather = gather
        let thread = Thread { [self] in
            run()
            finished.signal()
        }
        thread.name = "ledger-commit"
        thread.start()
    }

    /// Announces a request that may submit soon (it is being verified); end it with `submit(expected: true)`
    /// or `abandon()`.
    func expect() {
        condition.lock()
        preparing += 1
        condition.unlock()
    }

    /// Ends an announced request that submits nothing (rejected, or answered without a commit).
    func abandon() {
        condition.lock()
        preparing -= 1
        // The batch now waits for one delivery fewer.
        if case .batch(let target) = waiting { waiting = .batch(target: target - 1) }
        wakeIfDue()
        condition.unlock()
    }

    /// Signals the committer when what it waits for has happened; call with the lock held.
    private func wakeIfDue() {
        switch waiting {
        case .no: break
        case .work: if !queue.isEmpty { condition.signal() }
        case .batch(let target): if preparing == 0 || queue.count >= target { condition.signal() }
        }
    }

    /// Queues an event; `completion` runs once it is committed (or at once with a late delay).
    /// - Parameter expected: Whether `expect()` announced this request.
    func submit(
        _ event: LedgerEvent,
        expected: Bool = false,
        completion: @escaping @Sendable (Result<ApplyOutcome, any Error>) -> Void
    ) {
        condition.lock()
        if expected { preparing -= 1 }
        guard !stopped else {
            condition.unlock()
            completion(.failure(LedgerError(message: "the ledger is stopped")))
            return
        }
        if late != nil {
            // The flaw: acknowledge before anything is durable.
            queue.append(Pending(event: event) { _ in })
            wakeIfDue()
            condition.unlock()
            completion(.success(ApplyOutcome()))
            return
        }
        queue.append(Pending(event: event, completion: completion))
        wakeIfDue()
        condition.unlock()
    }

    private func run() {
        while true {
            condition.lock()
            waiting = .work
            while queue.isEmpty && !stopped { condition.wait() }
            waiting = .no
            if let late, !stopped {
                let deadline = Date(timeIntervalSinceNow: late.seconds)
                while !stopped && condition.wait(until: deadline) {}
            } else if preparing > 0 {
                // Those verifying now arrive within a verification's time; later ones wait for the next batch.
                waiting = .batch(target: queue.count + preparing)
                let deadline = Date(timeIntervalSinceNow: gather.seconds)
                while case .batch(let target) = waiting, !stopped, preparing > 0, queue.count < target,
                    condition.wait(until: deadline)
                {}
                waiting = .no
            }
            let batch = queue
            queue.removeAll()
            let exit = stopped
            condition.unlock()
            if !batch.isEmpty { commit(batch) }
            if exit { return }
        }
    }

    private func commit(_ batch: [Pending]) {
        let started = ContinuousClock.now
        let outcomes = Result { try store.apply(batch.map(\.event), now: ReferenceLedger.nowMilliseconds()) }
        metrics.commits.add(1, ordering: .relaxed)
        metrics.committedEvents.add(Int64(batch.count), ordering: .relaxed)
        metrics.commitNanoseconds.add((ContinuousClock.now - started).nanoseconds, ordering: .relaxed)
        for (index, pending) in batch.enumerated() {
            pending.completion(outcomes.map { $0[index] })
        }
    }

    /// Commits what is queued and stops the committer; later submissions fail. Safe to call twice.
    func flush() {
        condition.lock()
        let first = !stopped
        stopped = true
        condition.signal()
        condition.unlock()
        if first { finished.wait() }
    }
}
