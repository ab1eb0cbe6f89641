import Foundation
import RunControl

/// How long a run settles after its schedule. The engine keeps sending the retries, redeliveries and relaunches
/// that come due until none is left and every one was answered (quiet), or until the longest settle
/// (`settleMaxSeconds`), when those due later are not sent; the final probe then waits out what remains of
/// `settleSeconds`, the least settle. A slow target or machine so lengthens the run instead of leaving its last
/// purchases unchecked.
struct SettleWait: Equatable {
    /// The schedule's length, in seconds.
    var schedule: Double
    /// The least settle (`settleSeconds`).
    var least: Double
    /// The longest settle (`settleMaxSeconds`, or its default).
    var longest: Double
    /// Seconds after the schedule when the engine stopped: nothing left due or in flight (or the longest settle
    /// was reached, the answers of the last sends included).
    var quietAfter: Double
    /// Follow-ups not sent because they were due after the longest settle.
    var cut: Int

    /// - Parameters:
    ///   - schedule: the schedule's length, in seconds.
    ///   - least: `settleSeconds`.
    ///   - longest: the longest settle, in seconds.
    ///   - engineStopped: seconds from the run's start until the engine stopped.
    ///   - cut: follow-ups not sent because they fell after the longest settle.
    init(schedule: Double, least: Double, longest: Double, engineStopped: Double, cut: Int) {
        self.schedule = schedule
        self.least = least
        self.longest = longest
        quietAfter = max(0, engineStopped - schedule)
        self.cut = cut
    }

    /// Seconds still to wait once the engine stopped, so that the final probe comes no sooner than the least
    /// settle after the schedule.
    var left: Double { max(0, least - quietAfter) }

    /// Seconds after the schedule at which the final probe begins (before any `Retry-After` it honours).
    var settled: Double { quietAfter + left }

    /// The console's words, before what follows the wait: "quiet 12.3 s after the schedule ...".
    var console: String {
        cut > 0
            ? String(format: "not quiet %.1f s after the schedule (settleMaxSeconds %g)", quietAfter, longest)
            : String(format: "quiet %.1f s after the schedule", quietAfter)
    }

    /// One line for the report's notes: how long the run settled, and why.
    var note: String {
        let bounds = String(format: "settleSeconds %g at least, settleMaxSeconds %g at most", least, longest)
        let probe = String(
            format: "the final probe began %.1f s after the %g s schedule (%@)",
            settled,
            schedule,
            bounds
        )
        guard cut == 0 else {
            return "settle: not quiet when the longest settle ended (\(cut) retries, redeliveries or relaunches due "
                + "after it were not sent); \(probe)"
        }
        return String(
            format: "settle: quiet %.1f s after the schedule (every retry, redelivery and relaunch due sent "
                + "and answered); ",
            quietAfter
        ) + probe
    }
}
