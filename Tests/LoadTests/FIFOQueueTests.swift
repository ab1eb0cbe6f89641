import Testing

@testable import Load

struct FIFOQueueTests {
    @Test func popsInArrivalOrderAcrossCompactions() {
        var queue = FIFOQueue<Int>()
        var expected = 0
        for value in 0..<20_000 {
            queue.append(value)
            if value % 3 == 0 {
                #expect(queue.popFirst() == expected)
                expected += 1
            }
        }
        while let value = queue.popFirst() {
            #expect(value == expected)
            expected += 1
        }
        #expect(expected == 20_000 && queue.isEmpty && queue.first == nil)
    }

    @Test func prependedElementsComeFirst() {
        var queue = FIFOQueue<String>()
        queue.prepend("b")
        queue.append("c")
        #expect(queue.popFirst() == "b")
        queue.prepend("a")
        queue.prepend("z")
        #expect(queue.count == 3)
        #expect([queue.popFirst(), queue.popFirst(), queue.popFirst()] == ["z", "a", "c"])
    }

    /// A stalled target queues thousands of requests; once they drain, the queue holds no more than a small
    /// working size, so a soak does not keep every stall's high-water mark.
    @Test func givesBackABurstsStorageOnceEmpty() {
        var queue = FIFOQueue<Int>()
        for value in 0..<10_000 { queue.append(value) }
        #expect(queue.reserved >= 10_000)
        for value in 0..<10_000 { #expect(queue.popFirst() == value) }
        #expect(queue.isEmpty && queue.reserved <= 256)
        // A steady small queue keeps its storage between requests.
        for value in 0..<10 { queue.append(value) }
        let steady = queue.reserved
        for _ in 0..<10 { _ = queue.popFirst() }
        #expect(queue.reserved == steady)
    }
}
