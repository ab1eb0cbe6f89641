import Testing

@testable import Primitives

struct TimedEntryTests {
    /// World, ChaosStream and the run's scheduler rely on this order to replay a run the same way.
    @Test func popsByTimeThenByPushOrder() {
        var heap = Heap<TimedEntry<String>>()
        let pushed: [(Double, String)] = [(2, "c"), (1, "a"), (2, "d"), (1, "b"), (0.5, "first"), (2, "e")]
        for (order, (at, name)) in pushed.enumerated() {
            heap.push(TimedEntry(at: at, order: UInt64(order), payload: name))
        }
        var popped: [String] = []
        while let entry = heap.pop() { popped.append(entry.payload) }
        #expect(popped == ["first", "a", "b", "c", "d", "e"])
    }

    /// The scheduler reads the next follow-up's time this way, many times for each one it sends.
    @Test func readsAPartOfTheSmallestElementInPlace() {
        var heap = Heap<TimedEntry<String>>()
        #expect(heap.peek { $0.at } == nil)
        heap.push(TimedEntry(at: 2, order: 0, payload: "later"))
        heap.push(TimedEntry(at: 1, order: 1, payload: "sooner"))
        #expect(heap.peek { $0.at } == 1 && heap.peek { $0.payload } == "sooner")
        _ = heap.pop()
        #expect(heap.peek { $0.at } == 2)
    }

    /// A burst of follow-ups (a stalled target) must not stay resident once the heap drains.
    @Test func givesBackABurstsStorageAndKeepsItsOrder() {
        var heap = Heap<TimedEntry<Int>>()
        var rng = SplitMix64(seed: 3)
        for order in 0..<20_000 {
            heap.push(TimedEntry(at: Double(rng.next() % 1000), order: UInt64(order), payload: order))
        }
        let peak = heap.reserved
        var last: TimedEntry<Int>?
        while heap.count > 100, let entry = heap.pop() {
            if let last { #expect(last < entry) }
            last = entry
        }
        #expect(peak >= 20_000 && heap.reserved <= 1024)
        while let entry = heap.pop() {
            if let last { #expect(last < entry) }
            last = entry
        }
    }
}
