import Chaos
import Dispatch
import Foundation
import Synchronization

/// One delivery ready to send: the plan and its signed body (nil for a marker).
struct MintedDelivery: Sendable {
    var planned: PlannedDelivery
    var body: [UInt8]?
    /// Set when minting failed; the delivery is then recorded, never sent.
    var failure: String?
}

/// Signs deliveries ahead of the schedule on every core, in order, into a bounded buffer.
///
/// One producer thread pulls the chaos stream (which is not thread-safe) in batches, signs each batch
/// with `concurrentPerform`, and appends it; the engine thread takes from the front. The buffer holds at
/// most `capacity` deliveries, so memory stays flat whatever the rate and duration; when the engine
/// outruns minting it waits here and the sends show up as late, never hidden.
final class MintPipeline: @unchecked Sendable {
    // @unchecked: `stream` is touched only by the producer thread; everything shared goes through `state`.
    private struct State {
        var ready: [MintedDelivery] = []
        var head = 0
        var finished = false
        var stopped = false
        /// Time the consumer spent waiting for minting, in nanoseconds.
        var waitedNanos: UInt64 = 0
    }

    private let state = Mutex(State())
    private let condition = NSCondition()
    private let capacity: Int
    private let batchSize: Int
    private let bodies: DeliveryBodies
    private let cache: BodyCache
    private var stream: any IteratorProtocol<PlannedDelivery>

    /// Creates a pipeline; call ``start()`` to begin minting.
    init(
        stream: some IteratorProtocol<PlannedDelivery>,
        bodies: DeliveryBodies,
        cache: BodyCache,
        capacity: Int = 8192,
        batchSize: Int = 256
    ) {
        self.stream = stream
        self.bodies = bodies
        self.cache = cache
        self.capacity = capacity
        self.batchSize = batchSize
    }

    /// Starts the producer thread.
    func start() {
        let thread = Thread { [self] in produce() }
        thread.name = "paystorm-mint"
        thread.start()
    }

    /// Stops producing (an interrupted run); waiting consumers see the end.
    func stop() {
        condition.lock()
        state.withLock { $0.stopped = true }
        condition.broadcast()
        condition.unlock()
    }

    /// The next delivery without taking it; waits while minting is behind. Nil at the end.
    func peek() -> MintedDelivery? {
        condition.lock()
        defer { condition.unlock() }
        while true {
            let (item, done) = state.withLock { s -> (MintedDelivery?, Bool) in
                (s.head < s.ready.count ? s.ready[s.head] : nil, s.finished || s.stopped)
            }
            if let item { return item }
            if done { return nil }
            // Counted only when the buffer is empty, so a pipeline that keeps up costs no clock reads.
            let before = DispatchTime.now().uptimeNanoseconds
            condition.wait()
            let waited = DispatchTime.now().uptimeNanoseconds - before
            state.withLock { $0.waitedNanos += waited }
        }
    }

    /// How long the engine has waited, in all, for deliveries not minted yet: time the schedule was
    /// ahead of minting (the buffer is filled ahead of the clock, so a pipeline that keeps up never waits).
    var waited: Duration { .nanoseconds(Int64(state.withLock { $0.waitedNanos })) }

    /// Removes the front delivery (after ``peek()`` returned it).
    func pop() {
        condition.lock()
        state.withLock { s in
            s.head += 1
            // Compact now and then so the array does not grow with the run.
            if s.head >= 4096 && s.head * 2 >= s.ready.count {
                s.ready.removeFirst(s.head)
                s.head = 0
            }
        }
        condition.broadcast()
        condition.unlock()
    }

    private func produce() {
        while true {
            condition.lock()
            while state.withLock({ !$0.stopped && $0.ready.count - $0.head >= capacity }) { condition.wait() }
            let stopped = state.withLock { $0.stopped }
            condition.unlock()
            if stopped { return }

            var batch: [PlannedDelivery] = []
            batch.reserveCapacity(batchSize)
            while batch.count < batchSize, let next = stream.next() { batch.append(next) }
            let minted = mint(batch)
            condition.lock()
            state.withLock { s in
                s.ready.append(contentsOf: minted)
                if batch.count < batchSize { s.finished = true }
            }
            condition.broadcast()
            condition.unlock()
            if batch.count < batchSize { return }
        }
    }

    /// Signs a batch on every core. Copies that must resend the bytes of an earlier delivery are
    /// resolved after the originals, in order, from the cache.
    private func mint(_ batch: [PlannedDelivery]) -> [MintedDelivery] {
        let results = Mutex([MintedDelivery?](repeating: nil, count: batch.count))
        DispatchQueue.concurrentPerform(iterations: batch.count) { index in
            let planned = batch[index]
            guard planned.sameBytesAs == nil else { return }
            let minted = mintOne(planned)
            results.withLock { $0[index] = minted }
        }
        var out = results.withLock { $0 }
        for (index, planned) in batch.enumerated() {
            if let original = planned.sameBytesAs {
                if let bytes = cache.body(of: original) {
                    out[index] = MintedDelivery(planned: planned, body: bytes)
                } else {
                    // The original was not kept (or is planned later); the same payload signed again.
                    out[index] = mintOne(planned)
                }
            }
            if let body = out[index]?.body { cache.keep(body, for: planned.id) }
        }
        return out.map { $0! }
    }

    private func mintOne(_ planned: PlannedDelivery) -> MintedDelivery {
        do {
            return MintedDelivery(planned: planned, body: try bodies.body(for: planned))
        } catch {
            return MintedDelivery(planned: planned, body: nil, failure: "minting failed: \(error)")
        }
    }
}

/// The bodies that later copies (duplicates, retries, redeliveries) must resend byte for byte.
///
/// Entries leave when their delivery can have no more follow-ups, so the cache holds what is in
/// flight or awaiting a follow-up, not the whole run.
final class BodyCache: Sendable {
    private let bodies = Mutex([UInt64: [UInt8]]())

    /// Keeps a body for a delivery ID.
    func keep(_ body: [UInt8], for id: UInt64) {
        bodies.withLock { $0[id] = body }
    }

    /// The body minted for a delivery ID, if still kept.
    func body(of id: UInt64) -> [UInt8]? {
        bodies.withLock { $0[id] }
    }

    /// Forgets a delivery's body.
    func forget(_ id: UInt64) {
        bodies.withLock { _ = $0.removeValue(forKey: id) }
    }

    /// How many bodies are kept.
    var count: Int { bodies.withLock { $0.count } }
}
