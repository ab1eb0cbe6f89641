import Profile
import Simulation
import Testing

/// Thinning at the source: which arrivals become actions, and that a thinned world replays exactly.
struct ArrivalAdmissionTests {
    static let start: Int64 = 1_800_000_000_000

    /// The descriptions of a world's actions, in order.
    static func actions(_ profile: Profile, admission: ArrivalAdmission? = nil) -> [String] {
        World(profile: profile, startMillis: start, admission: admission).map { String(describing: $0) }
    }

    @Test func wholeShareGeneratesTheWorldOfTheSeed() throws {
        let profile = try richProfile(seconds: 40)
        let admission = ArrivalAdmission(seed: profile.seed)
        #expect(Self.actions(profile, admission: admission) == Self.actions(profile))
        #expect(admission.changes.isEmpty)
        #expect(admission.counts.dropped == 0)
        #expect(admission.counts.arrivals > 0)
    }

    @Test(arguments: [1, 256, 512, 768])
    func shareAdmitsAboutItsPartOfTheArrivals(share: Int) throws {
        let profile = try richProfile(seconds: 60)
        let admission = ArrivalAdmission(seed: profile.seed)
        admission.setShare(share)
        _ = Self.actions(profile, admission: admission)
        let (arrivals, dropped) = admission.counts
        let admitted = Double(arrivals - dropped) / Double(arrivals)
        let expected = Double(share) / Double(ArrivalAdmission.whole)
        #expect(abs(admitted - expected) < 0.05, "admitted \(admitted) of the arrivals under share \(share)")
        #expect(admission.changes == [ArrivalAdmission.Change(arrival: 0, share: share)])
    }

    /// A world thinned while it was generated (the share changing as a run's pipeline would change it) is
    /// generated again, action for action, from the changes it recorded.
    @Test func thinnedWorldReplaysFromItsRecordedChanges() throws {
        let profile = try richProfile(seconds: 60)
        let live = ArrivalAdmission(seed: profile.seed)
        var world = World(profile: profile, startMillis: Self.start, admission: live)
        var original: [String] = []
        let shares = [1024, 700, 300, 90, 500, 1024, 200]
        while let action = world.next() {
            original.append(String(describing: action))
            if original.count % 150 == 0 { live.setShare(shares[(original.count / 150) % shares.count]) }
        }
        #expect(live.counts.dropped > 0)
        #expect(live.changes.count >= 4)

        let replay = ArrivalAdmission(seed: profile.seed, replaying: live.changes)
        replay.setShare(1)  // ignored: a replay plays the recorded changes only
        #expect(Self.actions(profile, admission: replay) == original)
        #expect(replay.counts == live.counts)
        #expect(replay.changes == live.changes)
        #expect(Self.actions(profile) != original)
    }

    @Test func sharesAreClampedToOneAndWhole() {
        let admission = ArrivalAdmission(seed: 1)
        admission.setShare(0)
        #expect(admission.share == 1)
        admission.setShare(5000)
        #expect(admission.share == ArrivalAdmission.whole)
    }

    /// The flow a run's admission control steers by: the actions each admitted arrival schedules are known when it
    /// arrives, while the ones it yields come later (another device's update follows its purchase), and the
    /// follow-ups (renewals, refunds decided later) are counted apart, as no share changes them.
    @Test func flowCountsWhatAdmittedArrivalsScheduleBeforeTheyYieldIt() throws {
        let profile = try richProfile(seconds: 60, devices: 3)
        let admission = ArrivalAdmission(seed: profile.seed)
        admission.setShare(512)
        var world = World(profile: profile, startMillis: Self.start, admission: admission)
        var early: ArrivalAdmission.Flow?
        var yielded: UInt64 = 0
        while let action = world.next() {
            yielded += 1
            if early == nil && action.at >= 3 { early = admission.flow }
        }
        let end = admission.flow
        let first = try #require(early)
        func perAdmitted(_ count: UInt64, _ flow: ArrivalAdmission.Flow) -> Double {
            Double(count) / Double(flow.arrivals - flow.dropped)
        }
        #expect(end.arrivals == admission.counts.arrivals && end.dropped == admission.counts.dropped)
        #expect(end.dropped > 0 && end.yielded <= yielded && end.scheduled + end.followUps >= end.yielded)
        #expect(end.followUps > 0)
        // Early on, part of what was scheduled is not yielded yet, and every admitted arrival scheduled something.
        #expect(first.scheduled + first.followUps > first.yielded)
        #expect(perAdmitted(first.scheduled, first) >= 1 && perAdmitted(end.scheduled, end) >= 1)
    }
}
