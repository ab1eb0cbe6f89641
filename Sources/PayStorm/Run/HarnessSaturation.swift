import Foundation
import Reporting

#if canImport(Glibc)
import Glibc
#endif

/// Tells, from the engine's ticks, when PayStorm itself fell behind its schedule, so the run's latency is
/// not read as the target's.
///
/// A tick whose worst release came more than ``lagLimit`` after its intended time is behind: the engine's
/// thread, not a connection wait (which a slow target causes), delayed it. ``ticksNeeded`` such ticks in a
/// row make the run harness-limited from the first of them, and the span's sending rate is PayStorm's
/// ceiling in this run. A tick in which the mint pipeline shed deliveries (it could not sign them in time) is
/// behind too, however small its lag: shedding keeps the lag small on purpose, and so is a tick in which the
/// world dropped arrivals at the source (``ArrivalAdmission``), which keeps the shedding small in turn. The
/// reason is minting when the pipeline shed or dropped, or the engine waited for it for at least
/// ``mintShare`` of those ticks' time, else the engine's thread. When the process used at least ``cpuShare`` of the cores it may run on over those ticks,
/// CPU is named first: the machine, not one stage, is the limit (more cores, or fewer other processes, would
/// raise the ceiling). A pure value, fed one tick at a time.
struct HarnessSaturation {
    /// A release this late (seconds after its intended time) puts its tick behind. Well above the scheduling
    /// jitter of a busy machine, well below the stalls of a saturated run (seconds).
    static let lagLimit = 0.25
    /// Consecutive ticks behind before the run counts as harness-limited, so one hiccup does not.
    static let ticksNeeded = 3
    /// The share of the behind ticks' time spent waiting for minting that names minting as the reason.
    static let mintShare = 0.1
    /// The share of its cores the process must use over the behind ticks to name CPU as the cause.
    static let cpuShare = 0.9

    /// The cores the process may use, for the CPU share.
    private let cores: Int

    /// Creates an observer for a process that may use `cores` cores (default: those it may run on now) and had
    /// used `cpuAtStart` seconds of CPU when the run's clock started.
    init(cores: Int = ProcessInfo.processInfo.activeProcessorCount, cpuAtStart: Double = 0) {
        self.cores = max(cores, 1)
        previous.cpu = cpuAtStart
    }

    /// Whether `cpuSeconds` of process CPU over `wallSeconds` is at least ``cpuShare`` of `cores`.
    static func cpuSaturated(cpuSeconds: Double, wallSeconds: Double, cores: Int) -> Bool {
        guard wallSeconds > 0, cores > 0 else { return false }
        return cpuSeconds / wallSeconds >= cpuShare * Double(cores)
    }

    /// The CPU time this process has used so far, all threads, in seconds.
    static func processCPUSeconds() -> Double {
        var spec = timespec()
        guard clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &spec) == 0 else { return 0 }
        return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
    }

    private struct Tick {
        var at: Double
        var sent: Int
        var mintWaited: Double
        var shed = 0
        var dropped: UInt64 = 0
        var cpu = 0.0
    }

    private var previous = Tick(at: 0, sent: 0, mintWaited: 0)
    /// Where the current run of behind ticks started (the tick before its first).
    private var streakStart: Tick?
    private var streak = 0
    /// The first span that reached ``ticksNeeded``: its start and its latest tick.
    private var limited: (from: Tick, to: Tick)?
    /// The tick before the first that dropped arrivals: a run that dropped any is
    /// harness-limited from then even without ``ticksNeeded`` behind ticks in a row (a world generated ahead
    /// of the clock, as in a short replay of admissions, drops its share in the first ticks).
    private var firstDrop: Tick?

    /// Takes one tick: seconds into the run, deliveries sent so far, the engine's worst release lag in the
    /// tick (seconds), the time it has waited for minting so far (seconds), the deliveries the mint
    /// pipeline has shed so far, the arrivals the world has dropped so far, and the process's CPU time so far
    /// (seconds, ``processCPUSeconds()``).
    mutating func observe(
        at seconds: Double,
        sent: Int,
        releaseLag: Double,
        mintWaited: Double,
        shed: Int = 0,
        dropped: UInt64 = 0,
        cpu: Double = 0
    ) {
        let tick = Tick(at: seconds, sent: sent, mintWaited: mintWaited, shed: shed, dropped: dropped, cpu: cpu)
        defer { previous = tick }
        if firstDrop == nil && dropped > previous.dropped { firstDrop = previous }
        guard releaseLag > Self.lagLimit || shed > previous.shed || dropped > previous.dropped else {
            streak = 0
            streakStart = nil
            return
        }
        if streak == 0 { streakStart = previous }
        streak += 1
        guard streak >= Self.ticksNeeded, let start = streakStart else { return }
        if let current = limited, current.from.at != start.at { return }  // the first span is the one told
        limited = (start, tick)
    }

    /// Where PayStorm fell behind, nil when it kept up.
    var limit: HarnessLimit? {
        // `previous` is the latest tick once `observe` returns.
        guard let (from, to) = limited ?? firstDrop.map({ ($0, previous) }), to.at > from.at else { return nil }
        let span = to.at - from.at
        let waitedShare = (to.mintWaited - from.mintWaited) / span
        var reason =
            waitedShare >= Self.mintShare || to.shed > from.shed || to.dropped > from.dropped
            ? "minting behind the schedule" : "engine thread late"
        let cpu = to.cpu - from.cpu
        if Self.cpuSaturated(cpuSeconds: cpu, wallSeconds: span, cores: cores) {
            reason = "CPU saturated, " + String(format: "%.1f", cpu / span) + " of \(cores) cores; " + reason
        }
        return HarnessLimit(
            fromSeconds: from.at,
            deliveriesPerSecond: Double(to.sent - from.sent) / span,
            reason: reason
        )
    }
}
