import Checking
import Load
import PayStorm
import Reporting
import RunControl

/// What the merged figures are judged by: the profile's thresholds, and the invariants' summed checks.
extension PayStormMerge {
    /// The profile's thresholds (as the first shard recorded them), judged again on the merged figures.
    static func judgeThresholds(
        of shards: [ShardReport],
        on figures: MergedFigures,
        harnessLimited: HarnessLimit? = nil
    ) throws(RunError) -> [ThresholdResult] {
        let metrics = figures.metrics
        var thresholds: [ThresholdResult] = []
        for result in shards[0].report.thresholds {
            let threshold: Threshold
            do {
                threshold = try Threshold.parse(result.expression, kinds: PayStormRun.thresholdKinds)
            } catch {
                throw .badInput("\(shards[0].directory)/summary.json: thresholds: \(error)")
            }
            let outcome = threshold.evaluate(metrics)
            // As in a run: latency measured while a shard was behind includes PayStorm's own delay.
            let undecided =
                threshold.metric.isLatency ? harnessLimited.map { "measured over a run that was \($0.sentence)" } : nil
            thresholds.append(
                ThresholdResult(
                    expression: outcome.expression,
                    observed: outcome.observed,
                    passed: outcome.passed,
                    unknown: undecided
                )
            )
        }
        return thresholds
    }

    /// Each invariant's checks summed; a reason an invariant went unchecked is the same in every shard.
    static func mergedInvariants(_ shards: [ShardReport], tallies: [String: ShardTally]) -> [InvariantResult] {
        Invariant.allCases.map { invariant in
            let tally = tallies[invariant.rawValue]
            let reason = shards.lazy.compactMap { $0.figures.unchecked[invariant.rawValue] }.first
            return InvariantResult(
                name: invariant.rawValue,
                passed: tally?.passed ?? 0,
                failed: tally?.failed ?? 0,
                unknown: tally?.unknown ?? 0,
                unchecked: reason.map { (reason: $0, partly: $0.hasPrefix("partly")) },
                tooUndecided: Checker.isTooUndecided(
                    passed: tally?.passed ?? 0,
                    unknown: tally?.unknown ?? 0,
                    above: Checker.Options().maxUnknownFraction
                )
            )
        }
    }

    /// The invariants' verdict over all shards, by the checker's rules on the summed checks: a violation
    /// anywhere fails; too few decided checks (of all, or of one invariant) leave it unknown, as does a merge of
    /// shards that were each unknown (for example a target that acknowledged nothing).
    static func mergedInvariantVerdict(
        _ verdicts: [VerdictOutcome],
        tallies: [String: ShardTally]
    ) -> VerdictOutcome {
        if verdicts.contains(.fail) || tallies.values.contains(where: { $0.failed > 0 }) { return .fail }
        // As in a run, only the probes' checks decide whether enough decided.
        let probed = Set(Invariant.probed.map(\.rawValue))
        let tallies = tallies.filter { probed.contains($0.key) }
        let passed = tallies.values.map(\.passed).reduce(0, +)
        let unknown = tallies.values.map(\.unknown).reduce(0, +)
        let all = passed + unknown
        let limit = Checker.Options().maxUnknownFraction
        if passed == 0 || Double(unknown) > limit * Double(all) || verdicts.allSatisfy({ $0 == .unknown }) {
            return .unknown
        }
        return undecidedInvariant(tallies) == nil ? .pass : .unknown
    }

    /// Why the summed tallies leave one invariant too undecided for a pass (the rule of a run), or nil.
    static func undecidedInvariant(_ tallies: [String: ShardTally]) -> String? {
        Checker.undecidedInvariantReason(
            tallies.map { (name: $0.key, passed: $0.value.passed, unknown: $0.value.unknown) },
            above: Checker.Options().maxUnknownFraction
        )
    }
}
