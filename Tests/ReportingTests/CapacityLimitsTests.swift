import Foundation
import Testing

@testable import Reporting

/// What a capacity report says about the limits of what it found: the Universal Scalability Law's ceiling beside
/// the knee, a search cut short by `--max-steps`, and an interrupted search that claims no rate.
struct CapacityLimitsTests {
    /// Good steps on X(N) = 100N / (1 + 0.2(N − 1)), whose ceiling is λ/σ = 500 deliveries/s, two deliveries per
    /// action, then a step on the same curve at 300 actions/s that breaks p99.
    static var coherentSteps: [CapacityStep] {
        var steps = [1.0, 2, 4, 8, 16].enumerated().map { index, n in
            let x = CapacityAnalysisTests.usl(n, lambda: 100, sigma: 0.2, kappa: 0)
            var step = CapacityAnalysisTests.step(index + 1, rate: x / 2, p99Millis: 3, achieved: x)
            step.meanServiceMicros = n / x * 1_000_000
            return step
        }
        let x = CapacityAnalysisTests.usl(32, lambda: 100, sigma: 0.2, kappa: 0)
        var broken = CapacityAnalysisTests.step(6, rate: 300, p99Millis: 400, achieved: x)
        broken.meanServiceMicros = 32 / x * 1_000_000
        steps.append(broken)
        return steps
    }

    @Test func theCeilingIsLambdaOverSigmaWithoutCoherencyAndThePeakWithIt() throws {
        #expect(USLFit(sigma: 0.2, kappa: 0, lambda: 100, rSquared: 1).ceiling == 500)
        let peaked = USLFit(sigma: 0.05, kappa: 0.002, lambda: 100, rSquared: 1)
        #expect(peaked.ceiling == peaked.peakThroughput && peaked.ceiling != nil)
        #expect(USLFit(sigma: 0, kappa: 0, lambda: 100, rSquared: 1).ceiling == nil)
    }

    @Test func theReportSaysTheCeilingBesideTheKnee() throws {
        let report = CapacityReport(steps: Self.coherentSteps, slos: ["p99 < 250ms"], profile: "p", seed: 1)
        let ceiling = try #require(report.uslCeiling)
        #expect(abs(ceiling - 500) / 500 < 0.01, "\(report.usl.debugDescription)")
        let actions = try #require(report.uslCeilingRate)
        #expect(abs(actions - 250) / 250 < 0.01)
        let sentence = try #require(report.ceilingSentence)
        #expect(sentence.hasPrefix("USL ceiling: 500 deliveries/s (λ/σ, as κ is 0), about 250 actions/s; the knee, "))
        #expect(CapacityWriter.json(report).contains("\"uslCeiling\" : "))
        #expect(CapacityWriter.html(report).contains(sentence))
        #expect(CapacityWriter.html(report).contains("USL ceiling/s"))
    }

    @Test func aSearchStoppedByMaxStepsSaysItNeverReachedItsResolution() {
        let steps = [
            CapacityAnalysisTests.step(1, rate: 300, p99Millis: 3),
            CapacityAnalysisTests.step(2, rate: 600, p99Millis: 3),
            CapacityAnalysisTests.step(3, rate: 1200, p99Millis: 400),
            CapacityAnalysisTests.step(4, rate: 900, p99Millis: 400),
        ]
        let report = CapacityReport(steps: steps, slos: ["p99 < 250ms"], profile: "p", seed: 1, searchEnd: .maxSteps)
        #expect(report.outcome == .sustainable && report.sustainableRate == 600)
        #expect(
            report.sentence.hasSuffix(
                "; stopped by --max-steps before --resolution: the knee lies between 600 and 900 actions/s"
            ),
            "\(report.sentence)"
        )
        #expect(CapacityWriter.json(report).contains("\"searchEnd\" : \"maxSteps\""))
        let resolved = CapacityReport(
            steps: steps,
            slos: ["p99 < 250ms"],
            profile: "p",
            seed: 1,
            searchEnd: .resolution
        )
        #expect(!resolved.sentence.contains("--max-steps"))
    }

    @Test func aSearchStoppedByMaxStepsBeforeAnythingBrokeSaysSo() {
        let steps = [CapacityAnalysisTests.step(1, rate: 25, p99Millis: 3)]
        let report = CapacityReport(steps: steps, slos: ["p99 < 250ms"], profile: "p", seed: 1, searchEnd: .maxSteps)
        #expect(report.outcome == .neverBroke)
        #expect(
            report.sentence
                == "every step met every SLO up to 25 actions/s; stopped by --max-steps before any step broke an SLO: "
                + "the sustainable rate is at least that"
        )
    }

    /// An interrupted search ended nowhere: no search end, no ceiling beside a knee, no claim of a rate.
    @Test func anInterruptedSearchClaimsNoRateNorCeiling() {
        let report = CapacityReport(
            steps: Self.coherentSteps,
            slos: ["p99 < 250ms"],
            profile: "p",
            seed: 1,
            interruptedBy: "SIGINT",
            searchEnd: .maxSteps
        )
        #expect(report.outcome == .interrupted && report.searchEnd == nil && report.sustainableRate == nil)
        #expect(report.ceilingSentence == nil)
        #expect(!report.sentence.contains("every step met every SLO") && !report.sentence.contains("--max-steps"))
    }
}
