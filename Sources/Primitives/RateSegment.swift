internal import Foundation

/// One segment of the rate schedule: new actions per second over ``seconds``. Plain data; ``rate(at:)``
/// evaluates it. Profile decodes it from a profile's `schedule`; Load builds it from `--schedule`.
public struct RateSegment: Sendable, Hashable {
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
