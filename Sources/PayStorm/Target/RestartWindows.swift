import Chaos
import Synchronization

/// The planned target restarts as windows of run time: from each kill until the target is reachable
/// again (its down time plus however long it takes to start).
///
/// Deliveries intended inside a window go out under their own kind, `restart`, like `forged` and
/// `network-fault` traffic: a refused connection then is the plan working, not the target failing, so
/// thresholds on genuine traffic stay clean. The restart player closes each window when it sees the
/// target answer again; the scheduler asks about each delivery on the engine's thread.
final class RestartWindows: Sendable {
    private struct Window {
        var from: Double
        /// When the target answered again; nil while it is still coming back.
        var until: Double?
        /// Whether it did answer (a restart that failed closes its window at its planned end).
        var answered = false
    }

    private let windows: Mutex<[Window]>
    /// Windows closed so far: the scheduler asks for them only when this moved (see ``closed(after:)``), so its
    /// hot path takes no lock.
    private let closedCount = Atomic<Int>(0)

    /// One window per planned restart, open from its kill until ``targetBack(_:at:)`` closes it.
    init(_ events: [TargetRestartEvent]) {
        windows = Mutex(events.map { Window(from: $0.at, until: nil) })
    }

    /// Closes the window of restart `index` at `t` seconds into the run: the target was reachable again then, or
    /// (`answered` false) the restart failed and its planned down time is over.
    func targetBack(_ index: Int, at t: Double, answered: Bool = true) {
        windows.withLock { windows in
            guard windows.indices.contains(index), windows[index].until == nil else { return }
            windows[index].until = max(t, windows[index].from)
            windows[index].answered = answered
            closedCount.add(1, ordering: .releasing)
        }
    }

    /// How many windows have closed so far.
    var closed: Int { closedCount.load(ordering: .acquiring) }

    /// The windows closed, in the order they closed, past the first `seen` of them: when each opened (the kill),
    /// when it closed, and whether the target answered then.
    func closed(after seen: Int) -> [(from: Double, until: Double, answered: Bool)] {
        windows.withLock { windows in
            let done = windows.compactMap { window in
                window.until.map { (from: window.from, until: $0, answered: window.answered) }
            }
            return Array(done.sorted { $0.until < $1.until }.dropFirst(seen))
        }
    }

    /// Whether `t` seconds into the run falls in a planned restart's window.
    func contains(_ t: Double) -> Bool {
        windows.withLock { windows in
            windows.contains { t >= $0.from && t < ($0.until ?? .infinity) }
        }
    }
}
