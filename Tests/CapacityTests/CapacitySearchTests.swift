import Reporting
import Testing

@testable import Capacity

/// The capacity search's driver, run by a fake step runner (no network): a step is good below a known knee.
struct CapacitySearchTests {
    /// Runs the search against a target that holds its SLOs below `knee`.
    static func search(_ search: CapacitySearch, knee: Double) -> [(rate: Double, good: Bool)] {
        search.run { (_, rate) -> Bool? in rate < knee }
    }

    @Test(arguments: [73.0, 10, 999, 1.5])
    func theSearchBracketsTheKneeWithinItsResolution(knee: Double) throws {
        let results = Self.search(CapacitySearch(start: 20, factor: 2, resolution: 0.05), knee: knee)
        let good = try #require(results.filter(\.good).map(\.rate).max())
        let bad = try #require(results.filter { !$0.good }.map(\.rate).min())
        #expect(good < knee && knee <= bad)
        #expect((bad - good) / good <= 0.05)
        #expect(results.count <= 16)
    }

    @Test func theSearchStepsUpByItsFactorThenBisects() {
        let rates = Self.search(CapacitySearch(start: 20, factor: 2, resolution: 0.05), knee: 73).map(\.rate)
        #expect(Array(rates.prefix(4)) == [20, 40, 80, 60])
        #expect(rates[4] == 70)
    }

    @Test func aBadFirstStepMakesTheSearchStepDown() {
        let rates = Self.search(CapacitySearch(start: 100, factor: 2, resolution: 0.1), knee: 30).map(\.rate)
        #expect(Array(rates.prefix(3)) == [100, 50, 25])
    }

    @Test func theSearchIsBoundedInStepsAndRate() {
        let capped = Self.search(CapacitySearch(start: 10, factor: 2, resolution: 0.01, maxSteps: 5), knee: 1e9)
        #expect(capped.count == 5)
        let ceiling = Self.search(CapacitySearch(start: 10, factor: 3, maxSteps: 50, maxRate: 100), knee: 1e9)
        #expect(ceiling.map(\.rate) == [10, 30, 90, 100])
        let floor = Self.search(CapacitySearch(start: 1, factor: 2, maxSteps: 50, minRate: 0.1), knee: 0)
        #expect(floor.map(\.rate) == [1, 0.5, 0.25, 0.125])
    }

    @Test func anInterruptedStepEndsTheSearch() {
        var calls = 0
        let results = CapacitySearch(start: 10).run { (index, _) -> Bool? in
            calls += 1
            return index == 3 ? nil : true
        }
        #expect(results.count == 2)
        #expect(calls == 3)
    }
}

/// What ended a search, as its report states it.
struct CapacitySearchEndTests {
    @Test func aSearchThatBracketsTheKneeEndsAtItsResolution() {
        let search = CapacitySearch(start: 20, factor: 2, resolution: 0.05)
        #expect(search.end(after: CapacitySearchTests.search(search, knee: 73)) == .resolution)
    }

    @Test func aSearchOutOfStepsBeforeItsResolutionSaysMaxSteps() {
        let search = CapacitySearch(start: 20, factor: 2, resolution: 0.05, maxSteps: 5)
        let results = CapacitySearchTests.search(search, knee: 73)
        #expect(results.map(\.rate) == [20, 40, 80, 60, 70])
        #expect(search.end(after: results) == .maxSteps)
    }

    @Test func aSearchThatReachesItsRateBoundsSaysWhich() {
        let up = CapacitySearch(start: 10, factor: 3, maxSteps: 50, maxRate: 100)
        #expect(up.end(after: CapacitySearchTests.search(up, knee: 1e9)) == .maxRate)
        let down = CapacitySearch(start: 1, factor: 2, maxSteps: 50, minRate: 0.1)
        #expect(down.end(after: CapacitySearchTests.search(down, knee: 0)) == .minRate)
    }

    /// The last step the budget allows may also resolve the knee: then the search resolved, it did not run out.
    @Test func aSearchResolvedOnItsLastAllowedStepSaysResolution() {
        let search = CapacitySearch(start: 20, factor: 2, resolution: 0.35, maxSteps: 4)
        let results = CapacitySearchTests.search(search, knee: 73)
        #expect(results.map(\.rate) == [20, 40, 80, 60])
        #expect(search.end(after: results) == .resolution)
    }

    @Test func anInterruptedSearchHasNoEnd() {
        let search = CapacitySearch(start: 10)
        let results = search.run { (index, _) -> Bool? in index == 3 ? nil : true }
        #expect(search.end(after: results) == nil)
    }
}
