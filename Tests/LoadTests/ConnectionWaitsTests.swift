import Testing

@testable import Load

@Suite struct ConnectionWaitsTests {
    private func result(waitMillis: Int64, error: LoadErrorClass? = nil) -> LoadResult {
        LoadResult(
            id: 1,
            kind: "webhook",
            intended: .seconds(1),
            sent: .seconds(1),
            wireStart: .seconds(1) + .milliseconds(waitMillis),
            received: .seconds(2),
            status: error == nil ? 200 : 0,
            error: error
        )
    }

    @Test func saysNothingWhenFewerThanOneInAHundredWaited() {
        var waits = ConnectionWaits()
        for _ in 0..<199 { waits.record(result(waitMillis: 1)) }
        waits.record(result(waitMillis: 500))
        #expect(waits.waited == 1)
        #expect(waits.note(connections: 32) == nil)
    }

    @Test func namesTheShareTheLongestWaitAndThePool() throws {
        var waits = ConnectionWaits()
        for _ in 0..<90 { waits.record(result(waitMillis: 0)) }
        for millis in [20, 98, 40, 10, 11, 12, 13, 14, 15, 16] { waits.record(result(waitMillis: Int64(millis))) }
        let note = try #require(waits.note(connections: 8))
        #expect(note.hasPrefix("10 of 100 requests (10.0%) waited at least 10 ms for a connection (longest 98 ms)"))
        #expect(note.contains("all 8 per host were busy"))
        #expect(note.contains("target.connections"))
    }

    @Test func countsRequestsTheTransportResentAndSaysSoOnlyThen() throws {
        var waits = ConnectionWaits()
        for _ in 0..<9 { waits.record(result(waitMillis: 0)) }
        #expect(waits.resentNote == nil)
        var resent = result(waitMillis: 0)
        resent.resent = true
        waits.record(resent)
        let note = try #require(waits.resentNote)
        #expect(waits.resent == 1)
        #expect(note.hasPrefix("1 of 10 requests were sent a second time on a new connection"))
        #expect(note.contains("\"resent\": true"))
    }

    @Test func leavesOutRequestsTheEngineNeverHandedOver() {
        var waits = ConnectionWaits()
        waits.record(result(waitMillis: 0, error: .missed))
        #expect(waits.requests == 0)
        #expect(waits.note(connections: 32) == nil)
    }
}
