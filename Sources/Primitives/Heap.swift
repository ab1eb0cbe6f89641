/// A heap entry ordered by time; equal times keep the order they were pushed in (`order`, a sequence
/// number the owner counts), so a run replays the same way. The simulation, the chaos stream and the run's
/// scheduler all key their heaps with it.
public struct TimedEntry<Payload: Sendable>: Comparable, Sendable {
    /// Seconds into the run.
    public var at: Double
    /// The tie-breaker among entries with the same time: lower pops first.
    public var order: UInt64
    /// What is due at `at`.
    public var payload: Payload

    /// Creates an entry.
    /// - Parameters:
    ///   - at: seconds into the run.
    ///   - order: the tie-breaker among equal times, unique per heap.
    ///   - payload: what is due.
    @inlinable
    public init(at: Double, order: UInt64, payload: Payload) {
        self.at = at
        self.order = order
        self.payload = payload
    }

    @inlinable
    public static func < (a: Self, b: Self) -> Bool { a.at < b.at || (a.at == b.at && a.order < b.order) }
    @inlinable
    public static func == (a: Self, b: Self) -> Bool { a.order == b.order }
}

/// A binary min-heap, the one the simulation, the chaos stream and the run's scheduler share. Elements break
/// ties themselves (``TimedEntry`` with its sequence number) so the order is deterministic.
///
/// Inlinable, so each module that keys a heap with its own payload gets it specialized: generic, every sift
/// copied its elements through value witnesses, a third of the world's time per action.
public struct Heap<Element: Comparable & Sendable>: Sendable {
    @usableFromInline var items: [Element] = []

    /// An empty heap.
    @inlinable
    public init() {}

    /// How many elements it holds.
    @inlinable
    public var count: Int { items.count }
    /// The smallest element, if any.
    @inlinable
    public var first: Element? { items.first }
    /// A part of the smallest element (its time, say), read in place: ``first`` copies the whole element.
    @inlinable
    public func peek<Part>(_ part: (borrowing Element) -> Part) -> Part? {
        items.withUnsafeBufferPointer { buffer in buffer.isEmpty ? nil : part(buffer[0]) }
    }
    /// How many elements fit before the storage grows (for tests of its memory).
    var reserved: Int { items.capacity }

    /// Adds an element.
    @inlinable
    public mutating func push(_ element: Element) {
        items.append(element)
        var child = items.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard precedes(child, parent) else { break }
            items.swapAt(child, parent)
            child = parent
        }
    }

    /// Removes and returns the smallest element.
    @inlinable
    public mutating func pop() -> Element? {
        guard !items.isEmpty else { return nil }
        items.swapAt(0, items.count - 1)
        let top = items.removeLast()
        var parent = 0
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var smallest = parent
            if left < items.count && precedes(left, smallest) { smallest = left }
            if right < items.count && precedes(right, smallest) { smallest = right }
            if smallest == parent { break }
            items.swapAt(parent, smallest)
            parent = smallest
        }
        releaseBurstStorage()
        return top
    }

    /// Whether the element at `index` comes before the one at `other`, compared in place (reading them through the
    /// array's subscript copied both, every field of a large element).
    @inlinable
    func precedes(_ index: Int, _ other: Int) -> Bool {
        items.withUnsafeBufferPointer { $0[index] < $0[other] }
    }

    /// Gives back the storage of a past burst (an array keeps its peak size after removals): once it holds
    /// under a quarter of what it reserves, past 1,024 elements, it moves into storage for twice its count.
    /// Amortized O(1) a pop; a soak's heap of follow-ups would otherwise keep every stall's high-water mark.
    @inlinable
    mutating func releaseBurstStorage() {
        guard items.capacity > 1024, items.count * 4 < items.capacity else { return }
        var fresh: [Element] = []
        fresh.reserveCapacity(items.count * 2)
        fresh.append(contentsOf: items)
        items = fresh
    }
}
