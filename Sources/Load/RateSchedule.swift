internal import Foundation
internal import Profile

/// Why a schedule, duration or threshold text is invalid.
public struct LoadConfigurationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// One line naming the problem.
    public var message: String

    /// Creates an error.
    public init(_ message: String) { self.message = message }

    public var description: String { message }
}

/// How arrivals are spread within a rate.
public enum Arrivals: Sendable, Equatable {
    /// Evenly spaced: the n-th arrival is where the integrated rate reaches n.
    case uniform
    /// A Poisson process with the schedule's rate, from a seeded generator (replayable).
    case poisson(seed: UInt64)
}

/// An open-loop rate over time: a sequence of segments (constant, linear ramp, sine).
///
/// Pure value: ``rate(at:)`` and ``expectedCount(until:)`` are closed-form; ``Pacer`` turns it
/// into intended send times.
///
/// ```swift
/// let schedule = RateSchedule.ramp(from: 10, to: 500, over: .seconds(60))
///     .then(.constant(500, for: .seconds(300)))
/// ```
public struct RateSchedule: Sendable, Equatable {
    /// One piece of a schedule.
    public enum Segment: Sendable, Equatable {
        /// `rate` requests per second for `duration`.
        case constant(rate: Double, duration: Duration)
        /// From `from` to `to` requests per second, linearly, over `duration`.
        case ramp(from: Double, to: Double, duration: Duration)
        /// `mean + amplitude × sin(2πt / period)` requests per second for `duration`.
        case sine(mean: Double, amplitude: Double, period: Duration, duration: Duration)

        /// The segment's length.
        public var duration: Duration {
            switch self {
            case .constant(_, let duration), .ramp(_, _, let duration), .sine(_, _, _, let duration):
                return duration
            }
        }

        /// The rate `t` seconds into the segment.
        func rate(at t: Double) -> Double {
            switch self {
            case .constant(let rate, _):
                return rate
            case .ramp(let from, let to, let duration):
                return from + (to - from) * t / duration.seconds
            case .sine(let mean, let amplitude, let period, _):
                return mean + amplitude * sin(2 * Double.pi * t / period.seconds)
            }
        }

        /// The same segment as a profile's, whose integral and its inverse the pacer uses: one
        /// implementation of the schedule math for `paystorm load` and the simulated world.
        private var profileSegment: RateSegment {
            switch self {
            case .constant(let rate, let duration):
                RateSegment(.constant(rate: rate), seconds: duration.seconds)
            case .ramp(let from, let to, let duration):
                RateSegment(.ramp(from: from, to: to), seconds: duration.seconds)
            case .sine(let mean, let amplitude, let period, let duration):
                RateSegment(
                    .sine(mean: mean, amplitude: amplitude, periodSeconds: period.seconds),
                    seconds: duration.seconds
                )
            }
        }

        /// The integral of the rate over the first `t` seconds.
        func count(until t: Double) -> Double { profileSegment.count(until: t) }

        /// The time at which the integral reaches `target` (0 ≤ target ≤ count(until: duration)).
        func time(forCount target: Double) -> Double { profileSegment.time(forCount: target) }

        /// The largest rate in the segment.
        var peakRate: Double {
            switch self {
            case .constant(let rate, _): return rate
            case .ramp(let from, let to, _): return max(from, to)
            case .sine(let mean, let amplitude, _, _): return mean + abs(amplitude)
            }
        }

        /// The smallest rate in the segment.
        var lowestRate: Double {
            switch self {
            case .constant(let rate, _): return rate
            case .ramp(let from, let to, _): return min(from, to)
            case .sine(let mean, let amplitude, _, _): return mean - abs(amplitude)
            }
        }
    }

    /// The segments, played in order.
    public var segments: [Segment]
    /// How arrivals are spread.
    public var arrivals: Arrivals

    /// Creates a schedule from segments.
    public init(segments: [Segment], arrivals: Arrivals = .uniform) {
        self.segments = segments
        self.arrivals = arrivals
    }

    /// A constant rate.
    public static func constant(_ rate: Double, for duration: Duration) -> RateSchedule {
        RateSchedule(segments: [.constant(rate: rate, duration: duration)])
    }

    /// A linear ramp.
    public static func ramp(from: Double, to: Double, over duration: Duration) -> RateSchedule {
        RateSchedule(segments: [.ramp(from: from, to: to, duration: duration)])
    }

    /// Constant steps, each lasting `step`.
    public static func steps(_ rates: [Double], each step: Duration) -> RateSchedule {
        RateSchedule(segments: rates.map { .constant(rate: $0, duration: step) })
    }

    /// `base`, then `peak` for `length` starting at `at`, then `base` until `total`.
    public static func spike(
        base: Double,
        peak: Double,
        at: Duration,
        length: Duration,
        total: Duration
    )
        -> RateSchedule
    {
        var segments: [Segment] = []
        if at > .zero { segments.append(.constant(rate: base, duration: at)) }
        segments.append(.constant(rate: peak, duration: length))
        let rest = total - at - length
        if rest > .zero { segments.append(.constant(rate: base, duration: rest)) }
        return RateSchedule(segments: segments)
    }

    /// A sine wave around `mean`.
    public static func sine(
        mean: Double,
        amplitude: Double,
        period: Duration,
        for duration: Duration
    )
        -> RateSchedule
    {
        RateSchedule(segments: [.sine(mean: mean, amplitude: amplitude, period: period, duration: duration)])
    }

    /// Several schedules played one after another (arrivals of the first).
    public static func sequence(_ parts: [RateSchedule]) -> RateSchedule {
        RateSchedule(segments: parts.flatMap(\.segments), arrivals: parts.first?.arrivals ?? .uniform)
    }

    /// This schedule followed by `next`.
    public func then(_ next: RateSchedule) -> RateSchedule {
        RateSchedule(segments: segments + next.segments, arrivals: arrivals)
    }

    /// The same schedule with other arrivals.
    public func with(arrivals: Arrivals) -> RateSchedule {
        RateSchedule(segments: segments, arrivals: arrivals)
    }

    /// The total length.
    public var duration: Duration { segments.reduce(.zero) { $0 + $1.duration } }

    /// The largest rate anywhere in the schedule.
    public var peakRate: Double { segments.map(\.peakRate).max() ?? 0 }

    /// The intended rate (requests per second) `elapsed` into the run; 0 after the end.
    public func rate(at elapsed: Duration) -> Double {
        var t = elapsed.seconds
        guard t >= 0 else { return 0 }
        for segment in segments {
            let length = segment.duration.seconds
            if t < length { return max(segment.rate(at: t), 0) }
            t -= length
        }
        return 0
    }

    /// The expected number of arrivals in the first `elapsed` of the run.
    public func expectedCount(until elapsed: Duration) -> Double {
        var t = elapsed.seconds
        var total = 0.0
        for segment in segments {
            let length = segment.duration.seconds
            if t <= 0 { break }
            total += segment.count(until: min(t, length))
            t -= length
        }
        return total
    }

    /// Checks that every segment is well formed.
    /// - Throws: ``LoadConfigurationError`` naming the first bad segment.
    public func validate() throws(LoadConfigurationError) {
        guard !segments.isEmpty else { throw LoadConfigurationError("the schedule has no segments") }
        for (index, segment) in segments.enumerated() {
            let name = "schedule segment \(index + 1)"
            guard segment.duration > .zero else { throw LoadConfigurationError("\(name) has no duration") }
            guard segment.peakRate.isFinite, segment.lowestRate.isFinite else {
                throw LoadConfigurationError("\(name) has a non-finite rate")
            }
            guard segment.lowestRate >= 0 else {
                throw LoadConfigurationError("\(name) goes below 0 requests per second")
            }
            if case .sine(_, _, let period, _) = segment, period <= .zero {
                throw LoadConfigurationError("\(name) has a sine period of 0")
            }
        }
        guard peakRate > 0 else { throw LoadConfigurationError("the schedule never sends (peak rate 0)") }
    }

    /// Says, before the run, whether `maxInFlight` can sustain the peak rate when responses take
    /// `expectedLatency` (Little's law: in flight = rate × latency).
    /// - Returns: one line describing the shortfall, or nil when the cap suffices.
    public func capacityWarning(maxInFlight: Int, expectedLatency: Duration) -> String? {
        let needed = peakRate * expectedLatency.seconds
        guard needed > Double(maxInFlight) else { return nil }
        return "peak rate \(formatRate(peakRate))/s with \(expectedLatency) responses needs about "
            + "\(Int(needed.rounded(.up))) requests in flight, above the cap of \(maxInFlight): "
            + "expect missed sends"
    }

    /// Parses the `--schedule` syntax: segments separated by `,`, each one of
    /// `R@D` (constant), `R1->R2@D` (ramp) or `sine(MEAN,AMPLITUDE,PERIOD)@D`.
    ///
    /// Examples: `500@10s`, `10->500@1m,500@5m`, `100@30s,1000@5s,100@30s` (a spike),
    /// `sine(200,100,20s)@2m`.
    /// - Throws: ``LoadConfigurationError`` naming the bad segment.
    public static func parse(
        _ text: String,
        arrivals: Arrivals = .uniform
    ) throws(LoadConfigurationError)
        -> RateSchedule
    {
        var segments: [Segment] = []
        for part in splitTopLevel(text) {
            let item = part.trimmingWhitespace()
            guard let at = item.lastIndex(of: "@") else {
                throw LoadConfigurationError("schedule segment '\(item)' needs '@DURATION'")
            }
            let duration = try parseDuration(String(item[item.index(after: at)...]))
            let head = item[..<at]
            if head.hasPrefix("sine(") && head.hasSuffix(")") {
                let inner = head.dropFirst(5).dropLast()
                let fields = inner.split(separator: ",").map { $0.trimmingWhitespace() }
                guard fields.count == 3, let mean = Double(fields[0]), let amplitude = Double(fields[1]) else {
                    throw LoadConfigurationError("schedule segment '\(item)': expected sine(MEAN,AMPLITUDE,PERIOD)")
                }
                let period = try parseDuration(fields[2])
                segments.append(.sine(mean: mean, amplitude: amplitude, period: period, duration: duration))
            } else if let arrow = head.range(of: "->") {
                guard let from = Double(head[..<arrow.lowerBound].trimmingWhitespace()),
                    let to = Double(head[arrow.upperBound...].trimmingWhitespace())
                else { throw LoadConfigurationError("schedule segment '\(item)': expected FROM->TO@DURATION") }
                segments.append(.ramp(from: from, to: to, duration: duration))
            } else {
                guard let rate = Double(head.trimmingWhitespace()) else {
                    throw LoadConfigurationError("schedule segment '\(item)': '\(head)' is not a rate")
                }
                segments.append(.constant(rate: rate, duration: duration))
            }
        }
        let schedule = RateSchedule(segments: segments, arrivals: arrivals)
        try schedule.validate()
        return schedule
    }

    /// Splits on commas outside parentheses.
    private static func splitTopLevel(_ text: String) -> [String] {
        var parts: [String] = []
        var current = ""
        var depth = 0
        for character in text {
            if character == "(" { depth += 1 }
            if character == ")" { depth -= 1 }
            if character == "," && depth == 0 {
                parts.append(current)
                current = ""
            } else {
                current.append(character)
            }
        }
        parts.append(current)
        return parts
    }
}

/// Parses `250ms`, `1.5s`, `2m`, `1h`, `800us` or `800µs` (a bare number is seconds).
/// - Throws: ``LoadConfigurationError`` naming the text.
public func parseDuration(_ text: String) throws(LoadConfigurationError) -> Duration {
    let trimmed = text.trimmingWhitespace()
    let units: [(String, Double)] = [
        ("ms", 1e-3), ("us", 1e-6), ("µs", 1e-6), ("ns", 1e-9), ("s", 1), ("m", 60), ("h", 3600),
    ]
    var scale = 1.0
    var number = Substring(trimmed)
    for (suffix, factor) in units where trimmed.hasSuffix(suffix) {
        scale = factor
        number = trimmed.dropLast(suffix.count)
        break
    }
    guard let value = Double(number), value.isFinite, value >= 0 else {
        throw LoadConfigurationError("'\(text)' is not a duration (examples: 250ms, 10s, 2m)")
    }
    return .nanoseconds(Int64((value * scale * 1e9).rounded()))
}

func formatRate(_ rate: Double) -> String {
    rate == rate.rounded() ? String(Int(rate)) : String(format: "%.1f", rate)
}

extension StringProtocol {
    func trimmingWhitespace() -> String {
        String(drop(while: { $0.isWhitespace }).reversed().drop(while: { $0.isWhitespace }).reversed())
    }
}
