import Load
import Reporting
import Testing

@testable import Capacity

/// When the recovery probe calls a target recovered, and how a search's recoveries are told.
struct RecoveryProbeTests {
    /// A probe's result: answered with `status` after `millis` ms, or failed with `error`.
    static func result(_ millis: Int64, status: Int = 400, error: LoadErrorClass? = nil) -> LoadResult {
        LoadResult(
            id: 0,
            kind: "recovery",
            intended: .zero,
            sent: .zero,
            wireStart: .zero,
            received: .milliseconds(millis),
            status: error == nil ? status : 0,
            error: error
        )
    }

    @Test func aFullWindowAnsweredWithinTheBoundByMedianIsRecovered() {
        let bound = RecoveryProbe.bound(quietMicros: 40_000)
        #expect(bound == 105_000)
        // One slow answer in five does not hold the median up.
        #expect(RecoveryProbe.isRecovered([41, 40, 900, 42, 40].map { Self.result($0) }, bound: bound))
        #expect(!RecoveryProbe.isRecovered([41, 40, 42, 40].map { Self.result($0) }, bound: bound))
        #expect(!RecoveryProbe.isRecovered([41, 400, 420, 40, 300].map { Self.result($0) }, bound: bound))
    }

    @Test func aTimeoutOrAnOverloadedAnswerInTheWindowIsNotRecovered() {
        let bound = RecoveryProbe.bound(quietMicros: 1_000)
        let quick = [2, 2, 2, 2].map { Self.result($0) }
        #expect(RecoveryProbe.isRecovered(quick + [Self.result(2, status: 200)], bound: bound))
        #expect(!RecoveryProbe.isRecovered(quick + [Self.result(1000, error: .timeout)], bound: bound))
        for status in [429, 502, 503, 504] {
            #expect(!RecoveryProbe.isRecovered(quick + [Self.result(2, status: status)], bound: bound))
        }
    }

    @Test func theSummaryNamesTheStepsThatRanBeforeTheTargetRecovered() throws {
        func step(_ index: Int, _ recovery: CapacityRecovery?) -> CapacityStep {
            let none = StepPercentiles(p50: 0, p90: 0, p99: 0, p999: 0)
            return CapacityStep(
                index: index,
                rate: 10,
                seconds: 4,
                warmupSeconds: 1,
                folder: "steps/\(index)",
                offered: 10,
                achieved: 10,
                latency: none,
                service: none,
                meanServiceMicros: 0,
                recovery: recovery
            )
        }
        func wait(_ seconds: Double, recovered: Bool) -> CapacityRecovery {
            CapacityRecovery(
                recovered: recovered,
                waitedSeconds: seconds,
                startedAt: 0,
                probes: 5,
                medianMicros: 41_000,
                quietMicros: 40_000,
                boundMicros: 105_000
            )
        }
        #expect(CapacityRecovery.summary(of: [step(1, nil)]) == nil)
        let steps = [step(1, nil), step(2, wait(12.4, recovered: true)), step(3, wait(60, recovered: false))]
        let line = try #require(CapacityRecovery.summary(of: steps))
        #expect(line.hasPrefix("recovery: probed before 2 of 3 steps, at most 60.0 s"), "\(line)")
        #expect(line.contains("step 3 ran before the target recovered"), "\(line)")
        #expect(
            wait(12.4, recovered: true).sentence.hasPrefix("the target recovered in 12.4 s (probes' median 41.0 ms")
        )
        #expect(wait(60, recovered: false).sentence.hasSuffix("the step ran anyway"))
    }
}
