import Primitives

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

    /// The arrival times of Primitives, the same pacer the simulated world uses.
    private var arrivals: ArrivalTimes

    /// Creates a pacer at the start of `schedule`.
    public init(schedule: RateSchedule) {
        self.schedule = schedule
        var seed: UInt64?
        if case .poisson(let poissonSeed) = schedule.arrivals { seed = poissonSeed }
        arrivals = ArrivalTimes(schedule.segments, poissonSeed: seed)
    }

    /// The intended offset (from the run's start) of the next arrival, or nil after the end.
    public mutating func next() -> Duration? {
        guard let seconds = arrivals.next() else { return nil }
        count += 1
        return .nanoseconds(Int64((seconds * 1e9).rounded()))
    }
}
