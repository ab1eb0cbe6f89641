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
}
