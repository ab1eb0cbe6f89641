import Foundation
import Testing

@testable import Load

/// A timed source of 80 slots 10 ms apart that sends nothing and stalls once, on the engine's thread, as a
/// source that waits for minting does.
private final class StallingSource: TimedRequestSource {
    private var next = 0
    private let stallAt: Int
    private let stall: TimeInterval

    init(stallAt: Int, stall: TimeInterval) {
        self.stallAt = stallAt
        self.stall = stall
    }

    func nextDue() -> Duration? { next < 80 ? .milliseconds(10 * next) : nil }

    func take(_ intended: Duration) -> LoadRequest? {
        if next == stallAt { Thread.sleep(forTimeInterval: stall) }
        next += 1
        return nil
    }

    func intendedRate(at elapsed: Duration) -> Double { 100 }
}

struct ReleaseLagTests {
    /// A stall early in the run, and one just before its last slot, whose release the end-of-run tick follows.
    @Test(arguments: [5, 78])
    func engineReportsHowFarItsOwnThreadFellBehindOnceEach(stallAt: Int) throws {
        let engine = try LoadEngine(LoadEngineConfiguration(tickInterval: .milliseconds(100)))
        var lags: [Duration] = []
        let source = StallingSource(stallAt: stallAt, stall: 0.4)
        _ = engine.run(timed: source) { _ in
        } tick: {
            lags.append($0.releaseLag)
        }
        // The slot after the stalled one is due 10 ms after it and goes out 400 ms later at the earliest.
        #expect((lags.max() ?? .zero) >= .milliseconds(390), "\(lags)")
        // Each tick reports the worst release since the one before, so the stall shows in one tick only.
        #expect(lags.filter { $0 >= .milliseconds(390) }.count == 1, "\(lags)")
    }
}
