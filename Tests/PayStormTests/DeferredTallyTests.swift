import Chaos
import Load
import Testing

@testable import PayStorm

/// Deliveries the target answered "retry later": counted by kind among the errors, and said in one note.
struct DeferredTallyTests {
    @Test func deferralsAreCountedByKindAndSaidOnce() {
        var tally = DeferredTally()
        #expect(tally.note == nil)
        tally.record(answer(429, kind: "device"), outcome: .rejected(status: 429))
        tally.record(answer(200, kind: "device"), outcome: .acknowledged(status: 200))
        tally.record(answer(429, kind: "device"), outcome: .deferred(status: 429))
        tally.record(answer(429, kind: "device"), outcome: .deferred(status: 429))
        tally.record(answer(503, kind: "webhook"), outcome: .deferred(status: 503))
        #expect(tally.counts == ["device": 2, "webhook": 1])
        #expect(
            tally.note
                == "3 deliveries were answered \"retry later\" (HTTP 429, 503: 2 device, 1 webhook): the target limits "
                + "its rate or is busy. They count as errors in the error rate and its thresholds, not as refusals: a "
                + "device keeps such a transaction unfinished and delivers it again at its next launch (a purchase "
                + "whose last device delivery was deferred is held on the device, never lost), and the App Store "
                + "retries a webhook on its schedule"
        )
    }
}
