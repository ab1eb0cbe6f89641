internal import Foundation

/// Turns a ``RateSchedule`` into intended send times, one at a time.
///
/// Pure arithmetic: the n-th arrival is where the integrated rate reaches n (uniform), or reaches
/// the n-th point of a unit-rate Poisson process (time-changed, so Poisson arrivals follow ramps
/// and sines too). The pacer never looks at the clock, so a slow target cannot slow the schedule.
///
/// ```swift
/// var pacer = Pacer(schedule: .constant(100, for: .seconds(1)))
/// while let intended = pacer.next() { /* 0 s, 0.01 s, … 0.99 s */ }
/// ```
public struct Pacer: Sendable {
    /// The schedule being paced.
    public let schedule: RateSchedule
    /// How many intended times were handed out.
    public private(set) var count = 0

    private var segmentIndex = 0
    private var segmentStart = 0.0
    private var countAtSegmentStart = 0.0
    private var target = 0.0
    private var random: SplitMix64?

    /// Creates a pacer at the start of `schedule`.
    public init(schedule: RateSchedule) {
        self.schedule = schedule
        if case .poisson(let seed) = schedule.arrivals {
            var generator = SplitMix64(seed: seed)
            target = generator.nextExponential()
            random = generator
        }
    }

    /// The intended offset (from the run's start) of the next arrival, or nil after the end.
    public mutating func next() -> Duration? {
        while segmentIndex < schedule.segments.count {
            let segment = schedule.segments[segmentIndex]
            let length = segment.duration.seconds
            let total = segment.count(until: length)
            let local = target - countAtSegmentStart
            // The tolerance keeps rate × duration exact despite floating-point sums (100 × 0.3 s).
            if local < total - 1e-9 {
                let seconds = segmentStart + segment.time(forCount: local)
                advanceTarget()
                count += 1
                return .nanoseconds(Int64((seconds * 1e9).rounded()))
            }
            countAtSegmentStart += total
            segmentStart += length
            segmentIndex += 1
        }
        return nil
    }

    private mutating func advanceTarget() {
        if var generator = random {
            target += generator.nextExponential()
            random = generator
        } else {
            target += 1
        }
    }
}

/// A small seeded generator (SplitMix64), so that Poisson arrivals replay from `--seed`.
public struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64

    /// Creates a generator from a seed.
    public init(seed: UInt64) { state = seed }

    /// The next 64 random bits.
    public mutating func next() -> UInt64 {
        state &+= 0x9e37_79b9_7f4a_7c15
        var z = state
        z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
        z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
        return z ^ (z >> 31)
    }

    /// An exponential variate with mean 1.
    mutating func nextExponential() -> Double {
        // 53 random bits in (0, 1]; never 0, so the logarithm is finite.
        let unit = (Double(next() >> 11) + 1) / 9_007_199_254_740_992
        return -log(unit)
    }
}
