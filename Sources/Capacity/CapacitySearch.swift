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
        guard !results.isEmpty else { return min(start, maxRate) }
        guard results.count < maxSteps else { return nil }
        let lowestBad = results.filter { !$0.good }.map(\.rate).min()
        let highestGood = results.filter { $0.good && $0.rate < (lowestBad ?? .infinity) }.map(\.rate).max()
        switch (highestGood, lowestBad) {
        case (let good?, nil):
            guard good < maxRate else { return nil }
            return min(good * factor, maxRate)
        case (nil, let bad?):
            let lower = bad / factor
            return lower >= minRate ? lower : nil
        case (let good?, let bad?):
            guard (bad - good) / good > resolution else { return nil }
            return (good + bad) / 2
        case (nil, nil):
            return nil
        }
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
