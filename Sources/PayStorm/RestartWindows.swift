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
    }

    private let windows: Mutex<[Window]>

    /// One window per planned restart, open from its kill until ``targetBack(_:at:)`` closes it.
    init(_ events: [TargetRestartEvent]) {
        windows = Mutex(events.map { Window(from: $0.at, until: nil) })
    }

    /// Closes the window of restart `index`: the target was reachable again at `t` seconds into the run.
    func targetBack(_ index: Int, at t: Double) {
        windows.withLock { windows in
            guard windows.indices.contains(index) else { return }
            windows[index].until = max(t, windows[index].from)
        }
    }

    /// Whether `t` seconds into the run falls in a planned restart's window.
    func contains(_ t: Double) -> Bool {
        windows.withLock { windows in
            windows.contains { t >= $0.from && t < ($0.until ?? .infinity) }
        }
    }
}
