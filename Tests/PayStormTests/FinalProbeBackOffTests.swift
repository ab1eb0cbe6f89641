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
        (backOff.limited, backOff.tries, backOff.waited, backOff.stillLimited) = (1, 7, 60, 1)
        #expect(
            backOff.note
                == "1 final probe was answered 429 or 503 (the target limits its rate, or was unavailable) and "
                + "asked again at the pace it allowed, after waiting 60 s in all: 1 still was after 7 tries and a "
                + "minute of waiting with none answered, and their checks are unknown"
        )
    }

    /// The "a minute in all" of docs/mapping-your-backend.md: the waits after tries that got nothing answered.
    @Test func waitsWithNoneAnsweredAddUpToAMinute() {
        var backOff = FinalProbe.BackOff()
        let waits = (1...7).map { backOff.wait(afterStalledTries: $0, asked: nil) }
        #expect(waits == [1, 2, 4, 8, 15, 30, nil])
        #expect(FinalProbe.BackOff.waits.reduce(0, +) == 60)
    }

    @Test func aRetryAfterLengthensAWaitWithinTheMinute() {
        var backOff = FinalProbe.BackOff()
        let waits = [
            backOff.wait(afterStalledTries: 0, asked: nil), backOff.wait(afterStalledTries: 0, asked: 3),
            backOff.wait(afterStalledTries: 1, asked: 3), backOff.wait(afterStalledTries: 2, asked: 40),
            backOff.wait(afterStalledTries: 3, asked: 40), backOff.wait(afterStalledTries: 4, asked: nil),
        ]
        #expect(waits == [1, 3, 3, 40, 17, nil])
        (backOff.limited, backOff.tries, backOff.waited) = (10, 3, 6)
        #expect(
            backOff.note
                == "10 final probes were answered 429 or 503 (the target limits its rate, or was unavailable) and "
                + "asked again at the pace it allowed, after waiting 6 s in all (each at least what its Retry-After "
                + "asked: up to 40 s): each was answered within 3 tries"
        )
    }

    /// A target answering 429 with `Retry-After: 99999` to every probe held a run for six minutes.
    @Test func aRetryAfterOfDaysEndsTheBackOffAfterAMinute() {
        var backOff = FinalProbe.BackOff()
        let waits = (1...7).map { backOff.wait(afterStalledTries: $0, asked: 99999) }
        #expect(waits == [60, nil, nil, nil, nil, nil, nil])
        // A try that got some answered waits at most a minute for the rest.
        #expect(backOff.wait(afterStalledTries: 0, asked: 99999) == 60)
        (backOff.limited, backOff.tries, backOff.waited, backOff.stillLimited) = (3, 2, 60, 3)
        #expect(
            backOff.note?.contains("its Retry-After asked for up to 99999 s; PayStorm waits at most a minute") == true
        )
    }
}
