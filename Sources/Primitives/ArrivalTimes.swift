/// The intended times of a schedule's arrivals: the one pacer of PayStorm, used by the simulated world and by
/// `paystorm load`. Evenly spread, the n-th arrival (from 0) is where the integrated rate reaches n, so a rate of
/// 0 produces nothing and a ramp from 0 starts slowly, exactly. With a seed, the n-th arrival is where the
/// integrated rate reaches the n-th point of a unit-rate Poisson process (a time change, so Poisson arrivals
/// follow ramps, steps and sines too), drawn from ``SplitMix64`` so that a run replays.
///
/// ```swift
/// var arrivals = ArrivalTimes(profile.schedule)
/// while let t = arrivals.next() { arrive(at: t) }
/// ```
public struct ArrivalTimes: Sequence, IteratorProtocol, Sendable {
    private let segments: [RateSegment]
    private var index = 0
    private var segmentStart = 0.0
    private var countAtSegmentStart = 0.0
    private var target = 0.0
    /// The generator of Poisson gaps; nil for evenly spread arrivals.
    private var random: SplitMix64?

    /// Arrivals of `segments`, played in order: evenly spread, or a Poisson process seeded with `poissonSeed`.
    public init(_ segments: [RateSegment], poissonSeed: UInt64? = nil) {
        self.segments = segments
        if let poissonSeed {
            var generator = SplitMix64(seed: poissonSeed)
            target = generator.exponential()
            random = generator
        }
    }

    /// The next arrival, in seconds since the start of the schedule, or nil after its end.
    public mutating func next() -> Double? {
        while index < segments.count {
            let segment = segments[index]
            let total = segment.count(until: segment.seconds)
            let local = target - countAtSegmentStart
            // The tolerance keeps rate × duration exact despite floating-point sums (10/s × 0.3 s).
            if local < total - 1e-9 {
                if var generator = random {
                    target += generator.exponential()
                    random = generator
                } else {
                    target += 1
                }
                return segmentStart + segment.time(forCount: local)
            }
            countAtSegmentStart += total
            segmentStart += segment.seconds
            index += 1
        }
        return nil
    }
}
