import Chaos
import Foundation
import Primitives
import Profile
import Simulation
import Synchronization
import Testing

@testable import PayStorm

struct MintPipelineTests {
    static let profile = """
        {
          name: "pipeline", seed: 3,
          target: { embeddedLedger: true },
          catalog: { products: [{ id: "coins", type: "consumable", priceMilli: 990 }] },
          population: { accounts: 500 },
          actionMix: { consumable: 1 },
          schedule: [{ kind: "constant", rate: 400, seconds: 10 }],
        }
        """

    /// `count` deliveries that send, re-timed `spacing` seconds apart from 0.
    static func deliveries(_ count: Int, spacing: Double) throws -> [PlannedDelivery] {
        let profile = try Profile.decode(Data(Self.profile.utf8), file: "pipeline.json5")
        let stream = ChaosStream(World(profile: profile, startMillis: 1_800_000_000_000), profile: profile)
        let sending = Array(stream.lazy.filter(\.sends).prefix(count))
        try #require(sending.count == count)
        return sending.enumerated().map { index, planned in
            var retimed = planned
            retimed.at = Double(index) * spacing
            return retimed
        }
    }

    /// Drains a pipeline the way the engine's thread does, and returns everything in order.
    static func drain(_ pipeline: MintPipeline) -> [MintedDelivery] {
        var out: [MintedDelivery] = []
        while let minted = pipeline.peek() {
            pipeline.pop()
            out.append(minted)
        }
        return out
    }

    /// A run clock that a signature advances: the fake minter signs `rate` deliveries per second of it.
    final class SigningClock: Sendable {
        let now = Mutex(0.0)
        let perSignature: Double
        init(rate: Double) { perSignature = 1 / rate }
        func sign(_ planned: PlannedDelivery) -> [UInt8]? {
            now.withLock { $0 += perSignature }
            return Array("signed \(planned.id)".utf8)
        }
    }

    /// 1,000 deliveries/s intended for 2 s against a minter that signs 100/s, started.
    static func impossibleRate() throws -> ([PlannedDelivery], SigningClock, MintPipeline) {
        let planned = try Self.deliveries(2_000, spacing: 0.001)
        let clock = SigningClock(rate: 100)
        let pipeline = MintPipeline(
            stream: planned.makeIterator(),
            sign: { clock.sign($0) },
            cache: BodyCache(),
            clock: { clock.now.withLock { $0 } },
            shedAfter: 0.05,
            limits: MintBufferLimits(deliveries: 64),
            batchSize: 16
        )
        pipeline.start()
        return (planned, clock, pipeline)
    }

    @Test func impossibleRateKeepsMintingAtTheCeilingAndShedsTheRest() throws {
        let (planned, clock, pipeline) = try Self.impossibleRate()
        let out = Self.drain(pipeline)
        #expect(out.map(\.planned.id) == planned.map(\.id))
        let signed = out.filter { $0.body != nil }
        let shed = out.filter { $0.shed != nil }
        #expect(signed.count + shed.count == planned.count)
        #expect(shed.allSatisfy { $0.body == nil && $0.failure == nil })
        #expect(pipeline.shed == shed.count)
        // Minting never stopped: it signed at its ceiling (about 100/s over the 2 s) through to the end.
        #expect((150...260).contains(signed.count))
        #expect((signed.last?.planned.at ?? 0) > 1.8)
        // What it signed could still go out nearly on time: a batch's worth of signing after the horizon at most.
        let lastSigning = clock.now.withLock { $0 }
        #expect(lastSigning - (signed.last?.planned.at ?? 0) < 0.05 + 16 * 0.01 + 0.01)
    }

    @Test func pipelineThatKeepsUpShedsNothing() throws {
        let planned = try Self.deliveries(300, spacing: 0.01)
        let pipeline = MintPipeline(
            stream: planned.makeIterator(),
            sign: { Array("signed \($0.id)".utf8) },
            cache: BodyCache(),
            clock: { 0 },
            shedAfter: 0.05,
            limits: MintBufferLimits(deliveries: 64),
            batchSize: 16
        )
        pipeline.start()
        let out = Self.drain(pipeline)
        #expect(out.count == 300)
        #expect(out.allSatisfy { $0.body != nil && $0.shed == nil })
        #expect(pipeline.shed == 0)
    }

    /// A pipeline without a clock over `planned`, 64 deliveries at most in batches of 16, started.
    static func started(
        _ planned: [PlannedDelivery],
        sign: @escaping @Sendable (PlannedDelivery) -> [UInt8]?
    ) -> MintPipeline {
        let pipeline = MintPipeline(
            stream: planned.makeIterator(),
            sign: sign,
            cache: BodyCache(),
            clock: nil,
            shedAfter: 0.05,
            limits: MintBufferLimits(deliveries: 64),
            batchSize: 16
        )
        pipeline.start()
        return pipeline
    }

    /// The soak's sawtooth: taken deliveries kept their 4-12 KB signed bodies until the next compaction (every
    /// 4,096 taken entries then, so a run at 100 deliveries/s held some 35 MB of them for 40 s at a time).
    @Test func takenDeliveriesDoNotKeepTheirBodies() throws {
        let planned = try Self.deliveries(1_000, spacing: 0.001)
        let pipeline = Self.started(planned) { _ in [UInt8](repeating: 0x41, count: 10_000) }
        var taken = 0
        var most = (entries: 0, bodyBytes: 0)
        while pipeline.peek() != nil {
            pipeline.pop()
            taken += 1
            let held = pipeline.held
            most = (max(most.entries, held.entries), max(most.bodyBytes, held.bodyBytes))
        }
        #expect(taken == 1_000)
        // What is buffered (at most the cap and a batch) holds bodies; what was taken does not.
        #expect(most.bodyBytes <= (64 + 16) * 10_000)
        #expect(most.entries <= 2 * 256 + 64 + 16)
        #expect(pipeline.held.bodyBytes == 0)
    }

    /// Every take used to wake the producer sleeping on a full buffer, only for it to find the buffer still full
    /// and sleep again: a wake and a lock handed over per delivery between the engine's thread and the producer.
    @Test func producerSleepsOnAFullBufferAboutOnceABatchNotOnceATake() throws {
        let planned = try Self.deliveries(2_000, spacing: 0.001)
        let pipeline = Self.started(planned) { Array("signed \($0.id)".utf8) }
        _ = Self.settled(pipeline) { $0.deliveries >= 64 }
        var taken = 0
        while pipeline.peek() != nil {
            pipeline.pop()
            taken += 1
            // Slow enough for a woken producer to look at the buffer between two takes.
            if taken % 4 == 0 { usleep(50) }
        }
        #expect(taken == 2_000)
        // 125 batches, each after one sleep, and a few backstop looks while the test waited for the buffer to fill.
        #expect(pipeline.producerWaits < 125 + 60)
    }

    @Test func frontBeingSignedIsReportedWithoutWaiting() throws {
        let planned = try Self.deliveries(4, spacing: 0.5)
        let gate = DispatchSemaphore(value: 0)
        let pipeline = MintPipeline(
            stream: planned.makeIterator(),
            sign: { planned in
                gate.wait()
                return Array("signed \(planned.id)".utf8)
            },
            cache: BodyCache(),
            clock: nil,
            shedAfter: 0.05,
            limits: MintBufferLimits(deliveries: 64),
            batchSize: 16
        )
        defer {
            pipeline.stop()
            for _ in 0..<4 { gate.signal() }
        }
        pipeline.start()
        // The signer is stuck: the engine's thread is told so at once instead of blocking in the pipeline.
        for _ in 0..<3 {
            guard case .minting(let at) = pipeline.head() else {
                Issue.record("the front should still be minting")
                return
            }
            #expect(at == 0)
        }
        for _ in 0..<4 { gate.signal() }
        let first = try #require(pipeline.peek())
        #expect(first.planned.id == planned[0].id)
        guard case .ready(let ready) = pipeline.head() else {
            Issue.record("the front should be ready")
            return
        }
        #expect(ready.body == Array("signed \(planned[0].id)".utf8))
    }

    /// Waits (at most 10 s) until the buffer reaches a cap, then a while longer for any overshoot, and returns
    /// what it holds.
    static func settled(
        _ pipeline: MintPipeline,
        when reached: ((deliveries: Int, bytes: Int, lastAt: Double)) -> Bool
    ) -> (deliveries: Int, bytes: Int, lastAt: Double) {
        let deadline = Date(timeIntervalSinceNow: 10)
        while !reached(pipeline.buffered) && Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        Thread.sleep(forTimeInterval: 0.3)
        return pipeline.buffered
    }

    @Test func bufferStopsAtItsByteCapWhateverTheCountAllows() throws {
        // 12 KB bodies, as a 3-JWS renewal's: the count cap (1,000) would hold 12 MB, the byte cap holds 100 KB.
        let planned = try Self.deliveries(400, spacing: 0.001)
        let pipeline = MintPipeline(
            stream: planned.makeIterator(),
            sign: { _ in [UInt8](repeating: 0x41, count: 12_000) },
            cache: BodyCache(),
            clock: nil,
            shedAfter: 0.05,
            limits: MintBufferLimits(deliveries: 1_000, bytes: 100_000),
            batchSize: 8
        )
        pipeline.start()
        defer { pipeline.stopAndWait() }
        let held = Self.settled(pipeline) { $0.bytes >= 100_000 }
        // Full by bytes, overshooting by one batch at most.
        #expect(held.bytes >= 100_000)
        #expect(held.bytes <= 100_000 + 8 * 12_000)
        #expect(held.deliveries == held.bytes / 12_000)
        // Taking from the front frees room, and everything still comes through, in order.
        #expect(Self.drain(pipeline).count == 400)
    }

    @Test func bufferStopsAtItsSecondsAheadOfTheClock() throws {
        // 10 deliveries a second for 40 s of schedule; the clock stands at 0, then moves to 10 s.
        let planned = try Self.deliveries(400, spacing: 0.1)
        let now = Mutex(0.0)
        let pipeline = MintPipeline(
            stream: planned.makeIterator(),
            sign: { Array("signed \($0.id)".utf8) },
            cache: BodyCache(),
            clock: { now.withLock { $0 } },
            shedAfter: 1_000,
            limits: MintBufferLimits(deliveries: 1_000, bytes: 1 << 30, secondsAhead: 2),
            batchSize: 4
        )
        pipeline.start()
        defer { pipeline.stopAndWait() }
        let early = Self.settled(pipeline) { $0.lastAt >= 2 }
        // 2 s ahead and at most one batch more: about 20 deliveries, not the 400 the count cap allows.
        #expect(early.lastAt >= 2 && early.lastAt < 2 + 4 * 0.1 + 1e-9)
        #expect(early.deliveries <= 25)
        now.withLock { $0 = 10 }
        let later = Self.settled(pipeline) { $0.lastAt >= 12 }
        #expect(later.lastAt >= 12 && later.lastAt < 12 + 4 * 0.1 + 1e-9)
        now.withLock { $0 = 1_000 }
        #expect(Self.drain(pipeline).map(\.planned.id) == planned.map(\.id))
    }

    @Test func shedDeliveriesAreTakenInBulkInOrderUpToTheirDueTime() throws {
        // The impossible rate of the first test: most deliveries are shed, in runs between signed ones.
        let (planned, _, pipeline) = try Self.impossibleRate()
        var order: [UInt64] = []
        var bulkTakes = 0
        while let front = pipeline.peek() {
            guard front.shed != nil else {
                pipeline.pop()
                order.append(front.planned.id)
                continue
            }
            // Bounded by a due time 0.1 s after the front's: nothing later comes, and nothing signed.
            let limit = front.planned.at + 0.1
            let taken = pipeline.popShed(dueBy: limit).flatMap { $0 }
            #expect(!taken.isEmpty)
            #expect(taken.allSatisfy { $0.at <= limit })
            order += taken.map(\.id)
            bulkTakes += 1
        }
        #expect(order == planned.map(\.id))
        #expect(pipeline.shed > 1_000)
        // Far fewer takes than shed deliveries: that is what keeps an overloaded engine's thread free.
        #expect(bulkTakes * 5 < pipeline.shed)
    }

    /// The engine's path: a minted front is moved out whole (`takeMinted`), a shed one never is, and shed runs go in
    /// bulk; every delivery comes once, in order, and no taken entry keeps its body in the buffer.
    @Test func engineTakesMintedDeliveriesWholeAndShedRunsInBulkInOrder() throws {
        let (planned, _, pipeline) = try Self.impossibleRate()
        var order: [UInt64] = []
        var signed = 0
        while let front = pipeline.peek() {
            if let minted = pipeline.takeMinted() {
                #expect(minted.planned.id == front.planned.id)
                #expect(minted.shed == nil && minted.body != nil)
                order.append(minted.planned.id)
                signed += 1
                continue
            }
            #expect(front.shed != nil)
            order += pipeline.popShed(dueBy: front.planned.at + 0.1).flatMap { $0 }.map(\.id)
        }
        #expect(order == planned.map(\.id))
        #expect(signed == planned.count - pipeline.shed)
        #expect(pipeline.held.bodyBytes == 0)
    }

    /// Three seconds of the pipeline profile's world (400 actions/s) against a minter that sleeps 10 ms a signature
    /// (about 200 a second on two cores, a fifth of what the schedule asks), on the wall clock, with or without
    /// thinning at the source; drained to its end as fast as it comes.
    static func overloaded(thinning: Bool) throws -> (out: [MintedDelivery], shed: Int, admission: ArrivalAdmission?) {
        var profile = try Profile.decode(Data(Self.profile.utf8), file: "pipeline.json5")
        profile.schedule = [RateSegment(.constant(rate: 400), seconds: 3)]
        let admission = thinning ? ArrivalAdmission(seed: profile.seed) : nil
        let world = World(profile: profile, startMillis: 1_800_000_000_000, admission: admission)
        let start = Date().timeIntervalSince1970 + 0.5
        let pipeline = MintPipeline(
            stream: ChaosStream(world, profile: profile).lazy.filter(\.sends).makeIterator(),
            sign: { planned in
                usleep(10_000)
                return Array("signed \(planned.id)".utf8)
            },
            cache: BodyCache(),
            clock: { Date().timeIntervalSince1970 - start },
            admission: admission,
            shedAfter: 0.25,
            limits: MintBufferLimits(),
            batchSize: 8
        )
        pipeline.start()
        let out = Self.drain(pipeline)
        return (out, pipeline.shed, admission)
    }

    @Test func sustainedOverloadIsThinnedAtTheSourceInsteadOfShed() throws {
        let shedding = try Self.overloaded(thinning: false)
        let thinning = try Self.overloaded(thinning: true)
        let admission = try #require(thinning.admission)
        // The world dropped most arrivals before they became actions...
        #expect(admission.counts.dropped * 2 > admission.counts.arrivals)
        #expect(!admission.changes.isEmpty)
        // ...so the pipeline shed far less, and still signed most of what it signed while shedding (about 0.78 on a
        // quiet machine, the bound leaves room for a busy one): this signer's capacity costs no CPU, so shedding
        // loses nothing here, and three seconds are mostly the time thinning takes to find the share (in a run,
        // generating what it sheds is what makes shedding collapse).
        #expect(thinning.shed * 4 < shedding.shed)
        let signed = { (out: [MintedDelivery]) in out.filter { $0.body != nil }.count }
        #expect(Double(signed(thinning.out)) >= 0.5 * Double(signed(shedding.out)))
        #expect(thinning.out.count < shedding.out.count)
    }
}
