import Testing

@testable import PayStorm

/// How long a run settles: until quiet, at least `settleSeconds`, and what the report says of it.
struct SettleWaitTests {
    @Test(arguments: [
        // engine stopped at, seconds still to wait, settled after the schedule
        (10.5, 3.5, 4.0),  // quiet within the least settle: the rest of it is waited
        (14.0, 0.0, 4.0),  // quiet exactly at the least settle
        (22.3, 0.0, 12.3),  // quiet later: the final probe follows at once
        (8.0, 4.0, 4.0),  // an interrupted engine's clock before the schedule's end counts from the end
    ])
    func waitsOutTheLeastSettleOnlyWhenQuietCameSooner(stopped: Double, left: Double, settled: Double) {
        let wait = SettleWait(schedule: 10, least: 4, longest: 64, engineStopped: stopped, cut: 0)
        #expect(abs(wait.left - left) < 1e-9)
        #expect(abs(wait.settled - settled) < 1e-9)
    }

    @Test func saysHowLongItSettledAndWhy() {
        let quiet = SettleWait(schedule: 16, least: 4, longest: 64, engineStopped: 28.3, cut: 0)
        #expect(quiet.console == "quiet 12.3 s after the schedule")
        #expect(quiet.note.hasPrefix("settle: quiet 12.3 s after the schedule"))
        #expect(quiet.note.contains("the final probe began 12.3 s after the 16 s schedule"))
        #expect(quiet.note.contains("settleSeconds 4 at least, settleMaxSeconds 64 at most"))

        let cut = SettleWait(schedule: 16, least: 4, longest: 64, engineStopped: 80.5, cut: 12)
        #expect(cut.console == "not quiet 64.5 s after the schedule (settleMaxSeconds 64)")
        #expect(cut.note.hasPrefix("settle: not quiet when the longest settle ended (12 retries"))
    }
}
