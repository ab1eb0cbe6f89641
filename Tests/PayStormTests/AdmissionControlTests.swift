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
        // Twice as fast as the schedule, on time.
        #expect(Self.feed(&control, windows: 50, scheduleSeconds: 0.01, busy: 0.005).isEmpty)
        #expect(control.share == ArrivalAdmission.whole)
    }

    @Test func momentaryStallDoesNotThin() {
        var control = AdmissionControl()
        _ = Self.feed(&control, windows: 5, scheduleSeconds: 0.01, busy: 0.005)
        // A fifth of a second late and slow (a busy machine's stall, astride two windows), then on time again.
        let stall = Self.feed(&control, windows: 2, from: 0.5, scheduleSeconds: 0.001, busy: 0.01, lateness: 0.3)
        let after = Self.feed(&control, windows: 5, from: 0.7, scheduleSeconds: 0.01, busy: 0.005)
        #expect(stall.isEmpty)
        #expect(after.isEmpty)
        #expect(control.share == ArrivalAdmission.whole)
    }

    /// A pipeline that signs `capacity` deliveries per second busy against a schedule of `demand` deliveries per
    /// second, simulated batch by batch: a batch of 256 covers 256 / (demand × share) seconds of schedule; the
    /// producer waits when half a second ahead, and sheds a batch (at no cost) when more than 0.25 s late.
    /// - Returns: the shares of the last `tail` seconds and the part of their deliveries that was shed.
    static func simulate(
        capacity: Double,
        demand: Double,
        seconds: Double = 20,
        tail: Double = 5
    )
        -> (shares: [Double], shedShare: Double)
    {
        var control = AdmissionControl()
        var now = 0.0
        var world = 0.0
        var shares: [Double] = []
        var (shed, total) = (0.0, 0.0)
        while now < seconds {
            let share = Double(control.share) / Double(ArrivalAdmission.whole)
            let span = 256 / (demand * share)
            let lateness = now - world
            let shedding = lateness > 0.25
            let busy = shedding ? 0.0001 : 256 / capacity
            world += span
            now += busy
            if world - now > 0.5 { now = world - 0.5 }
            _ = control.observe(
                now: now,
                lateness: lateness,
                scheduleSeconds: span,
                signedShare: shedding ? 0 : 1,
                busySeconds: busy
            )
            if now > seconds - tail {
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
        // On time again, with room: the share grows by at most a quarter a window, back to the whole.
        let shares = Self.feed(&control, windows: 30, from: 1, scheduleSeconds: 0.02, busy: 0.01)
        #expect(shares == shares.sorted())
        #expect(zip([thinned] + shares, shares).allSatisfy { Double($1) <= Double($0) * 1.25 + 1 })
        #expect(control.share == ArrivalAdmission.whole)
    }

    @Test func sheddingCountsAsBehindEvenOnTime() {
        var control = AdmissionControl()
        // Shedding keeps the lag small, so lateness alone would not say the run is behind; half of each batch shed
        // does, and only the signed half counts as pace.
        let shares = Self.feed(&control, windows: 5, scheduleSeconds: 0.01, busy: 0.01, signedShare: 0.5)
        #expect(!shares.isEmpty)
        #expect(control.share < ArrivalAdmission.whole)
    }
}
