public import Foundation

/// A bounded pipeline that produces elements ahead of their use on several threads, and hands
/// them out in index order, so that an expensive request source (minting and signing) never makes
/// the pacer wait, and memory stays bounded whatever the rate and duration.
///
/// ```swift
/// let requests = Prefetcher(capacity: 4096) { index in makeSignedRequest(index) }
/// defer { requests.cancel() }
/// engine.run(.open(schedule)) { _, _ in requests.next() } sink: { … }
/// ```
///
/// `@unchecked Sendable`: every mutable field is read and written only while holding `condition`.
public final class Prefetcher<Element: Sendable>: @unchecked Sendable {
    private enum Slot {
        case empty
        case ready(Element)
    }

    private let condition = NSCondition()
    private var slots: [Slot]
    private var nextToClaim = 0
    private var consumed = 0
    private var end = Int.max
    private var cancelled = false
    private var consumerWaits = 0
    private let produce: @Sendable (Int) -> Element?

    /// Starts `workers` threads producing elements 0, 1, 2, … at most `capacity` ahead of the
    /// consumer; the first nil ends the sequence.
    /// - Parameters:
    ///   - capacity: elements produced ahead at most (≥ 1).
    ///   - workers: producing threads (default: every core).
    ///   - produce: makes element `index`, or nil when there are no more; called concurrently.
    public init(
        capacity: Int,
        workers: Int = ProcessInfo.processInfo.activeProcessorCount,
        produce: @escaping @Sendable (_ index: Int) -> Element?
    ) {
        slots = [Slot](repeating: .empty, count: max(capacity, 1))
        self.produce = produce
        for number in 0..<max(workers, 1) {
            let thread = Thread { [self] in work() }
            thread.name = "paystorm-prefetch-\(number)"
            thread.start()
        }
    }

    /// The next element in index order, waiting while it is being produced; nil after the end or
    /// after ``cancel()``.
    public func next() -> Element? {
        condition.lock()
        defer { condition.unlock() }
        var waited = false
        while true {
            if cancelled || consumed >= end { return nil }
            let index = consumed % slots.count
            if case .ready(let element) = slots[index] {
                slots[index] = .empty
                consumed += 1
                condition.broadcast()
                return element
            }
            if !waited {
                consumerWaits += 1
                waited = true
            }
            condition.wait()
        }
    }

    /// How many times ``next()`` had to wait for a producer (0 means the pipeline kept ahead).
    public var waits: Int {
        condition.lock()
        defer { condition.unlock() }
        return consumerWaits
    }

    /// Stops the producers; ``next()`` returns nil from now on.
    public func cancel() {
        condition.lock()
        cancelled = true
        condition.broadcast()
        condition.unlock()
    }

    private func work() {
        while true {
            condition.lock()
            while !cancelled && nextToClaim < end && nextToClaim >= consumed + slots.count {
                condition.wait()
            }
            if cancelled || nextToClaim >= end {
                condition.unlock()
                return
            }
            let index = nextToClaim
            nextToClaim += 1
            condition.unlock()

            let element = produce(index)

            condition.lock()
            if let element {
                if index < end { slots[index % slots.count] = .ready(element) }
            } else {
                end = min(end, index)
            }
            condition.broadcast()
            condition.unlock()
        }
    }
}
