import RunControl
import Testing

@testable import PayStorm

/// The run's phases as a pure state machine: their order, what an interruption in each changes, and what a
/// failure in each leaves behind.
struct RunStateMachineTests {
    /// An event fed to the machine in a table row.
    enum Event: CustomStringConvertible {
        case start, ended, failed
        case interrupt(StopSignal)

        var description: String {
            switch self {
            case .start: "start"
            case .ended: "ended"
            case .failed: "failed"
            case .interrupt(let signal): "interrupt(\(signal.name))"
            }
        }
    }

    typealias Step = (event: Event, action: RunStateMachine.Action, state: RunStateMachine.State)

    private static func feed(_ event: Event, to machine: inout RunStateMachine) -> RunStateMachine.Action {
        switch event {
        case .start: machine.start()
        case .ended: machine.phaseEnded()
        case .failed: machine.phaseFailed()
        case .interrupt(let signal): machine.interrupt(signal)
        }
    }

    static let rows: [(name: String, steps: [Step])] = [
        (
            "a run goes through every phase in order",
            [
                (.start, .prepare, .running(.prepare)),
                (.ended, .play, .running(.play)),
                (.ended, .settle(wait: true), .running(.settle)),
                (.ended, .probe, .running(.probe)),
                (.ended, .report(interruptedBy: nil), .running(.report)),
                (.ended, .finish, .finished),
            ]
        ),
        (
            "interrupted before it starts, it still prepares and reports, without settling",
            [
                (.interrupt(.terminate), .none, .idle),
                (.start, .prepare, .running(.prepare)),
                (.ended, .play, .running(.play)),
                (.ended, .settle(wait: false), .running(.settle)),
                (.ended, .probe, .running(.probe)),
                (.ended, .report(interruptedBy: .terminate), .running(.report)),
                (.ended, .finish, .finished),
            ]
        ),
        (
            "interrupted while preparing, it stops sending and reports",
            [
                (.start, .prepare, .running(.prepare)),
                (.interrupt(.interrupt), .stopSending, .running(.prepare)),
                (.ended, .play, .running(.play)),
                (.ended, .settle(wait: false), .running(.settle)),
                (.ended, .probe, .running(.probe)),
                (.ended, .report(interruptedBy: .interrupt), .running(.report)),
                (.ended, .finish, .finished),
            ]
        ),
        (
            "interrupted while playing, it does not wait out the settle period",
            [
                (.start, .prepare, .running(.prepare)),
                (.ended, .play, .running(.play)),
                (.interrupt(.hangUp), .stopSending, .running(.play)),
                (.ended, .settle(wait: false), .running(.settle)),
                (.ended, .probe, .running(.probe)),
                (.ended, .report(interruptedBy: .hangUp), .running(.report)),
                (.ended, .finish, .finished),
            ]
        ),
        (
            "interrupted while settling, it still probes and reports",
            [
                (.start, .prepare, .running(.prepare)),
                (.ended, .play, .running(.play)),
                (.ended, .settle(wait: true), .running(.settle)),
                (.interrupt(.terminate), .stopSending, .running(.settle)),
                (.ended, .probe, .running(.probe)),
                (.ended, .report(interruptedBy: .terminate), .running(.report)),
                (.ended, .finish, .finished),
            ]
        ),
        (
            "interrupted while probing, its report is marked interrupted",
            [
                (.start, .prepare, .running(.prepare)),
                (.ended, .play, .running(.play)),
                (.ended, .settle(wait: true), .running(.settle)),
                (.ended, .probe, .running(.probe)),
                (.interrupt(.interrupt), .stopSending, .running(.probe)),
                (.ended, .report(interruptedBy: .interrupt), .running(.report)),
                (.ended, .finish, .finished),
            ]
        ),
        (
            "interrupted while reporting, the report in progress is not marked",
            [
                (.start, .prepare, .running(.prepare)),
                (.ended, .play, .running(.play)),
                (.ended, .settle(wait: true), .running(.settle)),
                (.ended, .probe, .running(.probe)),
                (.ended, .report(interruptedBy: nil), .running(.report)),
                (.interrupt(.terminate), .none, .running(.report)),
                (.ended, .finish, .finished),
            ]
        ),
        (
            "only the first signal counts",
            [
                (.start, .prepare, .running(.prepare)),
                (.ended, .play, .running(.play)),
                (.interrupt(.interrupt), .stopSending, .running(.play)),
                (.interrupt(.terminate), .none, .running(.play)),
                (.ended, .settle(wait: false), .running(.settle)),
                (.ended, .probe, .running(.probe)),
                (.ended, .report(interruptedBy: .interrupt), .running(.report)),
            ]
        ),
        (
            "failing while preparing leaves no folder",
            [
                (.start, .prepare, .running(.prepare)),
                (.failed, .fail(discardFolder: true), .failed),
                (.interrupt(.terminate), .none, .failed),
            ]
        ),
        (
            "failing while preparing after an interruption still leaves no folder",
            [
                (.start, .prepare, .running(.prepare)),
                (.interrupt(.terminate), .stopSending, .running(.prepare)),
                (.failed, .fail(discardFolder: true), .failed),
            ]
        ),
        (
            "failing while playing keeps the folder",
            [
                (.start, .prepare, .running(.prepare)),
                (.ended, .play, .running(.play)),
                (.failed, .fail(discardFolder: false), .failed),
            ]
        ),
        (
            "failing while reporting keeps the folder",
            [
                (.start, .prepare, .running(.prepare)),
                (.ended, .play, .running(.play)),
                (.ended, .settle(wait: true), .running(.settle)),
                (.ended, .probe, .running(.probe)),
                (.ended, .report(interruptedBy: nil), .running(.report)),
                (.failed, .fail(discardFolder: false), .failed),
            ]
        ),
        (
            "a finished run ignores a late signal and cannot start again",
            [
                (.start, .prepare, .running(.prepare)),
                (.ended, .play, .running(.play)),
                (.ended, .settle(wait: true), .running(.settle)),
                (.ended, .probe, .running(.probe)),
                (.ended, .report(interruptedBy: nil), .running(.report)),
                (.ended, .finish, .finished),
                (.interrupt(.terminate), .none, .finished),
                (.start, .fail(discardFolder: false), .failed),
            ]
        ),
    ]

    @Test(arguments: rows)
    func everyEventLeadsToItsAction(name: String, steps: [Step]) {
        var machine = RunStateMachine()
        for (index, step) in steps.enumerated() {
            let action = Self.feed(step.event, to: &machine)
            #expect(action == step.action, "\(name): step \(index), \(step.event)")
            #expect(machine.state == step.state, "\(name): step \(index), \(step.event)")
        }
    }

    @Test func remembersTheFirstSignalWhateverThePhase() {
        for phases in 0...5 {
            var machine = RunStateMachine()
            _ = machine.start()
            for _ in 0..<phases { _ = machine.phaseEnded() }
            _ = machine.interrupt(.hangUp)
            _ = machine.interrupt(.terminate)
            #expect(machine.interruptedBy == .hangUp)
        }
    }
}
