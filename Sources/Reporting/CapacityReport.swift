import Foundation

/// What a capacity search found: its steps, the Universal Scalability Law fitted to them, where each
/// objective breaks and the sustainable rate. Its JSON form is `capacity.json`.
public struct CapacityReport: Codable, Sendable, Hashable {
    /// How a capacity search ended.
    public enum Outcome: String, Codable, Sendable, Hashable {
        /// A rate met every objective and the next step up broke one: the backend's sustainable rate.
        case sustainable
        /// The lowest failing step was harness-limited: PayStorm's own ceiling came before the backend broke
        /// an objective, so the backend's capacity is only known to be above the sustainable rate.
        case harnessLimited
        /// Even the lowest step broke an objective.
        case noneSustainable
        /// Every step met every objective: the sustainable rate is at least the highest step's.
        case neverBroke
        /// A signal stopped the search before it ended: the steps done are analysed, and decide nothing beyond
        /// themselves.
        case interrupted
    }

    /// The version of the `capacity.json` schema.
    public static let currentSchemaVersion = 1

    /// The schema version this report was written with.
    public var schemaVersion = CapacityReport.currentSchemaVersion
    /// The profile's name.
    public var profile: String
    /// What the search measured (`--label`: a commit, a build), for `paystorm capacity trend`; nil: none.
    public var label: String?
    /// The seed every step ran with.
    public var seed: UInt64
    /// The objectives, as written.
    public var slos: [String]
    /// Every step, in the order it ran.
    public var steps: [CapacityStep]
    /// The Universal Scalability Law fitted to the steps PayStorm kept up with (nil with fewer than three).
    public var usl: USLFit?
    /// The fit's peak concurrency N* (nil without a peak).
    public var peakConcurrency: Double?
    /// The fit's throughput at N*, deliveries per second.
    public var peakThroughput: Double?
    /// The most the fitted law lets the target achieve, deliveries per second: λ/σ when κ is 0, the throughput
    /// at N* otherwise (nil without a fit, or when σ and κ are both 0 and it predicts no limit).
    public var uslCeiling: Double?
    /// ``uslCeiling`` in actions per second, at the deliveries per action the steps offered.
    public var uslCeilingRate: Double?
    /// Where each objective breaks.
    public var sloBreaks: [SLOBreak]
    /// How the search ended.
    public var outcome: Outcome
    /// The highest rate (actions/s) that met every objective without harness limitation, below the lowest
    /// rate that did not. Nil when interrupted: the search did not establish it.
    public var sustainableRate: Double?
    /// Deliveries per second offered at the sustainable rate.
    public var sustainableOffered: Double?
    /// The rate (actions/s) at which PayStorm itself fell behind, when that ended the search.
    public var harnessCeilingRate: Double?
    /// The outcome in one sentence, as printed on the console.
    public var sentence: String
    /// The signal that stopped the search (`SIGINT`, `SIGTERM`, `SIGHUP`); nil when it ended on its own.
    public var interruptedBy: String?
    /// What ended the search when it ran to its end: `resolution`, `maxSteps`, `maxRate` or `minRate`; absent
    /// when interrupted and from a re-analysis (`--from`), which runs no search.
    public var searchEnd: SearchEnd?

    /// The violations of each invariant, summed over the steps that failed one (nil when none did), so that a
    /// script reading `capacity.json` sees them without walking the steps.
    public var failedInvariants: [String: Int]?
    /// What the invariants said, when a step failed one: the search's rates are the objectives' verdict, not
    /// a sign that the backend was right at them. Nil when no step failed one.
    public var invariantsSentence: String?

    /// The steps whose own run failed an invariant.
    public var stepsFailingInvariants: [CapacityStep] { steps.filter { !($0.failedInvariants ?? [:]).isEmpty } }

    /// Analyses measured steps.
    /// - Parameters:
    ///   - steps: the steps in the order they ran.
    ///   - slos: the objectives, as written.
    ///   - profile: the profile's name.
    ///   - seed: the seed the steps ran with.
    ///   - interruptedBy: the signal that stopped the search before it ended, if one did.
    ///   - searchEnd: what ended the search, when it ran (nil for a re-analysis, and ignored when interrupted).
    public init(
        steps: [CapacityStep],
        slos: [String],
        profile: String,
        seed: UInt64,
        interruptedBy: String? = nil,
        searchEnd: SearchEnd? = nil
    ) {
        self.profile = profile
        self.interruptedBy = interruptedBy
        self.searchEnd = interruptedBy == nil ? searchEnd : nil
        self.seed = seed
        self.slos = slos
        self.steps = steps
        (failedInvariants, invariantsSentence) = Self.invariants(of: steps)
        let kept = steps.filter { $0.harnessLimited == nil }
        usl = USLFit.fit(kept.map { (n: $0.concurrency, x: $0.achieved) })
        peakConcurrency = usl?.peakConcurrency
        peakThroughput = usl?.peakThroughput
        uslCeiling = usl?.ceiling
        uslCeilingRate = uslCeiling.flatMap { Self.actions(deliveries: $0, steps: kept) }
        sloBreaks = slos.map { SLOBreak.find($0, in: steps) }
        let verdict = Self.verdict(steps, interruptedBy: interruptedBy, searchEnd: self.searchEnd)
        outcome = verdict.outcome
        sentence = verdict.sentence
        sustainableRate = verdict.sustainable?.rate
        sustainableOffered = verdict.sustainable?.offered
        harnessCeilingRate = verdict.harnessCeilingRate
    }

    /// The invariants the steps failed, summed, and the sentence that says so; nils when no step failed one.
    private static func invariants(of steps: [CapacityStep]) -> ([String: Int]?, String?) {
        let failing = steps.filter { !($0.failedInvariants ?? [:]).isEmpty }
        guard !failing.isEmpty else { return (nil, nil) }
        var total: [String: Int] = [:]
        for step in failing { total.merge(step.failedInvariants ?? [:], uniquingKeysWith: +) }
        let at = failing.sorted { $0.rate < $1.rate }.map { rate($0.rate) }.joined(separator: ", ")
        let sentence =
            "invariants failed at \(at) actions/s (\(failing.count) of \(steps.count) steps): "
            + "\(CapacityStep.invariantsText(total)); each step's report has the witnesses and their replay lines"
        return (total, sentence)
    }

    /// A rate for people: three significant digits below 1,000, whole numbers with grouped thousands above,
    /// the same on every locale.
    public static func rate(_ value: Double) -> String {
        // %g would write 999.7 as 1e+03: from there on, whole numbers.
        guard value >= 999.5 else { return String(format: "%.3g", value) }
        var digits = String(Int(value.rounded()))
        var text = ""
        while digits.count > 3 {
            text = "," + digits.suffix(3) + text
            digits.removeLast(3)
        }
        return digits + text
    }
}
