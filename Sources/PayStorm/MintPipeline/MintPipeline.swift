import Chaos
import Dispatch
import Foundation
import Simulation
import Synchronization

/// Signs deliveries ahead of the schedule on every core, in order, into a bounded buffer.
///
/// One producer thread pulls the chaos stream (which is not thread-safe) in batches, signs each batch
/// with `concurrentPerform`, and appends it; the engine thread takes from the front without ever waiting
/// (``head()``), so the answers of requests in flight keep flowing while minting catches up. The buffer
/// holds at most ``MintBufferLimits`` ahead: so many deliveries, so many bytes of signed bodies, or so many
/// seconds ahead of the run's clock, whichever comes first, so memory stays flat whatever the rate, the
/// duration and the size of the bodies.
///
/// Under a rate above the minting ceiling the pipeline sheds at the source: a delivery whose intended time
/// passed more than `shedAfter` seconds before its batch was signed is not signed at all but handed on as
/// missed, so minting keeps working on deliveries that can still go out nearly on time, at its ceiling,
/// instead of signing a backlog that grows without bound and is sent later and later. With an
/// ``ArrivalAdmission`` it also thins the schedule at the source while it stays behind (``AdmissionControl``), so
/// that under a sustained overload the world does not generate, and the oracle book, the deliveries it would
/// only shed: their cost, not the signing, is what made sending collapse as the overload grew.
final class MintPipeline: @unchecked Sendable {
    // @unchecked: `stream` and `control` are touched only by the producer thread; everything shared goes
    // through `state`.
    /// How far past its intended time (seconds) a delivery may be when its batch is signed; later, it is shed.
    static let defaultShedAfter = 0.25

    private let state = Mutex(MintBufferState())
    private let condition = NSCondition()
    private let limits: MintBufferLimits
    private let batchSize: Int
    private let sign: @Sendable (PlannedDelivery) throws -> [UInt8]?
    private let cache: BodyCache
    /// Seconds into the run now; nil never sheds (the minting benchmark, which has no schedule).
    private let clock: (@Sendable () -> Double)?
    private let shedAfter: Double
    /// Why a shed delivery was not sent, made once (a run may shed tens of thousands a second).
    let shedReason: String
    private var stream: any IteratorProtocol<PlannedDelivery>
    /// The world's admission of arrivals, thinned while minting is behind; nil never thins. Its control is
    /// touched only by the producer thread.
    let admission: ArrivalAdmission?
    private var control = AdmissionControl()
    private var sleptForRoom = false  // on a full buffer, since the last batch it reported to `control`

    /// Creates a pipeline that signs with the run's bodies; call ``start()`` to begin minting.
    convenience init(
        stream: some IteratorProtocol<PlannedDelivery>,
        bodies: DeliveryBodies,
        cache: BodyCache,
        clock: (@Sendable () -> Double)? = nil,
        admission: ArrivalAdmission? = nil,
        shedAfter: Double = MintPipeline.defaultShedAfter,
        limits: MintBufferLimits = MintBufferLimits(),
        batchSize: Int = 256
    ) {
        self.init(
            stream: stream,
            sign: { try bodies.body(for: $0) },
            cache: cache,
            clock: clock,
            admission: admission,
            shedAfter: shedAfter,
            limits: limits,
            batchSize: batchSize
        )
    }

    /// Creates a pipeline over any signer (a test's slow fake); call ``start()`` to begin minting.
    init(
        stream: some IteratorProtocol<PlannedDelivery>,
        sign: @escaping @Sendable (PlannedDelivery) throws -> [UInt8]?,
        cache: BodyCache,
        clock: (@Sendable () -> Double)?,
        admission: ArrivalAdmission? = nil,
        shedAfter: Double,
        limits: MintBufferLimits,
        batchSize: Int
    ) {
        self.stream = stream
        self.sign = sign
        self.cache = cache
        self.clock = clock
        self.admission = admission
        self.shedAfter = shedAfter
        shedReason = String(format: "minting fell behind: not signed within %.2f s of its intended time", shedAfter)
        self.limits = limits
        self.batchSize = batchSize
    }

    /// Signalled when the producer thread returns.
    private let producerDone = DispatchSemaphore(value: 0)

    /// Starts the producer thread.
    func start() {
        let thread = Thread { [self] in
            produce()
            producerDone.signal()
        }
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

    /// Stops producing and waits for the producer thread (after ``start()``), so that no signing is left
    /// running when the process exits: OpenSSL's exit handlers free what a running signer still uses.
    func stopAndWait() {
        stop()
        producerDone.wait()
    }

    /// The front of the pipeline, without waiting: time the front spends being signed while the consumer
    /// asks counts as waited (see ``waited``).
    func head() -> MintHead {
        guard let (at, ready) = front() else { return .end }
        guard ready else { return .minting(at: at) }
        return state.withLock { s in s.head < s.ready.count ? .ready(s.ready[s.head]!) : .minting(at: at) }
    }

    /// Takes the front delivery when it is minted and not shed, moved out of the buffer rather than copied (its
    /// plan holds many references); nil when the front is shed, still being signed, or the end. Counts waiting
    /// like ``head()``.
    func takeMinted() -> MintedDelivery? {
        guard let (_, ready) = front(), ready else { return nil }
        let (taken, wake) = state.withLock { s -> (MintedDelivery?, Bool) in
            guard s.head < s.ready.count, s.ready[s.head]!.shed == nil else { return (nil, false) }
            let taken = s.ready[s.head].take()!
            s.bytes -= taken.body?.count ?? 0
            s.deliveries -= 1
            s.takenAt = taken.planned.at
            s.head += 1
            Self.compact(&s)
            return (taken, s.roomFreed(limits))
        }
        if wake { wakeProducer() }
        return taken
    }

    /// The intended time of the front and whether it is minted, without copying it (the engine asks this
    /// several times per delivery); nil at the end. Counts waiting like ``head()``.
    func front() -> (at: Double, ready: Bool)? {
        state.withLock { s in
            if s.head < s.ready.count {
                if let since = s.waitingSince {
                    s.waitedNanos += DispatchTime.now().uptimeNanoseconds - since
                    s.waitingSince = nil
                }
                return (s.ready[s.head]!.planned.at, true)
            }
            if s.finished || s.stopped { return nil }
            if s.waitingSince == nil { s.waitingSince = DispatchTime.now().uptimeNanoseconds }
            return (s.mintingAt ?? s.takenAt, false)
        }
    }

    /// The next delivery without taking it; waits while minting is behind. Nil at the end.
    func peek() -> MintedDelivery? {
        condition.lock()
        defer { condition.unlock() }
        while true {
            switch head() {
            case .ready(let item): return item
            case .end: return nil
            case .minting: condition.wait()
            }
        }
    }

    /// How long the engine has waited, in all, for deliveries not minted yet: time the schedule was
    /// ahead of minting (the buffer is filled ahead of the clock, so a pipeline that keeps up never waits).
    var waited: Duration { .nanoseconds(Int64(state.withLock { $0.waitedNanos })) }

    /// Deliveries shed so far because they could not be signed in time.
    var shed: Int { state.withLock { $0.shed } }

    /// What is buffered ahead of the engine: deliveries, bytes of their signed bodies, and the intended time of
    /// the last (minus infinity before the first batch).
    var buffered: (deliveries: Int, bytes: Int, lastAt: Double) {
        state.withLock { ($0.deliveries, $0.bytes, $0.lastAt) }
    }

    /// What the buffer's array holds, taken entries not yet compacted away included: entries, and bytes of
    /// signed bodies. Bounded by the caps and the compaction, whatever the run's length.
    var held: (entries: Int, bodyBytes: Int) {
        state.withLock { s in (s.ready.count, s.ready.reduce(0) { $0 + ($1?.body?.count ?? 0) }) }
    }

    /// Times the producer went to sleep on a full buffer: about once a batch while the engine keeps it full.
    var producerWaits: Int { state.withLock { $0.producerWaits } }

    /// Removes the front delivery (after ``head()`` or ``peek()`` returned it): one delivery of a shed run.
    func pop() {
        let wake = state.withLock { s in
            if s.ready[s.head]!.shedRun.count > 1 {
                let rest = s.ready[s.head]!.shedRun.dropFirst()
                s.ready[s.head]!.planned = rest[rest.startIndex]
                s.ready[s.head]!.shedRun = rest
                s.deliveries -= 1
                return s.roomFreed(limits)
            }
            s.bytes -= s.ready[s.head]!.body?.count ?? 0
            s.deliveries -= 1
            s.takenAt = s.ready[s.head]!.planned.at
            // The engine has its own copy (and the cache one for copies): the entry goes now, not at the next
            // compaction.
            s.ready[s.head] = nil
            s.head += 1
            Self.compact(&s)
            return s.roomFreed(limits)
        }
        if wake { wakeProducer() }
    }

    /// Wakes the producer sleeping on a full buffer. It set `producerWaiting` holding the condition's lock and keeps
    /// that lock until it waits, so taking the lock here cannot come between its look and its wait.
    private func wakeProducer() {
        condition.lock()
        condition.broadcast()
        condition.unlock()
    }

    /// Takes, under one lock, the shed deliveries at the front due at or before `limit` (seconds into the run),
    /// at least one run and then whole runs up to `maximum` deliveries: an overloaded run books them in bulk
    /// instead of one engine release each, and a run is handed on as the batch's own storage, not copied.
    func popShed(dueBy limit: Double, maximum: Int = 4096) -> [ArraySlice<PlannedDelivery>] {
        let (taken, wake) = state.withLock { s in
            var taken: [ArraySlice<PlannedDelivery>] = []
            var count = 0
            while s.head < s.ready.count, s.ready[s.head]!.shed != nil, s.ready[s.head]!.planned.at <= limit {
                let run = s.ready[s.head]!.shedRun
                if run.last!.at <= limit {
                    guard count == 0 || count + run.count <= maximum else { break }
                    taken.append(run)
                    count += run.count
                    s.deliveries -= run.count
                    // The taken entry must not keep the batch's storage alive until compaction.
                    s.takenAt = s.ready[s.head]!.planned.at
                    s.ready[s.head] = nil
                    s.head += 1
                    continue
                }
                // The run straddles the limit (a follow-up or a probe is due in it): its due part only.
                let due = run.firstIndex { $0.at > limit }!
                taken.append(run[..<due])
                s.deliveries -= due - run.startIndex
                s.ready[s.head]!.shedRun = run[due...]
                s.ready[s.head]!.planned = run[due]
                break
            }
            Self.compact(&s)
            return (taken, s.roomFreed(limits))
        }
        if wake { wakeProducer() }
        return taken
    }

    /// Compacts now and then so the array does not grow with the run. Taken entries are nil (their time is kept in
    /// `takenAt`), so what compaction removes costs nothing to destroy; it is counted in entries, a shed run of up to
    /// a batch being one.
    private static func compact(_ s: inout MintBufferState) {
        if s.head >= 256 && s.head * 2 >= s.ready.count {
            s.ready.removeFirst(s.head)
            s.head = 0
        }
    }

    private func produce() {
        while true {
            if !waitForRoom() { return }

            let busySince = clock?()
            var batch: [PlannedDelivery] = []
            batch.reserveCapacity(batchSize)
            while batch.count < batchSize, let next = stream.next() { batch.append(next) }
            let first = batch.first?.at
            state.withLock { $0.mintingAt = first }
            let now = clock?()
            let minted = mint(batch, shedBefore: now.map { $0 - shedAfter })
            let shed = minted.reduce(0) { $0 + ($1?.shedRun.count ?? 0) }
            if let admission, let clock, let busySince, let now, let first, let last = batch.last?.at {
                let share = control.observe(
                    AdmissionControl.Batch(
                        now: now,
                        lateness: now - first,
                        scheduleSeconds: last - first,
                        signedShare: 1 - Double(shed) / Double(batch.count),
                        busySeconds: clock() - busySince,
                        sleptForRoom: sleptForRoom,
                        deliveries: batch.count,
                        lastAt: last,
                        flow: admission.flow
                    )
                )
                sleptForRoom = false
                if let share { admission.setShare(share) }
            }
            condition.lock()
            state.withLock { s in
                s.ready.append(contentsOf: minted)
                s.deliveries += batch.count
                s.shed += shed
                s.bytes += minted.reduce(0) { $0 + ($1?.body?.count ?? 0) }
                if let last = minted.last { s.lastAt = last!.planned.at }
                s.mintingAt = nil
                if batch.count < batchSize { s.finished = true }
            }
            condition.broadcast()
            condition.unlock()
            if batch.count < batchSize { return }
        }
    }

    /// Sleeps while the buffer is full; false once stopped. A take wakes it only when it frees room by count or
    /// bytes (once a batch, not once a take); a buffer full by time is looked at again when the clock frees it.
    private func waitForRoom() -> Bool {
        condition.lock()
        defer { condition.unlock() }
        while true {
            let now = clock?()
            let (stopped, full, over) = state.withLock { s in
                let byCount = s.isFullByCount(limits)
                let over = s.overTimeCap(limits, now: now)
                let full = !s.stopped && (byCount || over != nil)
                s.producerWaiting = full && byCount
                if full { s.producerWaits += 1 }
                return (s.stopped, full, over)
            }
            if stopped { return false }
            guard full else { return true }
            sleptForRoom = true
            // The clock runs with the wall's; a millisecond at least so a cap about to free is not spun on, and
            // 50 ms at most as a backstop (a test's clock may stand still or jump).
            let seconds = min(max(over ?? .infinity, 0.001), 0.05)
            _ = condition.wait(until: Date(timeIntervalSinceNow: seconds))
        }
    }

    /// Signs a batch on every core, except deliveries due before `shedBefore` (seconds into the run), which
    /// are shed: decided before anything is signed, each run of consecutive shed deliveries becomes one entry
    /// that shares the batch's storage. Copies that must resend the bytes of an earlier delivery are resolved
    /// after the originals, in order, from the cache.
    private func mint(_ batch: [PlannedDelivery], shedBefore: Double?) -> [MintedDelivery?] {
        let late = batch.map { planned in shedBefore.map { planned.sends && planned.at < $0 } ?? false }
        let signing = batch.indices.filter { !late[$0] && batch[$0].sameBytesAs == nil }
        // A batch shed whole (most of them, under overload) allocates nothing for signing.
        var signed: [MintedDelivery?] = []
        if !signing.isEmpty {
            let results = Mutex([MintedDelivery?](repeating: nil, count: batch.count))
            DispatchQueue.concurrentPerform(iterations: signing.count) { step in
                let index = signing[step]
                let minted = mintOne(batch[index])
                results.withLock { $0[index] = minted }
            }
            signed = results.withLock { $0 }
        }
        // Optional because the buffer's are: an entry the engine takes is moved out, and appending these is no copy.
        var out: [MintedDelivery?] = []
        var index = 0
        while index < batch.count {
            if late[index] {
                let end = late[index...].firstIndex(of: false) ?? batch.count
                out.append(
                    MintedDelivery(planned: batch[index], shed: shedReason, shedRun: batch[index..<end])
                )
                index = end
                continue
            }
            let planned = batch[index]
            var minted = signed.isEmpty ? nil : signed[index].take()
            if let original = planned.sameBytesAs {
                if let bytes = cache.body(of: original) {
                    minted = MintedDelivery(planned: planned, body: bytes)
                } else {
                    // The original was not kept (or is planned later); the same payload signed again.
                    minted = mintOne(planned)
                }
            }
            if let body = minted?.body { cache.keep(body, for: planned.id) }
            out.append(minted)
            index += 1
        }
        return out
    }

    private func mintOne(_ planned: PlannedDelivery) -> MintedDelivery {
        do {
            return MintedDelivery(planned: planned, body: try sign(planned))
        } catch {
            return MintedDelivery(planned: planned, body: nil, failure: "minting failed: \(error)")
        }
    }
}
