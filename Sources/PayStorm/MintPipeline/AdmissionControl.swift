import Simulation

/// How much of the schedule a run admits (``ArrivalAdmission``), from the pace at which its mint pipeline keeps
/// up and the lead it has on the clock.
///
/// The pipeline's producer tells it, after each batch it takes from the world and signs, how many seconds of the
/// schedule the batch covered, how long generating and signing it took, how much of it was shed, and how late its
/// first delivery was. Over a ``window`` that gives the **pace**: seconds of schedule signed per second busy, at
/// the share in force, and the **lead**: how far ahead of the clock the producer is (negative when behind).
///
/// - The share is cut when minting falls behind, or would: already behind (late, or shedding), or at a pace
///   under 1 that would use up the lead within ``horizon``. It becomes the share times the pace, less while
///   behind (to win back the backlog), never less than half of it at once; a window whose batches were all shed
///   (the pace unknown, the run behind) halves it.
/// - It grows when minting has room: a pace above 1 with some lead, up to the pace, by at most double at once
///   (a quarter with less lead than it aims at), back to the whole schedule.
/// - Ahead of the clock, a cut is made only when two windows in a row ask for it, and then only as far as the
///   milder of the two asks, so a busy machine's stall, which the lead absorbs, changes nothing; behind, or to
///   grow, one window is enough.
/// - The window after a change is not measured: what the stream yields then still comes partly from arrivals
///   admitted under the share before (a notification follows its purchase), so its pace would be the old one's.
///
/// The share so follows the harness's ceiling as the load around it changes, and a run that keeps up never
/// changes it and generates the world of its seed. A pure value, fed one batch at a time.
struct AdmissionControl: Sendable {
    /// Seconds of the run's clock over which the pace is measured.
    static let window = 0.1
    /// Seconds within which a pace under 1 must be about to use up the lead before the share is cut.
    static let horizon = 1.0
    /// The lead (seconds ahead of the clock) the share aims at: enough to absorb a stall, well under the buffer's
    /// two seconds.
    static let aimedLead = 0.3

    /// The share in force.
    private(set) var share = ArrivalAdmission.whole
    private var windowStart: Double?
    /// Seconds of schedule signed in the current window (a shed delivery's part of its batch's span does not
    /// count), seconds busy, and whether any of it was signed or shed.
    private var signedSeconds = 0.0
    private var busySeconds = 0.0
    private var signedAny = false
    private var shedAny = false
    /// What the previous window asked for, as a ratio to the share in force then, if it asked for a change.
    private var previousRatio: Double?
    /// Whether the window under way follows a change, and is not measured.
    private var settling = false

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
        signedAny = signedAny || signedShare > 0
        shedAny = shedAny || signedShare < 1
        guard now - start >= Self.window, busySeconds > 0 else { return nil }
        let pace = signedAny ? signedSeconds / busySeconds : nil
        let behind = lateness > 0 || shedAny
        let ratio = ask(pace: pace, lead: -lateness, behind: behind).map { $0 / Double(share) }
        windowStart = nil
        signedSeconds = 0
        busySeconds = 0
        signedAny = false
        shedAny = false
        if settling {
            settling = false
            previousRatio = nil
            return nil
        }
        defer { previousRatio = ratio }
        guard let ratio else { return nil }
        var applied = ratio
        // A cut ahead of the clock waits for a second window: a stall lowers the pace for a moment, and the lead
        // absorbs it. Behind, or with room (which no stall makes), one window is enough.
        if ratio < 1 && !behind {
            guard let previous = previousRatio, (ratio < 1) == (previous < 1) else { return nil }
            // The milder of the two asks.
            applied = abs(ratio - 1) < abs(previous - 1) ? ratio : previous
        }
        var next = min(max(Int((Double(share) * applied).rounded()), 1), ArrivalAdmission.whole)
        // A share of a few units grows too, however small its quarter.
        if applied > 1 { next = max(next, min(share + 1, ArrivalAdmission.whole)) }
        guard next != share else { return nil }
        share = next
        settling = true
        return next
    }

    /// The share one window asks for, or nil when it asks for no change.
    private func ask(pace: Double?, lead: Double, behind: Bool) -> Double? {
        let current = Double(share)
        guard let pace else {
            // Everything shed: behind, at a pace no batch measured.
            return current / 2
        }
        if behind || (pace < 1 && lead < Self.horizon * (1 - pace)) {
            // Aim at the pace that wins back the lead wanted: a tenth below the pace per tenth of a second
            // missing, at most half.
            let correction = min(max(1 + (lead - Self.aimedLead), 0.5), 1)
            let target = max(current * pace * correction, current / 2)
            return target < current * 0.97 ? target : nil
        }
        if pace > 1 && lead > Self.aimedLead / 2 && share < ArrivalAdmission.whole {
            // Up to the pace, at most double at once with the lead wanted, a quarter more with less.
            return min(current * min(pace, lead > Self.aimedLead ? 2 : 1.25), Double(ArrivalAdmission.whole))
        }
        return nil
    }
}
