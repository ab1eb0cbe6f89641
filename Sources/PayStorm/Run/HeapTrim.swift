internal import CPayStormShims
import Dispatch

/// Hands the allocator's free pages back to the system once a minute, off the engine's thread.
///
/// glibc's malloc keeps the memory freed in the middle of its heaps resident. After a stall of the target
/// (deliveries in flight, their bodies and the signed ones waiting pile up, then are answered and freed), a
/// soak's RSS would stay at the stall's high-water mark for the rest of the run although the heap in use fell
/// back. `malloc_trim` returns those pages, as jemalloc's decay and Go's scavenger do on a timer; it takes a
/// few milliseconds, so once a minute costs nothing a run can see.
struct HeapTrim {
    /// Seconds between two trims.
    let interval: Double
    private var last = 0.0
    private let queue = DispatchQueue(label: "paystorm.heap-trim", qos: .utility)

    init(interval: Double = 60) { self.interval = interval }

    /// Trims, off the caller's thread, when `interval` has passed since the last trim (or the start).
    /// - Returns: whether it trimmed.
    @discardableResult
    mutating func tick(at now: Double) -> Bool {
        guard now - last >= interval else { return false }
        last = now
        queue.async { _ = ps_malloc_trim(0) }
        return true
    }
}
