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
        seconds = try f.number("seconds", in: 0.001...31_536_000, default: nil)
        let maxRate = 10_000_000.0
        func rate(_ key: String) throws -> Double { try f.number(key, in: 0...maxRate, default: nil) }
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
                periodSeconds: try f.number("periodSeconds", in: 0.001...31_536_000, default: nil)
            )
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
