import Foundation
import Synchronization
import Testing

@testable import RunControl

/// The object a command is interrupted through: its sleeps end at once, its actions run once.
struct InterruptionTests {
    @Test func aSleepEndsAsSoonAsTheCommandIsInterrupted() {
        let interruption = Interruption()
        let started = Date()
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.1) { interruption.interrupt(.terminate) }
        #expect(interruption.sleep(600) == false)
        #expect(Date().timeIntervalSince(started) < 5)
        #expect(interruption.signal == .terminate)
        // Once interrupted, every later sleep returns at once.
        #expect(interruption.sleep(600) == false)
    }

    @Test func aSleepThatIsNotInterruptedLastsItsTime() {
        let started = Date()
        #expect(Interruption().sleep(0.05))
        #expect(Date().timeIntervalSince(started) >= 0.05)
    }

    @Test func onlyTheFirstSignalCountsAndActionsRunOnce() {
        let interruption = Interruption()
        let runs = Counter()
        let registration = interruption.onInterrupt { runs.add() }
        interruption.interrupt(.hangUp)
        interruption.interrupt(.interrupt)
        #expect(interruption.signal == .hangUp)
        #expect(runs.value == 1)
        registration.cancel()
        // Registered after the interruption: runs at once.
        _ = interruption.onInterrupt { runs.add() }
        #expect(runs.value == 2)
    }

    @Test func aCancelledActionDoesNotRun() {
        let interruption = Interruption()
        let runs = Counter()
        interruption.onInterrupt { runs.add() }.cancel()
        interruption.interrupt(.interrupt)
        #expect(runs.value == 0)
    }

    @Test(arguments: [(StopSignal.hangUp, Int32(129)), (.interrupt, 130), (.terminate, 143)] as [(StopSignal, Int32)])
    func eachSignalExitsWith128PlusItsNumber(signal: StopSignal, code: Int32) {
        #expect(signal.exitCode.rawValue == code)
        #expect(signal.exitCode.rawValue == 128 + signal.number)
        #expect(StopSignal(number: signal.number) == signal)
        #expect(StopSignal(exitCode: code) == signal)
    }

    private final class Counter: Sendable {
        private let count = Atomic<Int>(0)
        func add() { count.add(1, ordering: .relaxed) }
        var value: Int { count.load(ordering: .relaxed) }
    }
}
