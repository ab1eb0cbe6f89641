import Testing

@testable import PayStorm

/// Safety probes during the run: one waiting per account, none after the schedule, and a target's Retry-After
/// holds them all.
struct SafetyProbeScheduleTests {
    /// Pops every probe due, with its time.
    func drain(_ schedule: inout SafetyProbeSchedule) -> [(String, Double)] {
        var taken: [(String, Double)] = []
        while let time = schedule.firstTime, let account = schedule.pop() { taken.append((account, time)) }
        return taken
    }

    @Test func keepsOneProbePerAccountAndNoneAfterTheSchedule() {
        var schedule = SafetyProbeSchedule(endOfSchedule: 10)
        let first = schedule.schedule("a", at: 2)
        let second = schedule.schedule("a", at: 3)
        let late = schedule.schedule("b", at: 11)
        #expect(first && !second && !late)
        #expect(drain(&schedule).map(\.0) == ["a"])
        let next = schedule.schedule("a", at: 4)
        #expect(next, "a probe taken leaves room for the next")
    }

    @Test func aRetryAfterHoldsEveryProbeAndProbesTheLimitedAccountAgainThen() {
        var schedule = SafetyProbeSchedule(endOfSchedule: 10)
        _ = schedule.schedule("b", at: 2.5)
        _ = schedule.schedule("c", at: 6)
        schedule.rateLimited("a", retryAfter: 3, at: 2)
        _ = schedule.schedule("d", at: 4)
        let taken = drain(&schedule)
        #expect(taken.map(\.0) == ["b", "a", "d", "c"])
        #expect(taken.map(\.1) == [5, 5, 5, 6])
        #expect(schedule.rateLimited.count == 1 && schedule.rateLimited.sentAgain == 1)
    }

    @Test func aLimitWithoutRetryAfterOrPastTheScheduleIsOnlyCounted() {
        var schedule = SafetyProbeSchedule(endOfSchedule: 10)
        schedule.rateLimited("a", retryAfter: nil, at: 2)
        schedule.rateLimited("b", retryAfter: 30, at: 2)
        _ = schedule.schedule("c", at: 3)
        #expect(drain(&schedule).isEmpty, "held past the schedule: the final probe reads them")
        #expect(schedule.rateLimited.count == 2 && schedule.rateLimited.sentAgain == 0)
        #expect(
            schedule.rateLimited.note
                == "2 safety probes during the run were answered 429 (the target limits its rate): they read nothing, "
                + "so they decided nothing and count as no check; a longer target.probe.intervalSeconds probes within "
                + "the limit (0: only the final probe, which backs off)"
        )
    }
}
