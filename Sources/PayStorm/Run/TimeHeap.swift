import Primitives
import Simulation

/// Items ordered by time; equal times keep insertion order.
struct TimeHeap<Element: Sendable> {
    private var heap = Heap<TimedEntry<Element>>()
    private var order: UInt64 = 0

    var firstTime: Double? { heap.peek { $0.at } }

    mutating func push(_ element: Element, at time: Double) {
        order += 1
        heap.push(TimedEntry(at: time, order: order, payload: element))
    }

    mutating func pop() -> Element? { heap.pop()?.payload }
}
