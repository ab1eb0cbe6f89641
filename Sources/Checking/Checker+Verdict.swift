public import Profile
import Synchronization

/// What the checker concludes (the invariants a target configuration leaves unchecked, and the verdict).
extension Checker {
    /// The invariants a run cannot check with this target configuration.
    /// - Parameters:
    ///   - target: the profile's target.
    ///   - probeReturnsGrants: whether the probe's answers carried `grants` (nil if unknown yet).
    public static func unchecked(target: Target, probeReturnsGrants: Bool?) -> [Unchecked] {
        guard target.probe != nil || target.embeddedLedger else {
            return Invariant.probed.map {
                Unchecked(invariant: $0, reason: "no probe (target.probe): what the target grants cannot be read")
            }
        }
        var list: [Unchecked] = []
        if probeReturnsGrants == false {
            list.append(
                Unchecked(
                    invariant: .noDoubleGrant,
                    reason: "partly: the probe returns no grants, so only consumable balances show double grants"
                )
            )
        }
        if target.deviceURL == nil && !target.embeddedLedger {
            list.append(
                Unchecked(
                    invariant: .noLostPurchase,
                    reason:
                        "partly: no device endpoint (target.deviceDelivery or target.deviceURL), so device deliveries and "
                        + "redeliveries are not exercised"
                )
            )
        }
        return list
    }

    /// The verdict so far.
    /// - Parameter unchecked: what the run could not check (see ``unchecked(target:probeReturnsGrants:)``).
    public func verdict(unchecked: [Unchecked]) -> Verdict {
        state.withLock { state in
            // Whether enough decided is a question of the probes' checks: the answers' and the restarts' are
            // decided as they come, and would only dilute the share of undecided probes.
            let probed = state.tallies.filter { Invariant.probed.contains($0.key) }
            let totals = probed.values.reduce(into: Tally()) {
                $0.passed += $1.passed
                $0.failed += $1.failed
                $0.unknown += $1.unknown
            }
            let (held, purchases) = state.heldAndBooked
            let outcome: Verdict.Outcome
            var reason: String?
            if state.violationCount > 0 {
                outcome = .fail
            } else if state.genuineDispatched > 0 && state.genuineAcknowledged == 0 {
                // Invariants "hold" trivially on a target that accepted nothing: such a run proves nothing.
                outcome = .unknown
                reason =
                    state.genuineRejected > 0
                    ? "the target acknowledged none of the \(state.genuineDispatched) genuine deliveries "
                        + "(\(state.genuineRejected) rejected, the rest unanswered or not sent), so the invariants held only on an empty state"
                    : "none of the \(state.genuineDispatched) genuine deliveries got a 2xx answer, so nothing was checked"
            } else if let heldReason = Self.heldReason(
                held: held,
                purchases: purchases,
                above: options.maxUnknownFraction
            ) {
                outcome = .unknown
                reason = heldReason
            } else if let undecided = undecidedReason(probed, totals: totals) {
                outcome = .unknown
                // Failed probes are the usual cause, and the one a user can fix: say so first.
                reason =
                    state.finalProbeFailures > 0
                    ? "\(state.finalProbeFailures) of \(state.finalProbes) final probes failed: "
                        + "\(state.firstFinalProbeFailure ?? "?"); \(undecided)"
                    : undecided
            } else {
                outcome = .pass
            }
            return Verdict(
                outcome: outcome,
                reason: reason,
                violations: state.witnesses,
                violationCount: state.violationCount,
                tallies: state.tallies,
                unknownSamples: (reason.map { [$0] } ?? []) + state.unknownSamples,
                unchecked: unchecked + uncheckedRefunds(state.tallies, besides: unchecked),
                seed: seed,
                lostNotifications: state.lostNotifications,
                held: held,
                purchases: purchases
            )
        }
    }

    /// Why too much could not decide: no check decided, more than ``Options/maxUnknownFraction`` of all checks
    /// are undecided, or of one invariant's (``undecidedInvariantReason(_:above:)``); nil when enough decided.
    private func undecidedReason(_ tallies: [Invariant: Tally], totals: Tally) -> String? {
        let all = totals.passed + totals.failed + totals.unknown
        let limit = options.maxUnknownFraction
        if totals.passed == 0 { return "no check could decide" }
        if Double(totals.unknown) > limit * Double(all) {
            return "\(totals.unknown) of \(all) checks could not decide (more than \(Int(limit * 100))%)"
        }
        let each = tallies.map { (name: $0.key.rawValue, passed: $0.value.passed, unknown: $0.value.unknown) }
        return Self.undecidedInvariantReason(each, above: limit)
    }
}
