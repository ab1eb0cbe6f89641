import Simulation

/// How much of the schedule a run admits (``ArrivalAdmission``), from the rate at which its mint pipeline signs,
/// the rate the world would yield at a share, and the lead the pipeline has on the clock.
///
/// The pipeline's producer tells it, after each batch it takes from the world and signs (``Batch``), how many
/// seconds of the schedule the batch covered, how long generating and signing it took, how much of it was shed,
/// how late its first delivery was, whether the producer slept on a full buffer before it, and the world's
/// ``ArrivalAdmission/Flow``. Over a ``window`` that gives:
///
/// - the **capacity**: deliveries signed per second busy, smoothed over windows;
/// - the **demand** once the stream settles, in deliveries per second of schedule: for each unit of share, the
///   schedule's arrivals per second times the actions an admitted arrival schedules (known when it arrives) times
///   the deliveries the chaos stage makes of an action; and from follow-ups (renewals, refunds decided later),
///   which no share changes. The deliveries the stream yields in a window cannot give it: another device's update
///   follows its purchase by up to a second, so after a change they still count the arrivals of the share before,
///   and a share set from them undershoots after a cut and overshoots after a rise;
/// - the **measured pace**: seconds of schedule signed per second busy, which says whether the run is catching up;
/// - the **lead**: how far ahead of the clock the producer is (negative when behind). A producer that slept on a
///   full buffer is as far ahead as the buffer lets it be, which counts as the lead aimed at (``aimedLead``).
///
/// The share then moves to the one whose demand the capacity meets, at a pace that wins back within ``recovery``
/// any lead short of the aim, never less than an eighth of the share in force at once:
///
/// - Behind (late, or shedding), one window is enough, either way: a cut unless the run is already catching up fast
///   enough (a measured pace that wins the lead back within ``recovery``), or a rise of at most a quarter when the
///   share in force is well under what minting keeps up with (behind on the deliveries of arrivals admitted before
///   a cut). So the first overloaded window of a run cuts at once to about where minting keeps up, and the windows
///   after it do not cut again.
/// - Ahead of the clock, it is cut when a measured pace under 1 would bring the lead under the aim within
///   ``horizon``, only when two windows in a row ask for it, and then only as far as the milder of the two asks,
///   so a busy machine's stall, which the lead absorbs, changes nothing. It grows when minting has room (a
///   measured pace above 1 with some lead), by at most double at once (a quarter with less lead than it aims at),
///   back to the whole schedule.
/// - The window after a change is not measured. Without a flow (tests) the measured pace at the share in force
///   stands for the demand.
///
/// The share so follows the harness's ceiling as the load around it changes, and a run that keeps up never
/// changes it and generates the world of its seed. A pure value, fed one batch at a time.
struct AdmissionControl: Sendable {
    /// Seconds of the run's clock over which the pace is measured.
    static let window = 0.1
    /// Seconds within which a run short of the lead it aims at is to win it back.
    static let recovery = 1.0
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
            let signedPerSecond = window.signedDeliveries / window.busySeconds
            capacity = capacity.map { $0 + Self.smoothing * (signedPerSecond - $0) } ?? signedPerSecond
        }
        if let measured { keptUpShare = Double(share) * measured }
        let behind = batch.lateness > 0 || window.shedAny
        // A producer that slept for room is as far ahead as the buffer allows.
        let lead = window.sleptAny ? max(-batch.lateness, Self.aimedLead) : -batch.lateness
        let demand = demand(from: window, to: batch)
        let ratio = ask(measured: measured, demand: demand, lead: lead, behind: behind).map { $0 / Double(share) }
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

    /// What the world yields once the stream settles, in deliveries per second of schedule: for each unit of
    /// share, and from follow-ups whatever the share; nil when a window cannot tell (no flow, no arrivals).
    private func demand(from window: Tally, to batch: Batch) -> (perShare: Double, followUps: Double)? {
        guard let start = window.flow, let flow = batch.flow, batch.lastAt > window.lastAt,
            flow.arrivals > start.arrivals, flow.arrivals > flow.dropped, flow.scheduled > 0, flow.yielded > 0,
            flow.followUps >= start.followUps
        else { return nil }
        let seconds = batch.lastAt - window.lastAt
        let arrivalsPerSecond = Double(flow.arrivals - start.arrivals) / seconds
        let actionsPerArrival = Double(flow.scheduled) / Double(flow.arrivals - flow.dropped)
        let deliveriesPerAction = max(Double(deliveriesTaken) / Double(flow.yielded), 1)
        return (
            arrivalsPerSecond * actionsPerArrival * deliveriesPerAction / Double(ArrivalAdmission.whole),
            Double(flow.followUps - start.followUps) / seconds * deliveriesPerAction
        )
    }

    /// The share one window asks for, or nil when it asks for no change.
    private func ask(
        measured: Double?,
        demand: (perShare: Double, followUps: Double)?,
        lead: Double,
        behind: Bool
    ) -> Double? {
        let current = Double(share)
        // Short of the lead aimed at, the pace that wins it back within ``recovery`` (at most 1/0.7).
        let wanted = min(max(1 + (Self.aimedLead - lead) / Self.recovery, 1), 1 / 0.7)
        // The share minting keeps up with at `pace` times the schedule: from the world's demand when known (what a
        // share yields once the stream settles), else from the pace measured at the share in force.
        func keptUp(pace: Double) -> Double? {
            if let demand, let capacity { return max((capacity / pace - demand.followUps) / demand.perShare, 0) }
            return measured.map { current * $0 / pace }
        }
        let kept = keptUp(pace: wanted)
        guard let measured, let target = kept else {
            // Everything shed: behind.
            let target = kept ?? (keptUpShare ?? current / 2) / wanted
            return min(max(target, current / 8), current * 0.97)
        }
        if behind {
            // A cut unless already catching up fast enough, or a rise when the share in force is well under what
            // minting keeps up with (behind on the deliveries of arrivals admitted before a cut).
            if target < current * 0.97 { return measured >= wanted ? nil : max(target, current / 8) }
            return target > current * 1.03 ? min(target, current * 1.25, Double(ArrivalAdmission.whole)) : nil
        }
        if measured < 1 && lead - Self.aimedLead < Self.horizon * (1 - measured) {
            let cut = max(target, current / 8)
            return cut < current * 0.97 ? cut : nil
        }
        if measured > 1 && target > current * 1.03 && lead >= Self.aimedLead / 2 && share < ArrivalAdmission.whole {
            // Up to what minting keeps up with, at most double at once with the lead wanted, a quarter with less.
            return min(target, current * (lead >= Self.aimedLead ? 2 : 1.25), Double(ArrivalAdmission.whole))
        }
        return nil
    }
}
