import Foundation
import PayStormTestKit
import Testing

@testable import Reporting

/// The capacity trend: the median of earlier knees, the drop verdict, reading nights from capacity folders,
/// and the golden trend files. Set RECORD_SNAPSHOTS=1 to rewrite Snapshots/.
struct CapacityTrendTests {
    static func night(
        _ day: Int,
        knee: Double,
        outcome: CapacityReport.Outcome = .sustainable,
        label: String? = nil
    ) -> CapacityNight {
        CapacityNight(
            date: Date(timeIntervalSince1970: 1_796_000_000 + Double(day) * 86_400),
            label: label ?? "night\(day)",
            outcome: outcome,
            knee: knee,
            usl: USLFit(sigma: 0.02 + Double(day) / 1000, kappa: 0.0001, lambda: 40 + Double(day), rSquared: 0.99),
            uslCeiling: knee * 2.5,
            p99AtKnee: knee > 0 ? Int64(120_000 + day * 1_500) : nil,
            folder: "Reports/night\(day)"
        )
    }

    @Test func theMedianIsTheMiddleValueOrTheMeanOfTheTwoMiddleOnes() {
        #expect(CapacityTrend.median([]) == nil)
        #expect(CapacityTrend.median([7]) == 7)
        #expect(CapacityTrend.median([9, 1, 5]) == 5)
        #expect(CapacityTrend.median([400, 100, 300, 200]) == 250)
    }

    @Test func nightsAreOrderedByDateWhateverTheOrderGiven() {
        let trend = CapacityTrend([Self.night(3, knee: 1), Self.night(1, knee: 2), Self.night(2, knee: 3)])
        #expect(trend.nights.map(\.label) == ["night1", "night2", "night3"])
    }

    @Test func aKneeMoreThanTheShareBelowTheMedianDropped() {
        // Earlier knees 500, 480, 520: median 500; 390 is 22% below it.
        let nights = [500.0, 480, 520, 390].enumerated().map { Self.night($0.offset, knee: $0.element) }
        let verdict = CapacityTrend(nights).verdict(drop: 0.2, window: 7)
        #expect(verdict.dropped)
        #expect(verdict.median == 500)
        #expect(verdict.compared == 3)
        #expect(
            verdict.sentence
                == "knee dropped: 390 actions/s on night3 is 22.0% below 500 actions/s, the median of the 3 nights "
                + "before it (allowed drop 20%)"
        )
    }

    @Test func aKneeWithinTheShareHeld() {
        let nights = [500.0, 480, 520, 410].enumerated().map { Self.night($0.offset, knee: $0.element) }
        let verdict = CapacityTrend(nights).verdict(drop: 0.2, window: 7)
        #expect(!verdict.dropped)
        #expect(verdict.sentence.hasPrefix("knee held: 410 actions/s on night3 is 18.0% below 500 actions/s"))
        let higher = CapacityTrend(nights.dropLast() + [Self.night(9, knee: 600)]).verdict(drop: 0.2, window: 7)
        #expect(!higher.dropped && higher.sentence.contains("is 20.0% above 500 actions/s"))
    }

    @Test func onlyTheLastWindowOfEarlierNightsMakeTheMedian() {
        // Three old high nights, then two at 300: with a window of 2 the median is 300, and 280 held.
        let knees = [1000.0, 1000, 1000, 300, 300, 280]
        let nights = knees.enumerated().map { Self.night($0.offset, knee: $0.element) }
        let verdict = CapacityTrend(nights).verdict(drop: 0.2, window: 2)
        #expect(verdict.median == 300 && verdict.compared == 2 && !verdict.dropped)
        #expect(CapacityTrend(nights).verdict(drop: 0.2, window: 7).dropped)
    }

    @Test func aNightWithNoSustainableRateIsAKneeOfZeroAndDrops() {
        let nights = [Self.night(0, knee: 500), Self.night(1, knee: 0, outcome: .noneSustainable)]
        #expect(CapacityTrend(nights).verdict(drop: 0.2, window: 7).dropped)
    }

    @Test func oneNightHasNothingToCompareWith() {
        let verdict = CapacityTrend([Self.night(0, knee: 500)]).verdict(drop: 0.2, window: 7)
        #expect(!verdict.dropped && verdict.median == nil)
        #expect(verdict.sentence == "knee 500 actions/s on night0: no earlier night to compare it with")
    }

    static var goldenTrend: CapacityTrend {
        CapacityTrend([
            night(0, knee: 500), night(1, knee: 480, label: "v1.4, nightly"), night(2, knee: 520),
            night(3, knee: 0, outcome: .noneSustainable), night(4, knee: 390),
        ])
    }

    @Test func trendCSVMatchesItsGoldenFile() throws {
        try expectSnapshot(CapacityTrendWriter.csv(Self.goldenTrend), named: "trend.csv")
    }

    @Test func trendHTMLMatchesItsGoldenFile() throws {
        let trend = Self.goldenTrend
        let html = CapacityTrendWriter.html(trend, verdict: trend.verdict(drop: 0.2, window: 7), drop: 0.2)
        #expect(!html.contains("<script"))
        #expect(html.contains("<svg"))
        try expectSnapshot(html, named: "trend.html")
    }

    @Test func aNightIsReadFromTheCapacityJSONOfAFolderNamedForItsTime() throws {
        try withTemporaryFolder("trend") { root in
            let folder = root.appendingPathComponent("20261130T021500Z-nightly-7-capacity")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let steps = [
                CapacityAnalysisTests.step(1, rate: 100, p99Millis: 50),
                CapacityAnalysisTests.step(2, rate: 200, p99Millis: 80),
                CapacityAnalysisTests.step(3, rate: 400, p99Millis: 600),
            ]
            let report = CapacityReport(steps: steps, slos: ["p99 < 250ms"], profile: "nightly", seed: 7)
            try CapacityWriter.writeAll(report, to: folder)
            let night = try CapacityNight.read(folder, as: "given").get()
            #expect(CapacityTrendWriter.stamp(night.date) == "2026-11-30T02:15:00Z")
            #expect(night.label == "20261130T021500Z-nightly-7-capacity")
            #expect(night.knee == 200 && night.p99AtKnee == 80_000 && night.outcome == .sustainable)
            #expect(night.usl == report.usl && night.uslCeiling == report.uslCeiling)
            #expect(night.folder == "given")
        }
    }

    @Test func theSearchsLabelInCapacityJSONNamesTheNight() throws {
        try withTemporaryFolder("trend") { root in
            var report = CapacityReport(
                steps: [CapacityAnalysisTests.step(1, rate: 100, p99Millis: 50)],
                slos: ["p99 < 250ms"],
                profile: "nightly",
                seed: 7
            )
            report.label = "build 1234"
            try CapacityWriter.writeAll(report, to: root)
            #expect(try CapacityNight.read(root, as: "x").get().label == "build 1234")
            report.label = ""
            try CapacityWriter.writeAll(report, to: root)
            #expect(try CapacityNight.read(root, as: "x").get().label == root.lastPathComponent)
        }
    }

    @Test func aLabelOrCommitInCapacityJSONNamesTheNight() throws {
        try withTemporaryFolder("trend") { root in
            let json = #"{"outcome":"neverBroke","sustainableRate":50,"steps":[],"commit":"abc123"}"#
            try Data(json.utf8).write(to: root.appendingPathComponent("capacity.json"))
            let night = try CapacityNight.read(root, as: "x").get()
            #expect(night.label == "abc123" && night.knee == 50 && night.p99AtKnee == nil)
        }
    }

    @Test func aFolderWithoutCapacityJSONOrOfAnInterruptedSearchIsSkipped() throws {
        try withTemporaryFolder("trend") { root in
            #expect(throws: TrendSkip(folder: "a", reason: "no capacity.json")) {
                try CapacityNight.read(root, as: "a").get()
            }
            let json = #"{"outcome":"interrupted","steps":[]}"#
            try Data(json.utf8).write(to: root.appendingPathComponent("capacity.json"))
            #expect(throws: TrendSkip(folder: "b", reason: "an interrupted search, which establishes no knee")) {
                try CapacityNight.read(root, as: "b").get()
            }
            try Data("{}".utf8).write(to: root.appendingPathComponent("capacity.json"))
            #expect(throws: TrendSkip.self) { try CapacityNight.read(root, as: "c").get() }
        }
    }
}
