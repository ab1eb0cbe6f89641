import Simulation

/// How much of the schedule a run admits (``ArrivalAdmission``), from the pace at which its mint pipeline keeps
/// up.
///
/// The pipeline's producer tells it, after each batch it takes from the world and signs, how many seconds of the
/// schedule the batch covered, how long generating and signing it took, how much of it was shed, and how late its
/// first delivery was. Over a ``window`` that gives the pace: seconds of schedule signed per second busy, at the
/// share in force. Once the run has been behind (late by more than ``lateLimit``, or shedding) for
/// ``windowsBehind`` windows in a row, the share becomes the share times the pace, a tenth less to win back the
/// backlog, and at most half of it per window; when it is no longer behind and has room (a pace above 1), the
/// share grows with the pace, by at most a quarter a window, back to the whole schedule. The share so follows
/// the harness's ceiling as the load around it changes. A run that keeps up, or falls behind only for a moment
/// (a busy machine's stall, which the buffer's lead and shedding absorb), never changes the share and generates
/// the world of its seed. A pure value, fed one batch at a time.
struct AdmissionControl: Sendable {
    /// Seconds of the run's clock over which the pace is measured before the share may change.
    static let window = 0.1
    /// Seconds late a batch's first delivery may be before its window counts as behind: under the pipeline's
    /// shedding horizon, so that thinning starts before most deliveries are shed.
    static let lateLimit = 0.1
    /// Consecutive windows behind before the share is cut.
    static let windowsBehind = 3

    /// The share in force.
    private(set) var share = ArrivalAdmission.whole
    private var windowStart: Double?
    /// Seconds of schedule signed (a shed delivery's part of its batch's span does not count) and seconds busy in
    /// the current window.
    private var signedSeconds = 0.0
    private var busySeconds = 0.0
    private var behind = false
    /// Windows behind in a row, the current one not included.
    private var streak = 0

    /// Takes one batch.
    /// - Parameters:
    ///   - now: the run's clock, in seconds.
    ///   - lateness: how late the batch's first delivery was when it was signed (seconds; negative when ahead).
    ///   - scheduleSeconds: the span of intended times the batch covered.
    ///   - signedShare: the part of the batch that was signed, not shed (0 to 1).
    ///   - busySeconds: how long taking the batch from the world and signing it took.
    /// - Returns: the new share, or nil when it stays.
    mutating func observe(
        now: Double,
        lateness: Double,
        scheduleSeconds: Double,
        signedShare: Double,
        busySeconds busy: Double
    ) -> Int? {
        let start = windowStart ?? now
        windowStart = start
        signedSeconds += scheduleSeconds * signedShare
        busySeconds += busy
        behind = behind || signedShare < 1 || lateness > Self.lateLimit
        guard now - start >= Self.window, busySeconds > 0 else { return nil }
        let pace = signedSeconds / busySeconds
        streak = behind ? streak + 1 : 0
        windowStart = nil
        signedSeconds = 0
        busySeconds = 0
        behind = false
        let current = Double(share)
        let target: Double
        if streak >= Self.windowsBehind {
            target = max(min(current * pace * 0.9, current), current / 2)
        } else if streak == 0 && pace > 1 {
            target = current * min(pace, 1.25)
        } else {
            return nil
        }
        let next = min(max(Int(target.rounded()), 1), ArrivalAdmission.whole)
        guard next != share else { return nil }
        share = next
        return next
    }
}
