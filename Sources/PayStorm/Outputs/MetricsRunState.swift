import Reporting
import Synchronization

/// What the metrics endpoint says of a run beside its counters: the phase it is in and, once its report is
/// written, the verdict and the violations as the report counts them (so a last scrape agrees with
/// `summary.json`). Set from the run's thread, read from the endpoint's.
final class MetricsRunState: Sendable {
    /// A run's phase as the endpoint names it: the run's own phases, then `finished` once the report is written.
    enum Phase: String, CaseIterable, Sendable {
        case prepare, play, settle, probe, report, finished
    }

    /// The report's figures, served once the run is over.
    struct Final: Sendable, Equatable {
        /// The run's verdict.
        var verdict: VerdictOutcome
        /// The distinct violations of every invariant.
        var violations: Int
        /// The violations by invariant name.
        var byInvariant: [String: Int]

        /// The figures of a written report.
        init(_ report: RunReport) {
            verdict = report.verdict
            violations = report.violationCount
            byInvariant = Dictionary(report.invariants.map { ($0.name, $0.violations) }, uniquingKeysWith: +)
        }

        init(verdict: VerdictOutcome, violations: Int, byInvariant: [String: Int]) {
            self.verdict = verdict
            self.violations = violations
            self.byInvariant = byInvariant
        }
    }

    /// The phase and, once finished, the final figures, as read at one instant.
    struct Snapshot: Sendable, Equatable {
        var phase: Phase = .prepare
        var final: Final?
    }

    private let state = Mutex(Snapshot())

    init() {}

    /// The phase and the final figures now.
    var snapshot: Snapshot { state.withLock { $0 } }

    /// Notes that the run entered `phase`.
    func enter(_ phase: Phase) {
        state.withLock { $0.phase = phase }
    }

    /// Notes that the run's report is written, with its figures.
    func finish(_ final: Final) {
        state.withLock { $0 = Snapshot(phase: .finished, final: final) }
    }
}
