import Reporting
import Testing

@testable import PayStorm

struct HarnessSaturationTests {
    /// Feeds one tick a second: `rate` deliveries sent in each, the given release lag and minting wait per tick.
    private static func run(_ ticks: [(lag: Double, mintWait: Double, rate: Int)]) -> HarnessSaturation {
        var saturation = HarnessSaturation()
        var sent = 0
        var waited = 0.0
        for (index, tick) in ticks.enumerated() {
            sent += tick.rate
            waited += tick.mintWait
            saturation.observe(at: Double(index + 1), sent: sent, releaseLag: tick.lag, mintWaited: waited)
        }
        return saturation
    }

    @Test func runThatKeepsUpIsNotHarnessLimited() {
        let ticks = Array(repeating: (lag: 0.002, mintWait: 0.0, rate: 2_000), count: 20)
        #expect(Self.run(ticks).limit == nil)
    }

    @Test func briefHiccupsAreNotHarnessLimited() {
        var ticks = Array(repeating: (lag: 0.002, mintWait: 0.0, rate: 2_000), count: 20)
        for second in [5, 6, 10, 11, 15, 16] { ticks[second] = (lag: 0.6, mintWait: 0.5, rate: 1_000) }
        #expect(Self.run(ticks).limit == nil)
    }

    @Test func sustainedMintingStallIsNamedFromItsFirstSecondWithItsRate() throws {
        var ticks = Array(repeating: (lag: 0.002, mintWait: 0.0, rate: 5_000), count: 11)
        ticks += Array(repeating: (lag: 2.0, mintWait: 0.6, rate: 9_800), count: 5)
        // A later span does not move where the run first fell behind.
        ticks += [(lag: 0.0, mintWait: 0.0, rate: 5_000)]
        ticks += Array(repeating: (lag: 3.0, mintWait: 0.0, rate: 100), count: 4)
        let limit = try #require(Self.run(ticks).limit)
        #expect(limit.fromSeconds == 11)
        #expect(limit.deliveriesPerSecond == 9_800)
        #expect(limit.reason == "minting behind the schedule")
    }

    @Test func lateEngineWithMintingAheadIsTheEngineThread() throws {
        let ticks =
            Array(repeating: (lag: 0.0, mintWait: 0.0, rate: 4_000), count: 3)
            + Array(repeating: (lag: 0.8, mintWait: 0.01, rate: 3_000), count: 3)
        let limit = try #require(Self.run(ticks).limit)
        #expect(limit.fromSeconds == 3)
        #expect(limit.deliveriesPerSecond == 3_000)
        #expect(limit.reason == "engine thread late")
    }

    @Test func sheddingIsHarnessLimitedThoughTheReleasesStayOnTime() throws {
        var saturation = HarnessSaturation()
        // Minting keeps up for 4 s, then sheds every second: the releases stay on time because it sheds.
        for second in 1...10 {
            saturation.observe(
                at: Double(second),
                sent: second * 3_000,
                releaseLag: 0.05,
                mintWaited: 0,
                shed: max(0, second - 4) * 27_000
            )
        }
        let limit = try #require(saturation.limit)
        #expect(limit.fromSeconds == 4)
        #expect(limit.deliveriesPerSecond == 3_000)
        #expect(limit.reason == "minting behind the schedule")
        #expect(limit.sentence == "harness-limited from 4 s at 3,000 deliveries/s (minting behind the schedule)")
    }

    @Test func droppingArrivalsAtTheSourceIsHarnessLimitedThoughNothingIsShed() throws {
        var saturation = HarnessSaturation()
        // The world thins the schedule from 3 s on, so the pipeline sheds nothing and the releases stay on time.
        for second in 1...10 {
            saturation.observe(
                at: Double(second),
                sent: second * 3_000,
                releaseLag: 0.01,
                mintWaited: 0,
                dropped: UInt64(max(0, second - 3) * 20_000)
            )
        }
        var limit = try #require(saturation.limit)
        #expect(limit.fromSeconds == 3)
        #expect(limit.reason == "minting behind the schedule")
        limit.actions = HarnessLimit.DroppedActions(scheduled: 1_234_567, dropped: 140_000)
        #expect(
            limit.sentence
                == "harness-limited from 3 s at 3,000 deliveries/s (minting behind the schedule); 140,000 of "
                + "1,234,567 scheduled actions dropped at the source"
        )
    }

    @Test func arrivalsDroppedInOneTickStillMakeTheRunHarnessLimited() throws {
        var saturation = HarnessSaturation()
        // A short replay of admissions: the world runs ahead of the clock, so all its drops fall in the first tick.
        for second in 1...3 {
            saturation.observe(
                at: Double(second),
                sent: second * 2_000,
                releaseLag: 0.01,
                mintWaited: 0,
                dropped: 49_738
            )
        }
        let limit = try #require(saturation.limit)
        #expect(limit.fromSeconds == 0)
        #expect(limit.deliveriesPerSecond == 2_000)
        #expect(limit.reason == "minting behind the schedule")
    }

    @Test(arguments: [
        (cpu: 1.9, wall: 1.0, cores: 2, saturated: true),
        (cpu: 1.8, wall: 1.0, cores: 2, saturated: true),
        (cpu: 1.7, wall: 1.0, cores: 2, saturated: false),
        (cpu: 0.95, wall: 1.0, cores: 1, saturated: true),
        (cpu: 0.95, wall: 1.0, cores: 4, saturated: false),
        (cpu: 3.0, wall: 2.0, cores: 2, saturated: false),
        (cpu: 1.0, wall: 0.0, cores: 2, saturated: false),
        (cpu: 1.0, wall: 1.0, cores: 0, saturated: false),
    ])
    func cpuIsSaturatedWhenTheProcessUsesNearlyAllItsCores(
        _ row: (cpu: Double, wall: Double, cores: Int, saturated: Bool)
    ) {
        #expect(
            HarnessSaturation.cpuSaturated(cpuSeconds: row.cpu, wallSeconds: row.wall, cores: row.cores)
                == row.saturated
        )
    }

    /// Ticks behind from 3 s on (shedding), the process using `cpuPerSecond` of 2 cores from a start at 40 s of CPU.
    private static func behind(cpuPerSecond: Double) -> HarnessSaturation {
        var saturation = HarnessSaturation(cores: 2, cpuAtStart: 40)
        for second in 1...8 {
            saturation.observe(
                at: Double(second),
                sent: second * 2_000,
                releaseLag: 0.05,
                mintWaited: 0,
                shed: max(0, second - 3) * 10_000,
                cpu: 40 + Double(second) * cpuPerSecond
            )
        }
        return saturation
    }

    @Test func limitNamesCPUWhenTheProcessUsesAllItsCores() throws {
        let limit = try #require(Self.behind(cpuPerSecond: 1.9).limit)
        #expect(limit.reason == "CPU saturated, 1.9 of 2 cores; minting behind the schedule")
        #expect(limit.fromSeconds == 3)
    }

    @Test func limitDoesNotNameCPUWithCoresToSpare() throws {
        let limit = try #require(Self.behind(cpuPerSecond: 1.2).limit)
        #expect(limit.reason == "minting behind the schedule")
    }
}
