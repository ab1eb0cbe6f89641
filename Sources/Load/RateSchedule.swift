internal import Foundation
public import Primitives

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

/// An open-loop rate over time: a sequence of `RateSegment` values (Primitives) (constant, linear ramp,
/// steps, spike, sine), whose integral and its inverse are the one implementation of the schedule math that
/// the simulated world and `paystorm load` share.
///
/// Pure value: ``rate(at:)`` and ``expectedCount(until:)`` are closed-form; ``Pacer`` turns it
/// into intended send times.
///
/// ```swift
/// let schedule = RateSchedule.ramp(from: 10, to: 500, over: .seconds(60))
///     .then(.constant(500, for: .seconds(300)))
/// ```
public struct RateSchedule: Sendable, Equatable {
    /// The segments, played in order.
    public var segments: [RateSegment]
    /// How arrivals are spread.
    public var arrivals: Arrivals

    /// Creates a schedule from segments.
    public init(segments: [RateSegment], arrivals: Arrivals = .uniform) {
        self.segments = segments
        self.arrivals = arrivals
    }

    /// A constant rate.
    public static func constant(_ rate: Double, for duration: Duration) -> RateSchedule {
        RateSchedule(segments: [RateSegment(.constant(rate: rate), seconds: duration.seconds)])
    }

    /// A linear ramp.
    public static func ramp(from: Double, to: Double, over duration: Duration) -> RateSchedule {
        RateSchedule(segments: [RateSegment(.ramp(from: from, to: to), seconds: duration.seconds)])
    }

    /// Constant steps, each lasting `step`.
    public static func steps(_ rates: [Double], each step: Duration) -> RateSchedule {
        RateSchedule(segments: rates.map { RateSegment(.constant(rate: $0), seconds: step.seconds) })
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
        let shape = RateSegment.Shape.spike(base: base, peak: peak, atSeconds: at.seconds, spikeSeconds: length.seconds)
        return RateSchedule(segments: [RateSegment(shape, seconds: total.seconds)])
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
        let shape = RateSegment.Shape.sine(mean: mean, amplitude: amplitude, periodSeconds: period.seconds)
        return RateSchedule(segments: [RateSegment(shape, seconds: duration.seconds)])
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
    public var duration: Duration {
        .nanoseconds(Int64((segments.reduce(0) { $0 + $1.seconds } * 1e9).rounded()))
    }

    /// The largest rate anywhere in the schedule.
    public var peakRate: Double { segments.map(\.peakRate).max() ?? 0 }

    /// The intended rate (requests per second) `elapsed` into the run; 0 after the end.
    public func rate(at elapsed: Duration) -> Double {
        let t = elapsed.seconds
        return t >= 0 ? max(segments.rate(at: t), 0) : 0
    }

    /// The expected number of arrivals in the first `elapsed` of the run.
    public func expectedCount(until elapsed: Duration) -> Double {
        var t = elapsed.seconds
        var total = 0.0
        for segment in segments {
            if t <= 0 { break }
            total += segment.count(until: min(t, segment.seconds))
            t -= segment.seconds
        }
        return total
    }

    /// Checks that every segment is well formed.
    /// - Throws: ``LoadConfigurationError`` naming the first bad segment.
    public func validate() throws(LoadConfigurationError) {
        guard !segments.isEmpty else { throw LoadConfigurationError("the schedule has no segments") }
        for (index, segment) in segments.enumerated() {
            let name = "schedule segment \(index + 1)"
            guard segment.seconds > 0 else { throw LoadConfigurationError("\(name) has no duration") }
            guard segment.peakRate.isFinite, segment.lowestRate.isFinite else {
                throw LoadConfigurationError("\(name) has a non-finite rate")
            }
            guard segment.lowestRate >= 0 else {
                throw LoadConfigurationError("\(name) goes below 0 requests per second")
            }
            if case .sine(_, _, let period) = segment.shape, !(period > 0) {
                throw LoadConfigurationError("\(name) has a sine period of 0")
            }
        }
        guard peakRate > 0 else { throw LoadConfigurationError("the schedule never sends (peak rate 0)") }
        // A schedule intending less than one request would send one at its start and end at once, with an
        // intended rate computed over no time at all: a mistyped rate or duration, refused as such.
        let intended = segments.reduce(0) { $0 + $1.count(until: $1.seconds) }
        guard intended >= 1 else {
            throw LoadConfigurationError(
                "the schedule intends \(String(format: "%g", intended)) requests in all, fewer than one: raise the rate or the duration"
            )
        }
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
        var segments: [RateSegment] = []
        for part in splitTopLevel(text) {
            let item = part.trimmingWhitespace()
            guard let at = item.lastIndex(of: "@") else {
                throw LoadConfigurationError("schedule segment '\(item)' needs '@DURATION'")
            }
            let seconds = try parseDuration(String(item[item.index(after: at)...])).seconds
            let head = item[..<at]
            if head.hasPrefix("sine(") && head.hasSuffix(")") {
                let inner = head.dropFirst(5).dropLast()
                let fields = inner.split(separator: ",").map { $0.trimmingWhitespace() }
                guard fields.count == 3, let mean = Double(fields[0]), let amplitude = Double(fields[1]) else {
                    throw LoadConfigurationError("schedule segment '\(item)': expected sine(MEAN,AMPLITUDE,PERIOD)")
                }
                let period = try parseDuration(fields[2])
                let shape = RateSegment.Shape.sine(mean: mean, amplitude: amplitude, periodSeconds: period.seconds)
                segments.append(RateSegment(shape, seconds: seconds))
            } else if let arrow = head.range(of: "->") {
                guard let from = Double(head[..<arrow.lowerBound].trimmingWhitespace()),
                    let to = Double(head[arrow.upperBound...].trimmingWhitespace())
                else { throw LoadConfigurationError("schedule segment '\(item)': expected FROM->TO@DURATION") }
                segments.append(RateSegment(.ramp(from: from, to: to), seconds: seconds))
            } else {
                guard let rate = Double(head.trimmingWhitespace()) else {
                    throw LoadConfigurationError("schedule segment '\(item)': '\(head)' is not a rate")
                }
                segments.append(RateSegment(.constant(rate: rate), seconds: seconds))
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

/// The longest duration ``parseDuration(_:)`` accepts: a year, the longest any setting allows (a schedule
/// segment), and far below what a `Duration` or a deadline computed from it can hold.
public let longestDuration: Duration = .seconds(365 * 86_400)

/// Parses `250ms`, `1.5s`, `2m`, `1h`, `800us` or `800µs` (a bare number is seconds), at most
/// ``longestDuration``.
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
    // Compared in seconds, before the conversion to whole nanoseconds that traps past 292 years.
    guard value * scale <= longestDuration.seconds else {
        throw LoadConfigurationError("'\(text)' is too long: a duration is at most a year (8760h)")
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
