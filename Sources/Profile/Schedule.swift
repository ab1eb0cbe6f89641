import Foundation

/// One segment of the rate schedule: new actions per second over ``seconds``. Plain data; ``rate(at:)``
/// evaluates it.
public struct RateSegment: Sendable, Hashable, Decodable {
    /// The shapes of a segment.
    public enum Shape: Sendable, Hashable {
        /// A constant rate.
        case constant(rate: Double)
        /// A linear ramp from one rate to another.
        case ramp(from: Double, to: Double)
        /// `count` equal steps from one rate to another.
        case steps(from: Double, to: Double, count: Int)
        /// `base`, jumping to `peak` for `spikeSeconds` starting at `atSeconds` into the segment.
        case spike(base: Double, peak: Double, atSeconds: Double, spikeSeconds: Double)
        /// `mean + amplitude · sin(2π t / periodSeconds)`.
        case sine(mean: Double, amplitude: Double, periodSeconds: Double)
    }
    /// The shape.
    public var shape: Shape
    /// How long the segment lasts, in seconds.
    public var seconds: Double

    /// The rates (actions per second) a segment may name.
    public static let rateBounds = 0.0...10_000_000
    /// How long a segment may last, in seconds: a millisecond to a year.
    public static let secondsBounds = 0.001...31_536_000.0

    /// Creates a segment.
    public init(_ shape: Shape, seconds: Double) {
        self.shape = shape
        self.seconds = seconds
    }

    /// The rate (actions per second) `t` seconds into this segment.
    public func rate(at t: Double) -> Double {
        switch shape {
        case .constant(let rate):
            return rate
        case .ramp(let from, let to):
            return from + (to - from) * min(max(t / seconds, 0), 1)
        case .steps(let from, let to, let count):
            let step = min(Int(t / seconds * Double(count)), count - 1)
            return count == 1 ? from : from + (to - from) * Double(step) / Double(count - 1)
        case .spike(let base, let peak, let at, let length):
            return t >= at && t < at + length ? peak : base
        case .sine(let mean, let amplitude, let period):
            return max(0, mean + amplitude * sin(2 * Double.pi * t / period))
        }
    }

    /// The highest rate the segment reaches.
    public var peakRate: Double {
        switch shape {
        case .constant(let rate): rate
        case .ramp(let from, let to), .steps(let from, let to, _): max(from, to)
        case .spike(let base, let peak, _, _): max(base, peak)
        case .sine(let mean, let amplitude, _): mean + abs(amplitude)
        }
    }

    /// The lowest rate the segment reaches (below 0 only for a malformed segment, which validation refuses).
    public var lowestRate: Double {
        switch shape {
        case .constant(let rate): rate
        case .ramp(let from, let to), .steps(let from, let to, _): min(from, to)
        case .spike(let base, let peak, _, _): min(base, peak)
        case .sine(let mean, let amplitude, _): mean - abs(amplitude)
        }
    }

    /// Strict decoding; `kind` selects the shape and its keys.
    public init(from decoder: any Decoder) throws {
        let all = [
            "kind", "seconds", "rate", "from", "to", "count", "base", "peak", "atSeconds", "spikeSeconds", "mean",
            "amplitude", "periodSeconds",
        ]
        let probe = try Fields(decoder, allowed: all)
        let kind = try probe.choice("kind", ["constant", "ramp", "steps", "spike", "sine"], default: nil)
        let keys: [String] =
            switch kind {
            case "constant": ["rate"]
            case "ramp": ["from", "to"]
            case "steps": ["from", "to", "count"]
            case "spike": ["base", "peak", "atSeconds", "spikeSeconds"]
            default: ["mean", "amplitude", "periodSeconds"]
            }
        let f = try Fields(decoder, allowed: ["kind", "seconds"] + keys)
        seconds = try f.number("seconds", in: Self.secondsBounds, default: nil)
        func rate(_ key: String) throws -> Double { try f.number(key, in: Self.rateBounds, default: nil) }
        switch kind {
        case "constant":
            shape = .constant(rate: try rate("rate"))
        case "ramp":
            shape = .ramp(from: try rate("from"), to: try rate("to"))
        case "steps":
            shape = .steps(
                from: try rate("from"),
                to: try rate("to"),
                count: Int(try f.integer("count", in: 1...10_000, default: nil))
            )
        case "spike":
            let at = try f.number("atSeconds", in: 0...seconds, default: 0)
            let length = try f.number("spikeSeconds", in: 0.001...seconds, default: nil)
            shape = .spike(base: try rate("base"), peak: try rate("peak"), atSeconds: at, spikeSeconds: length)
        default:
            let mean = try rate("mean")
            let amplitude = try f.number("amplitude", in: 0...mean, default: nil)
            shape = .sine(
                mean: mean,
                amplitude: amplitude,
                periodSeconds: try f.number("periodSeconds", in: Self.secondsBounds, default: nil)
            )
        }
    }
}

extension RateSegment {
    /// Actions the segment intends in its first `t` seconds: the integral of ``rate(at:)`` from 0 to `t`.
    public func count(until t: Double) -> Double {
        let t = min(max(t, 0), seconds)
        switch shape {
        case .constant(let rate):
            return rate * t
        case .ramp(let from, let to):
            return from * t + (to - from) * t * t / (2 * seconds)
        case .sine(let mean, let amplitude, let period):
            // The rate is never clipped at 0: decoding keeps the amplitude at most the mean.
            let omega = 2 * Double.pi / period
            return mean * t + amplitude / omega * (1 - cos(omega * t))
        case .steps, .spike:
            var total = 0.0
            var start = 0.0
            for (length, rate) in pieces {
                total += rate * min(max(t - start, 0), length)
                start += length
            }
            return total
        }
    }

    /// The time from which ``count(until:)`` grows past `target` (where it reaches `target` and the rate
    /// is above 0), or ``seconds`` when it never does within the segment. Inverting the integral (rather
    /// than stepping by `1 / rate`) is what keeps a rate of 0 silent and a ramp from 0 exact.
    public func time(forCount target: Double) -> Double {
        switch shape {
        case .constant(let rate):
            // No array of pieces on this path: the load engine's pacer calls it for every request.
            return rate > 0 ? min(target / rate, seconds) : seconds
        case .ramp(let from, let to):
            let slope = (to - from) / seconds
            if abs(slope) < 1e-12 { return from > 0 ? min(target / from, seconds) : seconds }
            // slope/2 · t² + from · t = target, for the root in [0, seconds].
            let discriminant = from * from + 2 * slope * target
            guard discriminant >= 0 else { return seconds }
            return min(max((-from + discriminant.squareRoot()) / slope, 0), seconds)
        case .sine:
            // Non-decreasing (the rate is ≥ 0): bisection to well below a microsecond.
            var low = 0.0
            var high = seconds
            for _ in 0..<80 where high - low > 1e-10 {
                let middle = (low + high) / 2
                if count(until: middle) < target { low = middle } else { high = middle }
            }
            return high
        case .steps, .spike:
            var remaining = target
            var start = 0.0
            for (length, rate) in pieces {
                let inPiece = rate * length
                // Strictly inside: an arrival exactly at a piece's end belongs where the rate resumes.
                if rate > 0 && remaining < inPiece { return min(start + max(remaining, 0) / rate, seconds) }
                remaining -= inPiece
                start += length
            }
            return seconds
        }
    }

    /// A piecewise-constant shape as (length, rate) pieces covering the segment.
    private var pieces: [(length: Double, rate: Double)] {
        switch shape {
        case .steps(let from, let to, let count):
            guard count > 1 else { return [(seconds, from)] }
            return (0..<count).map { step in
                (seconds / Double(count), from + (to - from) * Double(step) / Double(count - 1))
            }
        case .spike(let base, let peak, let at, let length):
            let end = min(at + length, seconds)
            return [(at, base), (end - at, peak), (seconds - end, base)]
        case .constant, .ramp, .sine:
            return []
        }
    }
}

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

extension SplitMix64 {
    /// An exponential variate with mean 1 (the gap between two points of a unit-rate Poisson process).
    public mutating func exponential() -> Double {
        // 53 random bits in (0, 1]; never 0, so the logarithm is finite.
        let unit = (Double(next() >> 11) + 1) / 9_007_199_254_740_992
        return -log(unit)
    }
}

extension Array where Element == RateSegment {
    /// The rate at `t` seconds since the start of the schedule (0 after its end).
    public func rate(at t: Double) -> Double {
        var start = 0.0
        for segment in self {
            if t < start + segment.seconds { return segment.rate(at: t - start) }
            start += segment.seconds
        }
        return 0
    }
}
