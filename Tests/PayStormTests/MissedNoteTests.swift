import Load
import Primitives
import Testing

@testable import PayStorm

struct MissedNoteTests {
    private static func totals(scheduled: Int, missed: Int) -> RequestCounts {
        var counts = RequestCounts()
        counts.scheduled = scheduled
        counts.missed = missed
        counts.sent = scheduled - missed
        return counts
    }

    /// A fresh-clone CI run's debug build missed 466 of 1,334 deliveries in bursts too short to make the run
    /// harness-limited, and the report said nothing of it.
    @Test func aRunThatMissedManySendsSaysTheVerdictCoversOnlyWhatWasSent() throws {
        let note = try #require(PayStormRun.missedNote(Self.totals(scheduled: 1_334, missed: 466)))
        #expect(note.hasPrefix("466 of 1334 deliveries (34.9%) were missed, never sent"))
        #expect(note.contains("the verdict covers only what was sent"))
    }

    @Test func aFewMissedSendsAreNotTold() {
        #expect(PayStormRun.missedNote(Self.totals(scheduled: 10_000, missed: 99)) == nil)
        #expect(PayStormRun.missedNote(Self.totals(scheduled: 10_000, missed: 100)) != nil)
        #expect(PayStormRun.missedNote(Self.totals(scheduled: 0, missed: 0)) == nil)
    }
}
