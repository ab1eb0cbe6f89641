import Primitives
import Testing

struct ArrivalTimesTests {
    @Test func evenArrivalsOfAConstantRateAreSpacedByItsInverse() {
        let arrivals = Array(ArrivalTimes([RateSegment(.constant(rate: 4), seconds: 1)]))
        #expect(arrivals == [0, 0.25, 0.5, 0.75])
    }

    @Test func aRampFromZeroFollowsTheQuadraticInverse() {
        // Rate 0 → 10 over 1 s: Λ(t) = 5 t², so the n-th arrival is at √(n/5); stepping t + 1/rate would
        // never leave t = 0.
        let arrivals = Array(ArrivalTimes([RateSegment(.ramp(from: 0, to: 10), seconds: 1)]))
        #expect(arrivals.count == 5)
        for (n, time) in arrivals.enumerated() {
            #expect(abs(time - (Double(n) / 5).squareRoot()) < 1e-9)
        }
    }

    @Test func aSpikeSendsItsPeakOnlyInsideTheSpike() {
        let spike = RateSegment(.spike(base: 2, peak: 10, atSeconds: 1, spikeSeconds: 1), seconds: 3)
        let arrivals = Array(ArrivalTimes([spike]))
        #expect(arrivals.count == 14)
        #expect(arrivals.filter { $0 >= 1 && $0 < 2 }.count == 10)
    }

    @Test func poissonArrivalsReplayFromTheirSeedAndDifferAcrossSeeds() {
        let schedule = [RateSegment(.constant(rate: 1000), seconds: 2)]
        let first = Array(ArrivalTimes(schedule, poissonSeed: 7))
        #expect(first == Array(ArrivalTimes(schedule, poissonSeed: 7)))
        #expect(first != Array(ArrivalTimes(schedule, poissonSeed: 8)))
        // 2,000 expected; a Poisson count has σ ≈ 45, so ±300 is over six sigma.
        #expect(abs(first.count - 2000) < 300)
        #expect(first == first.sorted())
    }

    @Test func poissonArrivalsFollowARamp() {
        // Rate 0 → 2,000 over 2 s: a quarter of the 2,000 arrivals fall in the first second, three quarters
        // in the second (σ ≈ 22 and 39).
        let arrivals = Array(ArrivalTimes([RateSegment(.ramp(from: 0, to: 2000), seconds: 2)], poissonSeed: 3))
        let early = arrivals.filter { $0 < 1 }.count
        #expect(abs(early - 500) < 150)
        #expect(abs(arrivals.count - early - 1500) < 250)
    }

    @Test(
        arguments: [
            (RateSegment(.ramp(from: 5, to: 1), seconds: 2), 1.0),
            (RateSegment(.steps(from: 4, to: 1, count: 4), seconds: 4), 1.0),
            (RateSegment(.spike(base: 3, peak: 9, atSeconds: 0, spikeSeconds: 1), seconds: 2), 3.0),
            (RateSegment(.sine(mean: 10, amplitude: 4, periodSeconds: 1), seconds: 2), 6.0),
        ] as [(RateSegment, Double)]
    )
    func lowestRateIsTheMinimumOfTheShape(segment: RateSegment, expected: Double) {
        #expect(segment.lowestRate == expected)
    }
}
