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
    @Test func engineReportsHowFarItsOwnThreadFellBehind() throws {
        let engine = try LoadEngine(LoadEngineConfiguration(tickInterval: .milliseconds(100)))
        var lags: [Duration] = []
        let source = StallingSource(stallAt: 5, stall: 0.4)
        _ = engine.run(timed: source) { _ in
        } tick: {
            lags.append($0.releaseLag)
        }
        // The slot due at 60 ms goes out after the 400 ms stall that began at 50 ms at the earliest.
        #expect((lags.max() ?? .zero) >= .milliseconds(390))
        // Each tick reports its own worst release: the last one, long after the stall, not the stall again.
        #expect(lags.count >= 2 && lags.last! < lags.max()!)
    }
}
