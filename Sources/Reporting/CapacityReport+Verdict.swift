import Foundation

extension CapacityReport {
    /// What ended a search that ran to its end.
    public enum SearchEnd: String, Codable, Sendable, Hashable {
        /// The good and bad rates came within `--resolution` of each other.
        case resolution
        /// `--max-steps` steps ran before the search resolved the knee (or before any step broke, or held).
        case maxSteps
        /// Every step up to `--max-rate` met every objective.
        case maxRate
        /// Stepping down reached the lowest rate the search tries without a good step.
        case minRate
    }

    /// The outcome, its sentence, the sustainable step and PayStorm's ceiling, from the steps.
    static func verdict(
        _ steps: [CapacityStep],
        interruptedBy: String?,
        searchEnd: SearchEnd?
    ) -> (outcome: Outcome, sentence: String, sustainable: CapacityStep?, harnessCeilingRate: Double?) {
        let sorted = steps.sorted { $0.rate < $1.rate }
        let lowestBad = sorted.first { !$0.isGood }
        let sustainable = sorted.last { $0.isGood && $0.rate < (lowestBad?.rate ?? .infinity) }
        if let interruptedBy {
            let done = "\(steps.count) step\(steps.count == 1 ? "" : "s")"
            let held = sorted.last { $0.isGood }.map {
                "; the highest step that met every SLO: \(rate($0.rate)) actions/s"
            }
            let broke = lowestBad.map { "; the lowest that broke one: \(rate($0.rate)) actions/s" }
            let sentence =
                "interrupted (\(interruptedBy)) after \(done): the search did not end, so no rate is established"
                + (held ?? "") + (broke ?? "")
            // A rate the search did not finish establishing is not stated as sustainable anywhere.
            return (.interrupted, sentence, nil, nil)
        }
        let stopped = searchEnd == .maxSteps ? stoppedByMaxSteps(good: sustainable, bad: lowestBad) : ""
        guard let lowestBad else {
            let limit = searchEnd == .maxSteps ? "" : ", the search's limit"
            let sentence =
                "every step met every SLO up to \(sustainable.map { rate($0.rate) } ?? "0") actions/s\(limit)"
                + "\(stopped): the sustainable rate is at least that"
            return (.neverBroke, sentence, sustainable, nil)
        }
        let broken = lowestBad.slos.filter { !$0.held }.map { "\($0.expression) (\($0.observedText))" }
            .joined(separator: ", ")
        if let limit = lowestBad.harnessLimited {
            let sentence =
                "PayStorm's own ceiling reached at \(rate(lowestBad.rate)) actions/s (\(limit)) before the backend "
                + "broke an SLO; the backend sustained at least \(sustainable.map { rate($0.rate) } ?? "0") actions/s"
            return (.harnessLimited, sentence + stopped, sustainable, lowestBad.rate)
        }
        guard let sustainable else {
            let sentence = "no step met every SLO: at the lowest, \(rate(lowestBad.rate)) actions/s, \(broken) broke"
            return (.noneSustainable, sentence + stopped, nil, nil)
        }
        let sentence =
            "sustainable rate: \(rate(sustainable.rate)) actions/s (\(rate(sustainable.offered)) deliveries/s "
            + "offered, \(rate(sustainable.achieved)) achieved); at \(rate(lowestBad.rate)) actions/s \(broken) broke"
        return (.sustainable, sentence + stopped, sustainable, nil)
    }

    /// What a search cut short by `--max-steps` does not know, as a clause of the outcome's sentence.
    private static func stoppedByMaxSteps(good: CapacityStep?, bad: CapacityStep?) -> String {
        switch (good, bad) {
        case (let good?, let bad?):
            "; stopped by --max-steps before --resolution: the knee lies between \(rate(good.rate)) and "
                + "\(rate(bad.rate)) actions/s"
        case (_?, nil): "; stopped by --max-steps before any step broke an SLO"
        case (nil, _): "; stopped by --max-steps before any step met every SLO"
        }
    }

    /// Actions per second for a throughput in deliveries per second, at the deliveries per action the steps
    /// offered (nil without a step that offered any).
    static func actions(deliveries: Double, steps: [CapacityStep]) -> Double? {
        let ratios = steps.filter { $0.rate > 0 && $0.offered > 0 }.map { $0.offered / $0.rate }
        guard !ratios.isEmpty else { return nil }
        return deliveries / (ratios.reduce(0, +) / Double(ratios.count))
    }

    /// The knee beside the fitted law's ceiling, in one line; nil without a ceiling or when interrupted (the
    /// steps done establish no rate).
    public var ceilingSentence: String? {
        guard outcome != .interrupted, let ceiling = uslCeiling, let usl else { return nil }
        let how =
            usl.kappa > 0
            ? "the curve's peak, at concurrency \(String(format: "%.3g", peakConcurrency ?? 0))"
            : "λ/σ, as κ is 0"
        var text = "USL ceiling: \(Self.rate(ceiling)) deliveries/s (\(how))"
        if let actions = uslCeilingRate { text += ", about \(Self.rate(actions)) actions/s" }
        if let knee = steps.last(where: { $0.rate == sustainableRate }), ceiling > 0 {
            text +=
                "; the knee, \(Self.rate(knee.rate)) actions/s, achieved \(Self.rate(knee.achieved)) deliveries/s, "
                + String(format: "%.0f%%", knee.achieved / ceiling * 100) + " of it"
        }
        return text
    }
}
