import Testing

@testable import Load

struct PrefetcherTests {
    @Test(arguments: [(1, 1), (4, 2), (64, 4), (3, 8)])
    func handsOutEveryElementInOrder(capacity: Int, workers: Int) {
        let prefetcher = Prefetcher(capacity: capacity, workers: workers) { index in index < 500 ? index * 2 : nil }
        defer { prefetcher.cancel() }
        var seen: [Int] = []
        while let element = prefetcher.next() { seen.append(element) }
        #expect(seen == (0..<500).map { $0 * 2 })
        #expect(prefetcher.next() == nil)
    }

    @Test func cancelEndsTheSequence() {
        let prefetcher = Prefetcher(capacity: 8, workers: 2) { index in index }
        #expect(prefetcher.next() == 0)
        prefetcher.cancel()
        #expect(prefetcher.next() == nil)
    }

    @Test func anEmptySourceEndsAtOnce() {
        let prefetcher = Prefetcher<Int>(capacity: 8, workers: 3) { _ in nil }
        #expect(prefetcher.next() == nil)
    }
}
