import Foundation
import PayStormTestKit
import Testing

@testable import Reporting

/// The capacity analysis: the Universal Scalability Law fit, where each SLO breaks, the sustainable rate and
/// the search's outcome, and the golden capacity files. Set RECORD_SNAPSHOTS=1 to rewrite Snapshots/.
struct CapacityAnalysisTests {
    static func usl(_ n: Double, lambda: Double, sigma: Double, kappa: Double) -> Double {
        lambda * n / (1 + sigma * (n - 1) + kappa * n * (n - 1))
    }

    @Test(arguments: [(0.05, 0.002, 100.0), (0.2, 0.0005, 12.0), (0.01, 0.0, 50.0), (0.0, 0.01, 1000.0)])
    func fitRecoversTheParametersOfExactData(sigma: Double, kappa: Double, lambda: Double) throws {
        let points = stride(from: 1.0, through: 40, by: 3).map {
            (n: $0, x: Self.usl($0, lambda: lambda, sigma: sigma, kappa: kappa))
        }
        let fit = try #require(USLFit.fit(points))
        #expect(abs(fit.sigma - sigma) < 1e-3)
        #expect(abs(fit.kappa - kappa) < 1e-5)
        #expect(abs(fit.lambda - lambda) / lambda < 1e-3)
        #expect(fit.rSquared > 0.9999)
    }

    @Test func fitRecoversTheParametersThroughNoise() throws {
        // ±3% multiplicative noise from a fixed sequence, so the test is the same on every run.
        let noise = [0.02, -0.03, 0.01, 0.03, -0.01, -0.02, 0.0, 0.025, -0.025, 0.015, -0.015, 0.005]
        let points = noise.enumerated().map { index, e in
            let n = Double(index) * 4 + 1
            return (n: n, x: Self.usl(n, lambda: 100, sigma: 0.05, kappa: 0.002) * (1 + e))
        }
        let fit = try #require(USLFit.fit(points))
        #expect(abs(fit.sigma - 0.05) < 0.03)
        #expect(abs(fit.kappa - 0.002) / 0.002 < 0.25)
        #expect(fit.rSquared > 0.9 && fit.rSquared < 1)
        // N* = √((1 − σ)/κ) = √475 ≈ 21.8.
        let peak = try #require(fit.peakConcurrency)
        #expect(abs(peak - 475.0.squareRoot()) / 475.0.squareRoot() < 0.15)
    }

    @Test func fitNeedsThreeDistinctConcurrencies() {
        #expect(USLFit.fit([(n: 1, x: 10), (n: 2, x: 19), (n: 2, x: 19.5)]) == nil)
        #expect(USLFit.fit([(n: 1, x: 10), (n: 2, x: 19), (n: 0, x: 0), (n: 3, x: -1)]) == nil)
    }

    @Test func linearScalingHasNoPeak() throws {
        let fit = try #require(USLFit.fit([(n: 1, x: 10), (n: 2, x: 20), (n: 4, x: 40), (n: 8, x: 80)]))
        #expect(fit.kappa < 1e-9)
        #expect(fit.peakConcurrency == nil || fit.peakConcurrency! > 1000)
        #expect(fit.rSquared > 0.9999)
    }

    @Test func rSquaredIsLowForDataTheLawCannotFollow() throws {
        let fit = try #require(USLFit.fit([(n: 1, x: 50), (n: 2, x: 5), (n: 3, x: 60), (n: 4, x: 4), (n: 5, x: 70)]))
        #expect(fit.rSquared < 0.5)
    }

    static func step(
        _ index: Int,
        rate: Double,
        p99Millis: Double,
        errorRate: Double = 0,
        limited: String? = nil,
        achieved: Double? = nil
    ) -> CapacityStep {
        let p99 = Int64(p99Millis * 1000)
        let slos = [
            SLOObservation(
                expression: "p99 < 250ms",
                observed: Double(p99),
                observedText: "\(p99Millis)ms",
                bound: 250_000,
                held: p99 < 250_000
            ),
            SLOObservation(
                expression: "errorRate < 0.1%",
                observed: errorRate,
                observedText: String(format: "%.3f%%", errorRate * 100),
                bound: 0.001,
                held: errorRate < 0.001
            ),
        ]
        return CapacityStep(
            index: index,
            rate: rate,
            seconds: 15,
            warmupSeconds: 5,
            folder: "steps/step\(index)",
            offered: rate * 2,
            achieved: achieved ?? rate * 2,
            latency: StepPercentiles(p50: p99 / 4, p90: p99 / 2, p99: p99, p999: p99 * 2),
            service: StepPercentiles(p50: p99 / 5, p90: p99 / 3, p99: p99 / 2, p999: p99),
            meanServiceMicros: Double(p99) / 4,
            errors: errorRate > 0 ? ["non_2xx": Int(errorRate * rate * 20)] : [:],
            late: 0,
            missed: 0,
            inFlight: Int(rate / 10),
            harnessCPU: 0.25,
            harnessLimited: limited,
            slos: slos
        )
    }

    @Test func anSLOBreaksWhereItsObservedValueReachesTheBoundBetweenSteps() {
        let steps = [Self.step(1, rate: 100, p99Millis: 100), Self.step(2, rate: 200, p99Millis: 400)]
        let found = SLOBreak.find("p99 < 250ms", in: steps)
        // 100 ms at 100/s, 400 ms at 200/s: 250 ms is half way.
        #expect(found.rate == 150)
        #expect(found.lastHeld == 100)
        #expect(found.firstBroken == 200)
    }

    @Test func anSLOBrokenAtTheLowestStepHasNoInterpolatedRate() {
        let found = SLOBreak.find("p99 < 250ms", in: [Self.step(1, rate: 100, p99Millis: 300)])
        #expect(found.rate == nil)
        #expect(found.lastHeld == nil)
        #expect(found.firstBroken == 100)
    }

    @Test func anSLOHeldEverywhereHasNoBreak() {
        let found = SLOBreak.find("errorRate < 0.1%", in: [Self.step(1, rate: 100, p99Millis: 300)])
        #expect(found.rate == nil && found.firstBroken == nil && found.lastHeld == 100)
    }

    @Test func harnessLimitedStepsAreNotJudgedForBreaks() {
        let steps = [
            Self.step(1, rate: 100, p99Millis: 100),
            Self.step(2, rate: 200, p99Millis: 900, limited: "harness-limited"),
            Self.step(3, rate: 150, p99Millis: 160),
        ]
        let found = SLOBreak.find("p99 < 250ms", in: steps)
        #expect(found.firstBroken == nil)
        #expect(found.lastHeld == 150)
    }

    @Test func theSustainableRateIsTheHighestGoodStepBelowTheFirstBadOne() {
        let steps = [
            Self.step(1, rate: 100, p99Millis: 50), Self.step(2, rate: 200, p99Millis: 80),
            Self.step(3, rate: 400, p99Millis: 600), Self.step(4, rate: 300, p99Millis: 300),
            Self.step(5, rate: 250, p99Millis: 120),
        ]
        let report = CapacityReport(steps: steps, slos: ["p99 < 250ms", "errorRate < 0.1%"], profile: "p", seed: 1)
        #expect(report.outcome == .sustainable)
        #expect(report.sustainableRate == 250)
        #expect(report.sustainableOffered == 500)
        #expect(report.sentence.hasPrefix("sustainable rate: 250 actions/s"))
    }

    @Test func aHarnessLimitedFirstFailureIsPayStormsCeilingNotTheBackends() {
        let steps = [
            Self.step(1, rate: 1000, p99Millis: 5),
            Self.step(2, rate: 2000, p99Millis: 9000, limited: "harness-limited from 3 s"),
        ]
        let report = CapacityReport(steps: steps, slos: ["p99 < 250ms"], profile: "p", seed: 1)
        #expect(report.outcome == .harnessLimited)
        #expect(report.harnessCeilingRate == 2000)
        #expect(report.sustainableRate == 1000)
        #expect(report.sentence.hasPrefix("PayStorm's own ceiling reached at 2,000 actions/s"))
        #expect(report.sentence.contains("before the backend broke an SLO"))
    }

    /// The objectives decide the rates; the invariants any step failed are said beside them, never hidden by
    /// a good step.
    @Test func invariantsFailedAtSomeStepsAreSaidBesideTheRates() {
        let report = Self.fixedReport
        #expect(report.outcome == .sustainable && report.sustainableRate == 250)
        #expect(report.stepsFailingInvariants.map(\.rate) == [200, 400, 300, 250])
        #expect(report.failedInvariants == ["no-double-grant": 23])
        #expect(
            report.invariantsSentence
                == "invariants failed at 200, 250, 300, 400 actions/s (4 of 6 steps): no-double-grant (23 violations); "
                + "each step's report has the witnesses and their replay lines"
        )
        let clean = CapacityReport(
            steps: [Self.step(1, rate: 10, p99Millis: 3)],
            slos: ["p99 < 250ms"],
            profile: "p",
            seed: 1
        )
        #expect(clean.invariantsSentence == nil && clean.failedInvariants == nil)
    }

    /// With the invariants objective, a step that double-granted is a bad step: the search's rate is the
    /// highest that was both fast enough and right.
    @Test func withTheInvariantsObjectiveTheSustainableRateIsBelowTheFirstViolation() throws {
        var steps = Self.fixedReport.steps
        for index in steps.indices {
            steps[index].slos.append(.invariants(failed: steps[index].failedInvariants ?? [:]))
        }
        let slos = ["p99 < 250ms", "errorRate < 0.1%", SLOObservation.invariantsExpression]
        let report = CapacityReport(steps: steps, slos: slos, profile: "capacity", seed: 42)
        #expect(report.outcome == .sustainable && report.sustainableRate == 100)
        #expect(report.sentence.hasSuffix("at 200 actions/s invariants (no-double-grant (4 violations)) broke"))
        let broken = try #require(report.sloBreaks.first { $0.expression == "invariants" })
        #expect(broken.lastHeld == 100 && broken.firstBroken == 200)
        #expect(report.invariantsSentence != nil, "the violations are still said")
    }

    @Test func outcomesWithoutAGoodOrABadStep() {
        let none = CapacityReport(
            steps: [Self.step(1, rate: 10, p99Millis: 300)],
            slos: ["p99 < 250ms"],
            profile: "p",
            seed: 1
        )
        #expect(none.outcome == .noneSustainable && none.sustainableRate == nil)
        let never = CapacityReport(
            steps: [Self.step(1, rate: 10, p99Millis: 3)],
            slos: ["p99 < 250ms"],
            profile: "p",
            seed: 1
        )
        #expect(never.outcome == .neverBroke && never.sustainableRate == 10)
    }

    /// A search stopped by a signal decided nothing beyond its steps: never "every step met every SLO".
    @Test func anInterruptedSearchSaysSoAndNeverThatEveryStepMetEverySLO() {
        let report = CapacityReport(
            steps: [Self.step(1, rate: 10, p99Millis: 3), Self.step(2, rate: 20, p99Millis: 300)],
            slos: ["p99 < 250ms"],
            profile: "p",
            seed: 1,
            interruptedBy: "SIGTERM"
        )
        #expect(report.outcome == .interrupted)
        #expect(report.interruptedBy == "SIGTERM")
        #expect(
            report.sentence
                == "interrupted (SIGTERM) after 2 steps: the search did not end, so no rate is established; the "
                + "highest step that met every SLO: 10 actions/s; the lowest that broke one: 20 actions/s"
        )
        let clean = CapacityReport(
            steps: [Self.step(1, rate: 10, p99Millis: 3)],
            slos: ["p99 < 250ms"],
            profile: "p",
            seed: 1,
            interruptedBy: "SIGINT"
        )
        #expect(clean.outcome == .interrupted && !clean.sentence.contains("every step met every SLO"))
    }

    /// A fixed search: steps up to a harness-limited step at 400/s, a bisection below it that breaks p99 at 300/s,
    /// and double grants from 200/s up (a dedupe that races only under load); the target had not recovered from
    /// the 400/s step when the 300/s one began.
    static var fixedReport: CapacityReport {
        var steps: [CapacityStep] = []
        for (index, rate) in [50.0, 100, 200, 400, 300, 250].enumerated() {
            let n = rate / 25
            let achieved = min(Self.usl(n, lambda: 50, sigma: 0.02, kappa: 0.004), rate * 2)
            let p99 = rate <= 250 ? 20 + rate / 10 : 400 + rate
            var step = Self.step(
                index + 1,
                rate: rate,
                p99Millis: p99,
                errorRate: rate >= 400 ? 0.01 : 0,
                limited: rate >= 400 ? "harness-limited from 6 s at 790 deliveries/s (engine thread late)" : nil,
                achieved: achieved
            )
            step.failedInvariants = rate >= 200 ? ["no-double-grant": Int(rate) / 50] : [:]
            // The target was still slow when the wait for it ended after the overloaded 400/s step.
            let waited = rate == 300 ? 60 : 0.9
            step.recovery =
                index == 0
                ? nil
                : CapacityRecovery(
                    recovered: rate != 300,
                    waitedSeconds: waited,
                    startedAt: 1_800_000_000 + 30 * Double(index),
                    probes: Int(waited * 5),
                    medianMicros: rate == 300 ? 850_000 : 41_000,
                    quietMicros: 40_000,
                    boundMicros: 105_000
                )
            steps.append(step)
        }
        return CapacityReport(steps: steps, slos: ["p99 < 250ms", "errorRate < 0.1%"], profile: "capacity", seed: 42)
    }

    @Test(arguments: ["capacity.csv", "capacity.html", "capacity.json"])
    func capacityFilesMatchTheirGoldenFiles(name: String) throws {
        let report = Self.fixedReport
        let text =
            switch name {
            case "capacity.csv": CapacityWriter.csv(report)
            case "capacity.html": CapacityWriter.html(report)
            default: CapacityWriter.json(report)
            }
        try expectSnapshot(text, named: name)
    }

    @Test(arguments: [(999.7, "1,000"), (999.4, "999"), (12.345, "12.3"), (1_234_567, "1,234,567"), (0.5, "0.5")])
    func ratesReadTheSameOnEveryLocaleAndNeverInExponents(value: Double, text: String) {
        #expect(CapacityReport.rate(value) == text)
    }

    @Test func theCapacityPageMarksTheKnee() {
        let html = CapacityWriter.html(Self.fixedReport)
        #expect(html.contains("knee 250/s"))
        #expect(html.contains("stroke-dasharray"))
        #expect(html.contains("Universal Scalability Law"))
    }
}
