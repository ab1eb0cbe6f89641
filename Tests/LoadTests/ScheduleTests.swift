import Primitives
import Testing

@testable import Load

struct ScheduleTests {
    @Test(arguments: [
        (RateSchedule.constant(100, for: .seconds(1)), 100),
        (RateSchedule.constant(3, for: .seconds(2)), 6),
        (RateSchedule.ramp(from: 0, to: 100, over: .seconds(2)), 100),
        (RateSchedule.steps([10, 20, 30], each: .seconds(1)), 60),
        (RateSchedule.spike(base: 10, peak: 100, at: .seconds(1), length: .seconds(1), total: .seconds(3)), 120),
        (RateSchedule.sine(mean: 50, amplitude: 25, period: .seconds(1), for: .seconds(2)), 100),
    ])
    func pacerReleasesTheIntegratedCount(schedule: RateSchedule, expected: Int) {
        var pacer = Pacer(schedule: schedule)
        var times: [Duration] = []
        while let next = pacer.next() { times.append(next) }
        #expect(abs(times.count - expected) <= 1)
        #expect(times == times.sorted())
        #expect(times.allSatisfy { $0 >= .zero && $0 < schedule.duration })
    }

    @Test func constantPacerSpacesArrivalsEvenly() {
        var pacer = Pacer(schedule: .constant(4, for: .seconds(1)))
        #expect(pacer.next() == .zero)
        #expect(pacer.next() == .milliseconds(250))
        #expect(pacer.next() == .milliseconds(500))
        #expect(pacer.next() == .milliseconds(750))
        #expect(pacer.next() == nil)
        #expect(pacer.count == 4)
    }

    @Test func rampPacerFollowsTheQuadraticInverse() {
        // Rate 0 → 10 over 1 s: Λ(t) = 5 t², so the n-th arrival is at √(n/5).
        var pacer = Pacer(schedule: .ramp(from: 0, to: 10, over: .seconds(1)))
        var times: [Double] = []
        while let next = pacer.next() { times.append(next.seconds) }
        #expect(times.count == 5)
        for (n, time) in times.enumerated() {
            #expect(abs(time - (Double(n) / 5).squareRoot()) < 1e-6)
        }
    }

    @Test func poissonPacerIsSeededAndKeepsTheMeanRate() {
        let schedule = RateSchedule.constant(1000, for: .seconds(10)).with(arrivals: .poisson(seed: 7))
        var first = Pacer(schedule: schedule)
        var second = Pacer(schedule: schedule)
        var count = 0
        while let a = first.next() {
            #expect(a == second.next())
            count += 1
        }
        // 10,000 expected; a Poisson count has σ = 100, so ±500 is five sigma.
        #expect(abs(count - 10_000) < 500)
    }

    /// Values of the pacer as it was before it moved onto Profile's `ArrivalTimes` (its own SplitMix64 and
    /// integral inversion, at 66eca0e): a seeded `paystorm load --arrivals poisson` run sends at the same times.
    @Test func poissonPacerKeepsItsTimesAcrossTheMoveToProfile() {
        var constant = Pacer(schedule: RateSchedule.constant(1000, for: .seconds(1)).with(arrivals: .poisson(seed: 7)))
        let first = (0..<5).compactMap { _ in constant.next() }
        #expect(first == [942_045, 5_029_119, 5_133_634, 5_673_322, 6_466_418].map { Duration.nanoseconds($0) })
        var ramp = Pacer(
            schedule: RateSchedule.ramp(from: 0, to: 10, over: .seconds(1)).with(arrivals: .poisson(seed: 3))
        )
        var times: [Duration] = []
        while let next = ramp.next() { times.append(next) }
        #expect(times == [659_756_023, 711_708_617, 777_441_628].map { Duration.nanoseconds($0) })
    }

    @Test func rateAndExpectedCountAreClosedForm() {
        let schedule = RateSchedule.ramp(from: 10, to: 30, over: .seconds(2)).then(.constant(5, for: .seconds(1)))
        #expect(schedule.duration == .seconds(3))
        #expect(schedule.rate(at: .seconds(1)) == 20)
        #expect(schedule.rate(at: .milliseconds(2500)) == 5)
        #expect(schedule.rate(at: .seconds(4)) == 0)
        #expect(abs(schedule.expectedCount(until: .seconds(3)) - 45) < 1e-9)
        #expect(schedule.peakRate == 30)
    }

    @Test(arguments: [
        ("500@10s", [RateSegment(.constant(rate: 500), seconds: 10)]),
        (
            "10->500@1m,500@5m",
            [RateSegment(.ramp(from: 10, to: 500), seconds: 60), RateSegment(.constant(rate: 500), seconds: 300)]
        ),
        ("sine(200,100,20s)@2m", [RateSegment(.sine(mean: 200, amplitude: 100, periodSeconds: 20), seconds: 120)]),
        (
            "100@500ms, 1000@5s",
            [RateSegment(.constant(rate: 100), seconds: 0.5), RateSegment(.constant(rate: 1000), seconds: 5)]
        ),
    ])
    func parsesScheduleText(text: String, segments: [RateSegment]) throws {
        #expect(try RateSchedule.parse(text).segments == segments)
    }

    @Test(arguments: [
        "", "500", "abc@10s", "500@", "500@0s", "-5@1s", "sine(10,20,1s)@1s", "0@1s", "10->x@1s", "5@10parsecs",
    ])
    func rejectsBadScheduleText(text: String) {
        #expect(throws: LoadConfigurationError.self) { try RateSchedule.parse(text) }
    }

    @Test func warnsWhenTheInFlightCapCannotSustainThePeak() {
        let schedule = RateSchedule.constant(500, for: .seconds(10))
        #expect(schedule.capacityWarning(maxInFlight: 100, expectedLatency: .seconds(1)) != nil)
        #expect(schedule.capacityWarning(maxInFlight: 1000, expectedLatency: .seconds(1)) == nil)
    }

    @Test(arguments: [
        ("250ms", Duration.milliseconds(250)), ("1.5s", .milliseconds(1500)), ("2m", .seconds(120)),
        ("1h", .seconds(3600)), ("800us", .microseconds(800)), ("800µs", .microseconds(800)), ("3", .seconds(3)),
    ])
    func parsesDurations(text: String, expected: Duration) throws {
        #expect(try parseDuration(text) == expected)
    }

    @Test(arguments: ["", "ms", "-1s", "1 parsec", "nan"])
    func rejectsBadDurations(text: String) {
        #expect(throws: LoadConfigurationError.self) { try parseDuration(text) }
    }
}

/// Durations past a year, refused by the parser itself before converting to nanoseconds traps.
struct LongDurationTests {
    @Test(arguments: ["99999999h", "99999999999h", "1e300s", "8761h", "31536001"])
    func durationPastAYearIsRefusedNamingIt(text: String) {
        #expect(throws: LoadConfigurationError.self) { try parseDuration(text) }
        do {
            _ = try parseDuration(text)
        } catch {
            #expect(error.message == "'\(text)' is too long: a duration is at most a year (8760h)")
        }
    }

    @Test func aYearIsAccepted() throws {
        #expect(try parseDuration("8760h") == .seconds(31_536_000))
    }
}

/// A schedule that intends less than one request would send one at its start and end at once.
struct TinyScheduleTests {
    @Test func aScheduleOfLessThanOneRequestIsRefused() {
        let error = #expect(throws: LoadConfigurationError.self) {
            try RateSchedule.constant(0.0001, for: .seconds(2)).validate()
        }
        #expect(
            error?.message
                == "the schedule intends 0.0002 requests in all, fewer than one: raise the rate or the duration"
        )
    }

    @Test func oneRequestIsEnough() throws {
        try RateSchedule.constant(0.5, for: .seconds(2)).validate()
    }
}
