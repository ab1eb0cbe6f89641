import Testing

@testable import Load

struct LoadRecorderTests {
    func result(_ id: Int, at second: Double, status: Int = 200, error: LoadErrorClass? = nil) -> LoadResult {
        let received = Duration.milliseconds(Int64(second * 1000))
        return LoadResult(
            id: id,
            kind: "webhook",
            intended: received - .milliseconds(900),
            sent: received - .milliseconds(900),
            wireStart: received - .milliseconds(900),
            received: received,
            status: error == nil ? status : 0,
            error: error
        )
    }

    func stats(at second: Int, sent: Int, scheduled: Int) -> LoadEngineStats {
        var stats = LoadEngineStats()
        stats.elapsed = .seconds(second)
        stats.sent = sent
        stats.scheduled = scheduled
        return stats
    }

    @Test func statusLineSaysDrainingAfterTheSchedule() throws {
        var lines: [String] = []
        let recorder = try LoadRecorder(
            directory: nil,
            status: .plain(every: 1),
            plannedDuration: .seconds(6),
            printStatus: { lines.append($0) }
        )
        var running = stats(at: 2, sent: 20, scheduled: 20)
        running.inFlight = 5
        recorder.tick(running)
        var late = stats(at: 7, sent: 60, scheduled: 60)
        late.inFlight = 9
        recorder.tick(late)
        var draining = stats(at: 8, sent: 60, scheduled: 60)
        draining.inFlight = 4
        draining.draining = true
        recorder.tick(draining)
        #expect(lines.count == 3)
        #expect(lines[0].contains("remaining 4s"))
        #expect(lines[1].contains("past the schedule") && !lines[1].contains("remaining"))
        #expect(lines[2].contains("draining 4 in flight") && !lines[2].contains("remaining"))
    }
}
