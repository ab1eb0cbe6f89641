import Primitives
import Profile
import Synchronization

/// Which of the schedule's arrivals become actions: every one, unless PayStorm cannot keep up with its own
/// schedule and thins it at the source.
///
/// Under a rate above what the harness can sign, generating every intended action only to shed its deliveries
/// costs the world, the chaos stage and the oracle about as much as the deliveries that do go out, so sending
/// collapses as the overload grows. Like k6's arrival-rate executors, which drop the iterations they have no
/// capacity to start and count them (`dropped_iterations`), a run's mint pipeline lowers the admitted share of
/// arrivals while it is behind; a dropped arrival never becomes an action, so nothing downstream pays for it
/// and the oracle owes nothing for it. Follow-ups of admitted actions (renewals, refunds decided later) are
/// never dropped.
///
/// The decision is a pure function of the seed, the arrival's index and the share in force, so a run replays
/// exactly from the ``changes`` it made (``init(seed:replaying:)``): the share is recorded each time it
/// changes, at the index of the first arrival it applied to.
///
/// ```swift
/// let admission = ArrivalAdmission(seed: profile.seed)
/// var world = World(profile: profile, startMillis: start, admission: admission)
/// admission.setShare(512)  // from now on about half the arrivals become actions
/// ```
public final class ArrivalAdmission: Sendable {
    /// The unit of a share: ``whole`` admits every arrival, `whole / 2` about half.
    public static let whole = 1024

    /// A share that took effect at an arrival, as recorded for a replay.
    public struct Change: Sendable, Hashable, Codable {
        /// The index (from 0) of the first arrival the share applied to.
        public var arrival: UInt64
        /// The admitted share, in 1/``ArrivalAdmission/whole`` units.
        public var share: Int

        /// Creates a change.
        public init(arrival: UInt64, share: Int) {
            self.arrival = arrival
            self.share = share
        }
    }

    private struct State {
        /// The share the next arrival is admitted under.
        var share = ArrivalAdmission.whole
        /// The share asked for (``setShare(_:)``), applied from the next arrival on.
        var requested = ArrivalAdmission.whole
        var changes: [Change] = []
        /// For a replay: the recorded changes not yet reached.
        var pending: ArraySlice<Change> = []
        var flow = Flow()
    }

    /// What the world has done with the arrivals it reached, for the control that sets the share: how many it
    /// dropped, the actions the admitted ones scheduled as they arrived (due now or later), the actions scheduled
    /// since by the jobs that follow them (renewals, refunds decided later), and the actions yielded so far.
    public struct Flow: Sendable, Hashable {
        /// Arrivals reached, and of them dropped.
        public var arrivals: UInt64 = 0
        public var dropped: UInt64 = 0
        /// Actions admitted arrivals scheduled as they arrived, due now or later: their count per admitted arrival
        /// is what an arrival yields, known when it arrives, while the actions yielded come up to a second later.
        public var scheduled: UInt64 = 0
        /// Actions scheduled by follow-up jobs as they ran, about when they are due: what no share changes.
        public var followUps: UInt64 = 0
        /// Actions the world has yielded.
        public var yielded: UInt64 = 0

        /// A flow of nothing yet.
        public init() {}
    }

    private let salt: UInt64
    private let replaying: Bool
    private let state: Mutex<State>

    /// An admission that admits every arrival until told otherwise (``setShare(_:)``).
    /// - Parameter seed: the run's seed, so the arrivals a share drops replay with it.
    public init(seed: UInt64) {
        salt = SplitMix64.mix(seed ^ 0xAD31_7700_0000_0000)
        replaying = false
        state = Mutex(State())
    }

    /// An admission that plays recorded changes back, so a thinned run's world is generated again exactly;
    /// ``setShare(_:)`` is then ignored.
    /// - Parameters:
    ///   - seed: the seed of the run that recorded them.
    ///   - changes: its ``changes``, in order of arrival.
    public init(seed: UInt64, replaying changes: [Change]) {
        salt = SplitMix64.mix(seed ^ 0xAD31_7700_0000_0000)
        replaying = true
        state = Mutex(State(pending: changes.sorted { $0.arrival < $1.arrival }[...]))
    }

    /// Asks for a share (clamped to 1...``whole``), applied from the next arrival on; ignored while replaying.
    public func setShare(_ share: Int) {
        guard !replaying else { return }
        state.withLock { $0.requested = min(max(share, 1), Self.whole) }
    }

    /// The share in force (the last one asked for, once an arrival has seen it).
    public var share: Int { state.withLock { $0.requested } }

    /// Whether the next arrival becomes an action; the world asks once per arrival, in order, telling how many
    /// actions it has scheduled and yielded so far (``Flow``).
    func admitsNext(scheduled: UInt64 = 0, followUps: UInt64 = 0, yielded: UInt64 = 0) -> Bool {
        state.withLock { s in
            let index = s.flow.arrivals
            s.flow.arrivals += 1
            s.flow.scheduled = scheduled
            s.flow.followUps = followUps
            s.flow.yielded = yielded
            if replaying {
                while let next = s.pending.first, next.arrival <= index {
                    s.share = next.share
                    s.changes.append(next)
                    s.pending.removeFirst()
                }
            } else if s.requested != s.share {
                s.share = s.requested
                s.changes.append(Change(arrival: index, share: s.share))
            }
            guard s.share < Self.whole else { return true }
            let admitted = Int(SplitMix64.mix(salt ^ index) & UInt64(Self.whole - 1)) < s.share
            if !admitted { s.flow.dropped += 1 }
            return admitted
        }
    }

    /// The changes of share applied so far, for a replay (empty while every arrival is admitted under the whole
    /// share); a replay's are the recorded ones it has reached.
    public var changes: [Change] { state.withLock { $0.changes } }

    /// The world's flow so far (see ``Flow``).
    public var flow: Flow { state.withLock { $0.flow } }

    /// The arrivals the world has reached so far, and how many of them it dropped.
    public var counts: (arrivals: UInt64, dropped: UInt64) { state.withLock { ($0.flow.arrivals, $0.flow.dropped) } }
}
