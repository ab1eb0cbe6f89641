import Foundation
import Load
import Testing

/// A cancelled engine stays stopped: a command interrupted between two runs must not have its next run clear
/// the stop, as `stop()` alone does.
struct EngineCancelTests {
    @Test func aCancelledEnginesLaterRunsReturnAtOnceSendingNothing() throws {
        let engine = try LoadEngine(LoadEngineConfiguration(totalTimeout: .seconds(30)))
        engine.cancel()
        let started = Date()
        var results = 0
        let stats = engine.run(.closed(users: 4, thinkTime: .zero, duration: .seconds(24 * 3600))) { index, _ in
            LoadRequest(id: index, kind: "probe", method: "GET", url: "http://127.0.0.1:9/")
        } sink: { _ in
            results += 1
        }
        #expect(stats.stopped)
        #expect(stats.sent == 0 && results == 0)
        #expect(Date().timeIntervalSince(started) < 5)
        #expect(engine.isCancelled)
    }
}
