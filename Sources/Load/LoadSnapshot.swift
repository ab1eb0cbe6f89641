public import Primitives
import Synchronization

/// The recorder's figures at its last tick, for readers on other threads (a live metrics endpoint).
public struct LoadSnapshot: Sendable {
    /// The engine's counters at the tick (in flight, late, missed, intended rate, elapsed time).
    public var stats: LoadEngineStats
    /// Counters over every kind.
    public var totals: RequestCounts
    /// Counters per kind.
    public var kinds: [String: RequestCounts]
    /// Latency from the intended time per kind, since the start of the run.
    public var latencyByKind: [String: Histogram]
    /// Service time per kind, since the start of the run.
    public var serviceByKind: [String: Histogram]

    /// Creates a snapshot (the recorder does, at each tick).
    init(
        stats: LoadEngineStats = LoadEngineStats(),
        totals: RequestCounts = RequestCounts(),
        kinds: [String: RequestCounts] = [:],
        latencyByKind: [String: Histogram] = [:],
        serviceByKind: [String: Histogram] = [:]
    ) {
        self.stats = stats
        self.totals = totals
        self.kinds = kinds
        self.latencyByKind = latencyByKind
        self.serviceByKind = serviceByKind
    }
}

/// Where a ``LoadRecorder`` publishes a ``LoadSnapshot`` at every tick, read from any thread.
///
/// The recorder stays single-threaded; publishing copies its histograms once a second (copy-on-write, so
/// the copy is paid by the engine's next record of each kind), and only when someone asked for snapshots.
public final class LoadSnapshots: Sendable {
    private let current = Mutex(LoadSnapshot())

    /// Creates an empty box (a reader before the first tick sees zeros).
    public init() {}

    /// The last published snapshot.
    public var latest: LoadSnapshot { current.withLock { $0 } }

    func publish(_ snapshot: LoadSnapshot) {
        current.withLock { $0 = snapshot }
    }
}
