import Testing

@testable import PayStorm

/// The final probe's note on answers that said "not now" (429, 503).
struct FinalProbeBackOffTests {
    @Test func noteIsSilentWhenNoProbeWasLimited() {
        #expect(FinalProbe.BackOff().note == nil)
    }

    @Test func noteSaysEveryLimitedProbeWasAnsweredInTheEnd() {
        var backOff = FinalProbe.BackOff()
        (backOff.limited, backOff.tries, backOff.waited) = (87, 12, 11)
        #expect(
            backOff.note
                == "87 final probes were answered 429 or 503 (the target limits its rate, or was unavailable) and "
                + "asked again at the pace it allowed, after waiting 11 s in all: each was answered within 12 tries"
        )
    }

    @Test func noteSaysHowManyStayedLimitedAndThatTheirChecksAreUnknown() {
        var backOff = FinalProbe.BackOff()
        (backOff.limited, backOff.tries, backOff.waited, backOff.stillLimited) = (1, 7, 61, 1)
        #expect(
            backOff.note
                == "1 final probe was answered 429 or 503 (the target limits its rate, or was unavailable) and "
                + "asked again at the pace it allowed, after waiting 61 s in all: 1 still was after 7 tries, the "
                + "last 7 with none answered, and their checks are unknown"
        )
        // The waits add up to a minute, the window most rate limits count in.
        #expect(FinalProbe.BackOff.waits.reduce(0, +) == 61)
    }

    @Test func aRetryAfterLengthensAWaitUpToAMinute() {
        var backOff = FinalProbe.BackOff()
        let waits = [
            backOff.wait(afterStalledTries: 0, asked: nil), backOff.wait(afterStalledTries: 0, asked: 3),
            backOff.wait(afterStalledTries: 4, asked: 3), backOff.wait(afterStalledTries: 1, asked: 3600),
        ]
        #expect(waits == [1, 3, 8, 60])
        (backOff.limited, backOff.tries, backOff.waited) = (10, 3, 6)
        #expect(
            backOff.note
                == "10 final probes were answered 429 or 503 (the target limits its rate, or was unavailable) and "
                + "asked again at the pace it allowed, after waiting 6 s in all (each at least what its Retry-After "
                + "asked: up to 3600 s): each was answered within 3 tries"
        )
    }
}
