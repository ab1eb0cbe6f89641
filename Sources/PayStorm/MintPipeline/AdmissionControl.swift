import Simulation

/// How much of the schedule a run admits (``ArrivalAdmission``), from the rate at which its mint pipeline signs,
/// the rate the world would yield at a share, and the lead the pipeline has on the clock.
///
/// The pipeline's producer tells it, after each batch it takes from the world and signs (``Batch``), how many
/// seconds of the schedule the batch covered, how long generating and signing it took, how much of it was shed,
/// how late its first delivery was, whether the producer slept on a full buffer before it, and the world's
/// ``ArrivalAdmission/Flow``. Over a ``window`` that gives:
///
/// - the **capacity**: deliveries signed per second busy;
/// - the **steady pace**: the capacity over the deliveries per second of schedule the share yields once the stream
///   settles: the schedule's arrivals per second, times the share, times the actions each admitted arrival
///   schedules (known when it arrives), times the deliveries the chaos stage makes of an action. The deliveries
///   the stream yields in a window cannot give it: a device's update follows its purchase by up to a second, so
///   after a change they still count the arrivals of the share before, and a share set from them undershoots
///   after a cut and overshoots after a rise;
/// - the **measured pace**: seconds of schedule signed per second busy, which says whether the run is catching up;
/// - the **lead**: how far ahead of the clock the producer is (negative when behind). A producer that slept on a
///   full buffer is as far ahead as the buffer lets it be, which counts as the lead aimed at (``aimedLead``).
///
/// The share then moves to the steady pace times the share, a little less while the lead is short of the aim (to
/// win it back), never less than an eighth of it at once:
///
/// - Behind (late, or shedding), one window is enough, either way: a cut unless the run is already catching up (a
///   measured pace of 1 or more), or a rise of at most a quarter when the share in force is well under what minting
///   keeps up with (behind on the deliveries of arrivals admitted before a cut). So the first overloaded window of
///   a run cuts at once to about where minting keeps up, and the second after it does not cut again.
/// - Ahead of the clock, it is cut when a measured pace under 1 would bring the lead under the aim within
///   ``horizon``, only when two windows in a row ask for it, and then only as far as the milder of the two asks,
///   so a busy machine's stall, which the lead absorbs, changes nothing. It grows when minting has room (a
///   measured pace above 1 with some lead), by at most double at once (a quarter with less lead than it aims at),
///   back to the whole schedule.
/// - The window after a change is not measured. Without a flow (tests) the measured pace stands for the steady one.
///
/// The share so follows the harness's ceiling as the load around it changes, and a run that keeps up never
/// changes it and generates the world of its seed. A pure value, fed one batch at a time.
struct AdmissionControl: Sendable {
    /// Seconds of the run's clock over which the pace is measured.
    static let window = 0.1
    /// The weight of a window's capacity in the smoothed one.
    static let smoothing = 0.3
    /// Seconds within which a pace under 1 must be about to bring the lead under the aim before the share is cut.
    static let horizon = 1.0
    /// The lead (seconds ahead of the clock) the share aims at: enough to absorb a stall, and about what the
    /// buffer's byte cap holds at the rates where minting is the limit.
    static let aimedLead = 0.2

    /// One batch the producer took from the world and signed.
    struct Batch {
        /// The run's clock, in seconds.
        var now: Double
        /// How late the batch's first delivery was when it was signed (seconds; negative when ahead).
        var lateness: Double
        /// The span of intended times the batch covered.
        var scheduleSeconds: Double
        /// The part of the batch that was signed, not shed (0 to 1).
        var signedShare: Double
        /// How long taking the batch from the world and signing it took.
        var busySeconds: Double
        /// Whether the producer slept on a full buffer since its previous batch.
        var sleptForRoom = false
        /// The deliveries in the batch, and the intended time of its last.
        var deliveries = 0
        var lastAt = 0.0
        /// The world's flow once the batch was taken; nil steers by the measured pace alone.
        var flow: ArrivalAdmission.Flow?
    }

    /// What a window of batches told.
    private struct Tally {
        var start: Double
        /// The world's flow and the batch's last intended time at the window's start.
        var flow: ArrivalAdmission.Flow?
        var lastAt: Double
        var signedSeconds = 0.0
        var signedDeliveries = 0.0
        var busySeconds = 0.0
        var signedAny = false
        var shedAny = false
        var sleptAny = false
    }

    /// The share in force.
    private(set) var share = ArrivalAdmission.whole
    private var tally: Tally?
    /// Deliveries taken from the stream in all: over the actions the world yielded, what the chaos stage makes of one.
    private var deliveriesTaken = 0
    /// Deliveries signed per second busy, as last measured.
    private var capacity: Double?
    /// Without a flow: the share at which the last measured pace would have been 1.
    private var keptUpShare: Double?
    /// What the previous window asked for, as a ratio to the share in force then, if it asked for a change.
    private var previousRatio: Double?
    /// Whether the window under way follows a change, and is not measured.
    private var settling = false

    /// Takes one batch (for tests: no flow).
    mutating func observe(
        now: Double,
        lateness: Double,
        scheduleSeconds: Double,
        signedShare: Double,
        busySeconds: Double,
        sleptForRoom: Bool = false
    ) -> Int? {
        observe(
            Batch(
                now: now,
                lateness: lateness,
                scheduleSeconds: scheduleSeconds,
                signedShare: signedShare,
                busySeconds: busySeconds,
                sleptForRoom: sleptForRoom
            )
        )
    }

    /// Takes one batch.
    /// - Returns: the new share, or nil when it stays.
    mutating func observe(_ batch: Batch) -> Int? {
        deliveriesTaken += batch.deliveries
        var window = tally ?? Tally(start: batch.now, flow: batch.flow, lastAt: batch.lastAt)
        window.signedSeconds += batch.scheduleSeconds * batch.signedShare
        window.signedDeliveries += Double(batch.deliveries) * batch.signedShare
        window.busySeconds += batch.busySeconds
        window.signedAny = window.signedAny || batch.signedShare > 0
        window.shedAny = window.shedAny || batch.signedShare < 1
        window.sleptAny = window.sleptAny || batch.sleptForRoom
        tally = window
        guard batch.now - window.start >= Self.window, window.busySeconds > 0 else { return nil }
        tally = nil
        if settling {
            settling = false
            previousRatio = nil
            return nil
        }
        let measured = window.signedAny ? window.signedSeconds / window.busySeconds : nil
        if window.signedDeliveries > 0 {
            // Smoothed: one window's figure swings with the machine's other work.
            let measured = window.signedDeliveries / window.busySeconds
            capacity = capacity.map { $0 + Self.smoothing * (measured - $0) } ?? measured
        }
        if let measured { keptUpShare = Double(share) * measured }
        let behind = batch.lateness > 0 || window.shedAny
        // A producer that slept for room is as far ahead as the buffer allows.
        let lead = window.sleptAny ? max(-batch.lateness, Self.aimedLead) : -batch.lateness
        let steady = steadyPace(from: window, to: batch)
        let ratio = ask(measured: measured, steady: steady, lead: lead, behind: behind).map { $0 / Double(share) }
        defer { previousRatio = ratio }
        guard let ratio else { return nil }
        return apply(ratio, behind: behind)
    }

    /// Applies a window's ask.
    private mutating func apply(_ ratio: Double, behind: Bool) -> Int? {
        var applied = ratio
        // A cut ahead of the clock waits for a second window: a stall lowers the pace for a moment, and the lead
        // absorbs it. Behind, or with room (which no stall makes), one window is enough.
        if ratio < 1 && !behind {
            guard let previous = previousRatio, previous < 1 else { return nil }
            // The milder of the two asks.
            applied = abs(ratio - 1) < abs(previous - 1) ? ratio : previous
        }
        var next = min(max(Int((Double(share) * applied).rounded()), 1), ArrivalAdmission.whole)
        // A share of a few units grows too, however small its step.
        if applied > 1 { next = max(next, min(share + 1, ArrivalAdmission.whole)) }
        guard next != share else { return nil }
        share = next
        settling = true
        return next
    }

    /// The capacity over the deliveries per second of schedule the share in force yields once the stream settles;
    /// nil when a window cannot tell (no flow, no arrivals, nothing signed yet).
    private func steadyPace(from window: Tally, to batch: Batch) -> Double? {
        guard let capacity, let start = window.flow, let flow = batch.flow, batch.lastAt > window.lastAt,
            flow.arrivals > start.arrivals, flow.arrivals > flow.dropped, flow.scheduled > 0, flow.yielded > 0
        else { return nil }
        let arrivalsPerSecond = Double(flow.arrivals - start.arrivals) / (batch.lastAt - window.lastAt)
        let actionsPerArrival = Double(flow.scheduled) / Double(flow.arrivals - flow.dropped)
        let deliveriesPerAction = max(Double(deliveriesTaken) / Double(flow.yielded), 1)
        let admitted = Double(share) / Double(ArrivalAdmission.whole)
        return capacity / (arrivalsPerSecond * admitted * actionsPerArrival * deliveriesPerAction)
    }

    /// The share one window asks for, or nil when it asks for no change.
    private func ask(measured: Double?, steady: Double?, lead: Double, behind: Bool) -> Double? {
        let current = Double(share)
        // Short of the lead aimed at, a little less than the pace, to win it back: a twentieth per tenth of a
        // second missing, at most three tenths.
        let correction = min(max(1 + (lead - Self.aimedLead) / 2, 0.7), 1)
        guard let measured else {
            // Everything shed: behind.
            let target = steady.map { current * $0 } ?? keptUpShare ?? current / 2
            return min(max(target * correction, current / 8), current * 0.97)
        }
        let pace = steady ?? measured
        if behind {
            // To the pace, less the correction: a cut unless already catching up, or a rise when the share in force
            // is well under what minting keeps up with (behind on deliveries of arrivals admitted before a cut).
            let target = current * pace * correction
            if target < current * 0.97 { return measured >= 1 ? nil : max(target, current / 8) }
            return target > current * 1.03 ? min(target, current * 1.25, Double(ArrivalAdmission.whole)) : nil
        }
        if measured < 1 && lead - Self.aimedLead < Self.horizon * (1 - measured) {
            let target = max(current * pace * correction, current / 8)
            return target < current * 0.97 ? target : nil
        }
        if measured > 1 && pace > 1.03 && lead >= Self.aimedLead / 2 && share < ArrivalAdmission.whole {
            // Up to the pace, at most double at once with the lead wanted, a quarter more with less.
            return min(current * min(pace, lead >= Self.aimedLead ? 2 : 1.25), Double(ArrivalAdmission.whole))
        }
        return nil
    }
}
