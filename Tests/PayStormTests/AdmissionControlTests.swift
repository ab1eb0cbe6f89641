import Simulation
import Testing

@testable import PayStorm

struct AdmissionControlTests {
    /// Feeds `windows` windows of 10 batches each (10 ms of the run's clock per batch), each covering
    /// `scheduleSeconds` of schedule in `busy` seconds, at the given lateness and signed share.
    static func feed(
        _ control: inout AdmissionControl,
        windows: Int,
        from start: Double = 0,
        scheduleSeconds: Double,
        busy: Double,
        lateness: Double = 0,
        signedShare: Double = 1
    ) -> [Int] {
        var shares: [Int] = []
        for step in 0..<(windows * 10) {
            let now = start + Double(step + 1) * 0.01
            if let share = control.observe(
                now: now,
                lateness: lateness,
                scheduleSeconds: scheduleSeconds,
                signedShare: signedShare,
                busySeconds: busy
            ) {
                shares.append(share)
            }
        }
        return shares
    }

    @Test func runThatKeepsUpNeverThins() {
        var control = AdmissionControl()
        // Twice as fast as the schedule, a second ahead.
        #expect(Self.feed(&control, windows: 50, scheduleSeconds: 0.01, busy: 0.005, lateness: -1).isEmpty)
        #expect(control.share == ArrivalAdmission.whole)
    }

    @Test func momentaryStallDoesNotThin() {
        var control = AdmissionControl()
        _ = Self.feed(&control, windows: 5, scheduleSeconds: 0.01, busy: 0.005, lateness: -1.5)
        // A fifth of a second at a tenth of the pace (a busy machine's stall, astride two windows) eats into the
        // lead, then the pace is back.
        let stall = Self.feed(&control, windows: 2, from: 0.5, scheduleSeconds: 0.001, busy: 0.01, lateness: -1.3)
        let after = Self.feed(&control, windows: 5, from: 0.7, scheduleSeconds: 0.01, busy: 0.005, lateness: -1.4)
        #expect(stall.isEmpty)
        #expect(after.isEmpty)
        #expect(control.share == ArrivalAdmission.whole)
    }

    @Test func stallNearTheCeilingChangesNothing() {
        // At nine tenths of the ceiling the producer stays ahead; a 0.2 s stall eats into the lead, no more.
        let (shares, shedShare) = Self.simulate(capacity: 1_000, demand: 900, stallAt: 5, stallSeconds: 0.2)
        #expect(shares.allSatisfy { $0 == 1 })
        #expect(shedShare == 0)
    }

    /// A pipeline that signs `capacity` deliveries per second busy against a schedule of `demand` deliveries per
    /// second, simulated batch by batch: a batch of 256 covers 256 / (demand × share) seconds of schedule; the
    /// producer starts 1.5 s before the clock, waits when 2 s ahead, and sheds a batch (at no cost) when more than
    /// 0.25 s late.
    /// - Returns: the shares of the last `tail` seconds and the part of their deliveries that was shed.
    static func simulate(
        capacity: Double,
        demand: Double,
        seconds: Double = 20,
        tail: Double = 5,
        stallAt: Double = .infinity,
        stallSeconds: Double = 0
    )
        -> (shares: [Double], shedShare: Double)
    {
        var control = AdmissionControl()
        var stallSeconds = stallSeconds
        var now = -1.5
        var world = 0.0
        var shares: [Double] = []
        var (shed, total) = (0.0, 0.0)
        while now < seconds {
            let share = Double(control.share) / Double(ArrivalAdmission.whole)
            let span = 256 / (demand * share)
            let lateness = now - world
            let shedding = lateness > 0.25
            var busy = shedding ? 0.0001 : 256 / capacity
            if now >= stallAt {
                busy += stallSeconds
                stallSeconds = 0
            }
            world += span
            now += busy
            if world - now > 2 { now = world - 2 }
            _ = control.observe(
                now: now,
                lateness: lateness,
                scheduleSeconds: span,
                signedShare: shedding ? 0 : 1,
                busySeconds: busy
            )
            if now > seconds - tail || now >= stallAt {
                shares.append(share)
                total += 256
                if shedding { shed += 256 }
            }
        }
        return (shares, total > 0 ? shed / total : 0)
    }

    @Test(arguments: [2.0, 4.0, 10.0, 50.0])
    func sustainedOverloadSettlesWhereMintingKeepsUp(overload: Double) {
        let (shares, shedShare) = Self.simulate(capacity: 1_000, demand: 1_000 * overload)
        let ideal = 1 / overload
        // The whole schedule is not sent, what is admitted is signed and sent, and no more than a little is shed.
        #expect(
            shares.allSatisfy { $0 >= ideal * 0.6 && $0 <= ideal * 1.05 },
            "shares \(shares.min()!)...\(shares.max()!)"
        )
        #expect(shedShare < 0.05)
    }

    @Test func scheduleWithinTheCeilingIsNotThinned() {
        let (shares, shedShare) = Self.simulate(capacity: 1_000, demand: 800)
        #expect(shares.allSatisfy { $0 == 1 })
        #expect(shedShare == 0)
    }

    @Test func shareComesBackWhenTheOverloadEnds() {
        var control = AdmissionControl()
        _ = Self.feed(&control, windows: 8, scheduleSeconds: 0.001, busy: 0.01, lateness: 0.3)
        let thinned = control.share
        #expect(thinned <= ArrivalAdmission.whole / 4)
        // Ahead again, with room: the share grows by at most double at once, back to the whole.
        let shares = Self.feed(&control, windows: 60, from: 1, scheduleSeconds: 0.02, busy: 0.01, lateness: -0.5)
        #expect(shares == shares.sorted())
        #expect(zip([thinned] + shares, shares).allSatisfy { Double($1) <= Double($0) * 2 + 1 })
        #expect(control.share == ArrivalAdmission.whole)
    }

    @Test func everythingShedWithNoPaceKnownCutsAtLeastByHalf() {
        var control = AdmissionControl()
        let shares = Self.feed(&control, windows: 4, scheduleSeconds: 0.01, busy: 0.001, lateness: 0.5, signedShare: 0)
        #expect(shares.first.map { $0 <= ArrivalAdmission.whole / 2 } == true)
        #expect(zip([ArrivalAdmission.whole] + shares, shares).allSatisfy { $1 * 8 >= $0 })
    }

    /// Before the clock starts the producer is ahead, but at a tenth of the pace the lead will not last: the share
    /// comes down before anything is late.
    @Test func paceThatWillUseUpTheLeadCutsBeforeAnythingIsLate() {
        var control = AdmissionControl()
        let shares = Self.feed(&control, windows: 3, scheduleSeconds: 0.001, busy: 0.01, lateness: -0.6)
        #expect(!shares.isEmpty)
        #expect(control.share <= ArrivalAdmission.whole / 2)
        // With two seconds of lead the same pace is not yet a reason.
        var ahead = AdmissionControl()
        #expect(Self.feed(&ahead, windows: 3, scheduleSeconds: 0.001, busy: 0.01, lateness: -2).isEmpty)
    }

    /// A stream like a run's: `overload` times the arrivals minting keeps up with, each admitted arrival yielding
    /// one delivery at once and `lagged` more spread over the next 0.05 to 1 s (the other devices' updates), signed
    /// at `capacity` deliveries per second busy, with a buffer that holds `bufferSeconds` ahead; simulated batch by
    /// batch with the world's flow, as a run's producer reports it.
    /// - Returns: the shares after `settle` seconds, the share of the deliveries after it that was shed, and the
    ///   lowest share of the run.
    static func simulateStream(
        overload: Double,
        lagged: Double = 1,
        capacity: Double = 16_000,
        bufferSeconds: Double = 0.3,
        seconds: Double = 10,
        settle: Double = 3
    ) -> (shares: [Double], shedShare: Double, lowest: Double) {
        let perArrival = 1 + lagged
        let arrivalsPerSecond = overload * capacity / perArrival
        var control = AdmissionControl()
        var history: [(at: Double, share: Double)] = [(-10, 1)]
        var (now, world) = (-1.5, 0.0)
        var flow = ArrivalAdmission.Flow()
        var shares: [Double] = []
        var (shed, total) = (0.0, 0.0)
        var slept = false
        var lowest = 1.0 * Double(ArrivalAdmission.whole)
        while now < seconds {
            let share = Double(control.share) / Double(ArrivalAdmission.whole)
            if history.last!.share != share { history.append((world, share)) }
            // The lagged deliveries yielded now come from the shares of the last second, on average.
            let earlier = stride(from: 0.05, through: 1, by: 0.05).map { lag in
                history.last { $0.at <= world - lag }?.share ?? 1
            }
            let perSecond = arrivalsPerSecond * (share + lagged * earlier.reduce(0, +) / Double(earlier.count))
            let span = 256 / perSecond
            let lateness = now - world
            let shedding = lateness > 0.25
            let busy = shedding ? 256 / capacity / 8 : 256 / capacity
            let arrivals = arrivalsPerSecond * span
            flow.arrivals += UInt64(arrivals.rounded())
            flow.dropped += UInt64((arrivals * (1 - share)).rounded())
            flow.scheduled += UInt64((arrivals * share * perArrival).rounded())
            flow.yielded += 256
            world += span
            now += busy
            if world - now > bufferSeconds {
                now = world - bufferSeconds
                slept = true
            }
            let batch = AdmissionControl.Batch(
                now: now,
                lateness: lateness,
                scheduleSeconds: span,
                signedShare: shedding ? 0 : 1,
                busySeconds: busy,
                sleptForRoom: slept,
                deliveries: 256,
                lastAt: world,
                flow: flow
            )
            slept = false
            _ = control.observe(batch)
            if control.share < ArrivalAdmission.whole { lowest = min(lowest, Double(control.share)) }
            if now > settle {
                shares.append(share)
                total += 256
                if shedding { shed += 256 }
            }
        }
        return (shares, total > 0 ? shed / total : 0, lowest / Double(ArrivalAdmission.whole))
    }

    /// After a cut the stream still yields the updates of arrivals admitted before it for a second: steering by
    /// what it yields would cut again and again, far under where minting keeps up. The flow says what the share
    /// yields once the stream settles. Once the first second's backlog is shed, the share stays near the ideal.
    @Test(arguments: [2.0, 10.0, 50.0])
    func overloadedStreamSettlesWhereMintingKeepsUpDespiteLaggedDeliveries(overload: Double) {
        let (shares, shedShare, lowest) = Self.simulateStream(overload: overload)
        let ideal = 1 / overload
        // While it wins back the lead it lost to them, the share may sit under the ideal, but not far.
        #expect(lowest >= ideal * 0.5, "lowest share \(lowest) of an ideal \(ideal)")
        #expect(
            shares.allSatisfy { $0 >= ideal * 0.7 && $0 <= ideal * 1.05 },
            "shares \(shares.min()!)...\(shares.max()!)"
        )
        #expect(shedShare < 0.02)
    }

    @Test func streamWithinTheCeilingIsNotThinned() {
        let (shares, shedShare, _) = Self.simulateStream(overload: 0.9)
        #expect(shares.allSatisfy { $0 == 1 })
        #expect(shedShare == 0)
    }
}
