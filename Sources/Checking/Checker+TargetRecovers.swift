import Chaos
import Synchronization
import TargetContract

/// When the target last answered a delivery, and how many deliveries since could not reach it: what a target
/// that went down for good leaves in the run's outcomes.
struct Reach: Sendable {
    /// Seconds into the run of the latest answer (any status).
    var lastAnswer: Double?
    /// Deliveries since that answer that could not be sent to the target (a refused connection), not counting
    /// those the harness itself could not send in time.
    var unreachedSince = 0
    /// The latest of those, and why it could not be sent.
    var lastUnreached: (at: Double, reason: String)?

    mutating func note(_ outcome: DeliveryOutcome, at t: Double) {
        switch outcome {
        case .acknowledged, .rejected, .deferred:
            lastAnswer = max(lastAnswer ?? t, t)
            unreachedSince = 0
            lastUnreached = nil
        case .notSent(let reason, false):
            unreachedSince += 1
            lastUnreached = (t, reason)
        case .notSent, .indeterminate:
            break
        }
    }
}

/// Target recovery: whether every planned restart happened and the target came back, and whether it answers at
/// the end of the run. The run plays the restarts and feeds their outcomes here, so the checker stays apart from
/// the process control that plays them.
extension Checker {
    /// Judges one planned restart of the target.
    /// - Parameters:
    ///   - index: its index in the run's plan (0 for the first).
    ///   - count: how many restarts the run planned.
    ///   - plannedAt: its planned instant, in seconds since the start of the run.
    ///   - t: when it ended (the target came back, or the restart gave up), in seconds since the start of the run.
    ///   - failure: nil when it happened and the target accepted connections again; else why not, in one sentence
    ///     (the kill failed, the start command exited non-zero or outlived its timeout, the target never
    ///     accepted connections again).
    ///   - log: the lines the restart's commands wrote (`restart.log`), oldest first: its witness.
    public func restartPlayed(
        index: Int,
        of count: Int,
        plannedAt: Double,
        at t: Double,
        failure: String?,
        log: [String]
    ) {
        let label = "planned restart \(index + 1) of \(count) (at t=\(format(plannedAt))s)"
        judgeRecovery(
            .restart(index),
            at: t,
            failure: failure.map { "\(label) did not complete: \($0)" },
            evidence: log.map {
                WitnessEntry(at: t, delivery: nil, transactionId: nil, sentence: "restart.log: " + $0)
            },
            proof: "the restart gave up at t=\(format(t))s"
        )
    }

    /// Judges whether the target accepts connections at the end of the run (after the final probes): a target
    /// that went down, planned or not, and stayed down fails.
    /// - Parameters:
    ///   - t: when the run last tried to connect, in seconds since the start of the run.
    ///   - failure: nil when it accepted a connection; else why not (the last connection error).
    ///   - log: the last lines of `restart.log`, when the run restarted the target: a start script's server may
    ///     write why it stopped there.
    public func targetAtEnd(at t: Double, failure: String?, log: [String]) {
        let reach = state.withLock { $0.reach }
        var evidence: [WitnessEntry] = []
        if let last = reach.lastAnswer {
            evidence.append(
                WitnessEntry(
                    at: last,
                    delivery: nil,
                    transactionId: nil,
                    sentence: "the target answered a delivery for the last time"
                )
            )
        }
        if let unreached = reach.lastUnreached {
            evidence.append(
                WitnessEntry(
                    at: unreached.at,
                    delivery: nil,
                    transactionId: nil,
                    sentence: "\(reach.unreachedSince) deliveries since could not reach the target; the latest: "
                        + unreached.reason
                )
            )
        }
        evidence += log.map { WitnessEntry(at: t, delivery: nil, transactionId: nil, sentence: "restart.log: " + $0) }
        judgeRecovery(
            .target,
            at: t,
            failure: failure.map { "the target was unreachable at the end of the run: \($0)" },
            evidence: evidence,
            proof: "a connection to the target at t=\(format(t))s, after the final probes, failed"
        )
    }

    private func judgeRecovery(
        _ subject: Subject,
        at t: Double,
        failure: String?,
        evidence: [WitnessEntry],
        proof: String
    ) {
        state.withLock { state in
            guard let failure else {
                state.tallies[.targetRecovers, default: Tally()].passed += 1
                return
            }
            let witness = Witness(
                invariant: .targetRecovers,
                account: "",
                at: t,
                summary: failure,
                entries: evidence,
                proof: proof,
                observed: AccountState(),
                seed: seed
            )
            let key = ViolationKey(invariant: .targetRecovers, account: "", subject: subject)
            _ = state.book(witness, key: key, limit: options.maxWitnesses)
        }
    }
}
