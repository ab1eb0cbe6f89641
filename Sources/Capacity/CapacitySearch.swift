public import Reporting

/// Chooses the rates of a capacity search: it steps up from ``CapacitySearch/start`` by
/// ``CapacitySearch/factor`` while steps are good (every objective held, PayStorm kept up), then bisects
/// between the highest good rate and the lowest bad one until they are within ``CapacitySearch/resolution``
/// of each other. When the first step is already bad it steps down by the same factor until one is good. It
/// never runs more than ``CapacitySearch/maxSteps`` steps, nor above ``CapacitySearch/maxRate``. A pure
/// value: ``CapacitySearch/next(after:)`` reads only the results so far, so a fake step runner drives it in
/// tests.
public struct CapacitySearch: Sendable, Hashable {
    /// The first rate, actions per second.
    public var start: Double
    /// The multiplier between steps while stepping up (> 1).
    public var factor: Double
    /// The search ends when (bad − good) ÷ good is at most this.
    public var resolution: Double
    /// The most steps the search runs.
    public var maxSteps: Int
    /// The highest rate it tries.
    public var maxRate: Double
    /// The lowest rate it tries while stepping down.
    public var minRate: Double

    /// Creates a search.
    public init(
        start: Double,
        factor: Double = 2,
        resolution: Double = 0.05,
        maxSteps: Int = 16,
        maxRate: Double = 10_000_000,
        minRate: Double = 0.1
    ) {
        self.start = start
        self.factor = factor
        self.resolution = resolution
        self.maxSteps = maxSteps
        self.maxRate = maxRate
        self.minRate = minRate
    }

    /// The next rate to run given the steps so far (rate, and whether it was good), or nil when done.
    public func next(after results: [(rate: Double, good: Bool)]) -> Double? {
        if case .run(let rate) = decision(after: results) { return rate }
        return nil
    }

    /// Why the search stops after these steps, nil while it would run another (an interrupted search's steps
    /// give nil: it did not end).
    public func end(after results: [(rate: Double, good: Bool)]) -> CapacityReport.SearchEnd? {
        if case .stop(let end) = decision(after: results) { return end }
        return nil
    }

    /// The next step, or why there is none.
    private enum Decision {
        case run(Double)
        case stop(CapacityReport.SearchEnd)
    }

    /// What follows the steps so far: the search's own end (resolution, rate bounds) comes before
    /// ``maxSteps``, so that a search whose last allowed step also resolved it says it resolved.
    private func decision(after results: [(rate: Double, good: Bool)]) -> Decision {
        guard !results.isEmpty else { return .run(min(start, maxRate)) }
        let lowestBad = results.filter { !$0.good }.map(\.rate).min()
        let highestGood = results.filter { $0.good && $0.rate < (lowestBad ?? .infinity) }.map(\.rate).max()
        let unbounded: Decision
        switch (highestGood, lowestBad) {
        case (let good?, nil):
            unbounded = good < maxRate ? .run(min(good * factor, maxRate)) : .stop(.maxRate)
        case (nil, let bad?):
            unbounded = bad / factor >= minRate ? .run(bad / factor) : .stop(.minRate)
        case (let good?, let bad?):
            unbounded = (bad - good) / good > resolution ? .run((good + bad) / 2) : .stop(.resolution)
        case (nil, nil):
            unbounded = .stop(.resolution)
        }
        if case .run = unbounded, results.count >= maxSteps { return .stop(.maxSteps) }
        return unbounded
    }

    /// Runs the search: asks `measure` for each rate in turn until ``next(after:)`` says done or `measure`
    /// returns nil (interrupted).
    /// - Parameter measure: runs one step at a rate (its 1-based index given) and says whether it was good.
    /// - Returns: the rates run, in order, with their judgements.
    public func run<Failure: Error>(
        _ measure: (_ index: Int, _ rate: Double) throws(Failure) -> Bool?
    ) throws(Failure) -> [(rate: Double, good: Bool)] {
        var results: [(rate: Double, good: Bool)] = []
        while let rate = next(after: results) {
            guard let good = try measure(results.count + 1, rate) else { break }
            results.append((rate, good))
        }
        return results
    }
}
