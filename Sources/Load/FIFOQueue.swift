/// A first-in, first-out queue with O(1) amortized push and pop: an array read from a moving head,
/// compacted once the consumed part outweighs the rest.
struct FIFOQueue<Element> {
    private var storage: [Element?] = []
    private var head = 0

    /// The elements not yet popped.
    var count: Int { storage.count - head }
    var isEmpty: Bool { head == storage.count }
    /// The next element to pop.
    var first: Element? { isEmpty ? nil : storage[head] }
    /// How many elements fit before the storage grows (for tests of its memory).
    var reserved: Int { storage.capacity }

    mutating func append(_ element: Element) { storage.append(element) }

    /// Appends `element`, then moves it ahead of the elements at the back that `goesBefore` says it precedes:
    /// one comparison when elements come in order, a few steps when one comes a little late.
    mutating func append(_ element: Element, movingAheadOf goesBefore: (Element) -> Bool) {
        storage.append(element)
        var index = storage.count - 1
        while index > head, let previous = storage[index - 1], goesBefore(previous) {
            storage.swapAt(index, index - 1)
            index -= 1
        }
    }

    /// Puts an element back at the front (it is popped next).
    mutating func prepend(_ element: Element) {
        if head > 0 {
            head -= 1
            storage[head] = element
        } else {
            storage.insert(element, at: 0)
        }
    }

    mutating func popFirst() -> Element? {
        guard head < storage.count else { return nil }
        let next = storage[head]
        storage[head] = nil
        head += 1
        if head == storage.count {
            // Emptied: the storage is kept for the next requests, unless a burst swelled it (a stalled target
            // queues thousands), so a soak does not keep each stall's high-water mark.
            storage.removeAll(keepingCapacity: storage.capacity <= 256)
            head = 0
        } else if head > 4096 && head * 2 > storage.count {
            storage.removeFirst(head)
            head = 0
        }
        return next
    }
}
