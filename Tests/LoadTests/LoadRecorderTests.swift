import Foundation
import Primitives
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

    @Test func missedInBulkCountsAsThatManyMissedResults() throws {
        let one = try LoadRecorder(directory: nil)
        let bulk = try LoadRecorder(directory: nil)
        for id in 0..<3 { one.record(result(id, at: 0.5, error: .missed)) }
        one.record(result(3, at: 0.5))
        bulk.recordMissed(kind: "webhook", count: 3)
        bulk.recordMissed(kind: "webhook", count: 0)
        bulk.record(result(3, at: 0.5))
        #expect(bulk.totals == one.totals)
        #expect(bulk.totals.missed == 3 && bulk.totals.scheduled == 4)
        one.tick(stats(at: 1, sent: 1, scheduled: 4))
        bulk.tick(stats(at: 1, sent: 1, scheduled: 4))
        #expect(bulk.timeseries == one.timeseries)
        #expect(bulk.timeseries.first?.errors["missed"] == 3)
    }

    /// A live endpoint reads the snapshot published at each tick; what came after the last tick (the final
    /// probe's requests) is published by `finish`, so the last scrape agrees with the summary.
    @Test func finishPublishesWhatCameAfterTheLastTick() throws {
        let snapshots = LoadSnapshots()
        let recorder = try LoadRecorder(directory: nil, snapshots: snapshots)
        recorder.record(result(0, at: 0.5))
        recorder.tick(stats(at: 1, sent: 1, scheduled: 1))
        #expect(snapshots.latest.totals.sent == 1)
        for id in 1..<4 { recorder.record(result(id, at: 1.5, status: 500)) }
        let summary = recorder.finish(stats(at: 2, sent: 4, scheduled: 4), writesSummary: false)
        #expect(snapshots.latest.totals == summary.totals)
        #expect(snapshots.latest.totals.sent == 4)
        #expect(snapshots.latest.kinds["webhook"]?.statusClasses["5xx"] == 3)
        #expect(snapshots.latest.stats.elapsed == .seconds(2))
    }

    /// `non_2xx` split by the classes a reader looks for: a 4xx the caller took as success (a 409 "already had
    /// it") is not a failed 4xx; the split is per second, like every column.
    @Test func timeseriesCountsFailed4xxAnd5xxPerSecond() throws {
        let recorder = try LoadRecorder(directory: nil)
        recorder.record(result(0, at: 0.5, status: 404))
        recorder.record(result(1, at: 0.5, status: 409), succeeded: true)
        recorder.record(result(2, at: 0.5, status: 503))
        recorder.record(result(3, at: 0.5, status: 500))
        recorder.record(result(4, at: 0.5, status: 302))
        recorder.record(result(5, at: 0.5, error: .timeout))
        recorder.tick(stats(at: 1, sent: 6, scheduled: 6))
        recorder.record(result(6, at: 1.5, status: 500))
        recorder.tick(stats(at: 2, sent: 7, scheduled: 7))
        let rows = recorder.timeseries
        #expect(rows.map(\.failed4xx) == [1, 0] && rows.map(\.failed5xx) == [2, 1])
        #expect(rows[0].non2xx == 4)
        #expect(TimeseriesRow.csvHeader.hasSuffix(",unsent,http_4xx,http_5xx"))
        #expect(rows[0].csvLine.hasSuffix(",0,1,2"))
    }

    @Test func countsRequestsTheTransportResentByKind() throws {
        let recorder = try LoadRecorder(directory: nil)
        var resent = result(0, at: 0.5)
        resent.resent = true
        recorder.record(resent)
        recorder.record(result(1, at: 0.5))
        #expect(recorder.totals.resent == 1 && recorder.totals.sent == 2)
        #expect(recorder.kinds["webhook"]?.resent == 1)
    }

    /// Results of several kinds, interleaved and in runs, and missed ones in bulk: each kind counts its own.
    @Test func countsEachKindWhenKindsInterleave() throws {
        let recorder = try LoadRecorder(directory: nil)
        let kinds = ["webhook", "device", "device", "probe", "webhook", "webhook", "device"]
        for (id, kind) in kinds.enumerated() {
            var each = result(id, at: 0.5, status: kind == "probe" ? 500 : 200)
            each.kind = kind
            recorder.record(each)
            if id == 3 { recorder.recordMissed(kind: "webhook", count: 2) }
        }
        #expect(recorder.kinds["webhook"]?.sent == 3 && recorder.kinds["webhook"]?.missed == 2)
        #expect(recorder.kinds["device"]?.sent == 3 && recorder.kinds["device"]?.ok == 3)
        #expect(recorder.kinds["probe"]?.sent == 1 && recorder.kinds["probe"]?.ok == 0)
        #expect(recorder.latencyByKind.mapValues(\.totalCount) == ["webhook": 3, "device": 3, "probe": 1])
    }

    @Test func perSecondFailuresCountResultsNotSendsMinusSuccesses() throws {
        let recorder = try LoadRecorder(directory: nil)
        // Second 1: 30 sends, no answer yet.
        recorder.tick(stats(at: 1, sent: 30, scheduled: 30))
        // Second 2: the 30 answers arrive (all 200) and nothing new is sent.
        for id in 0..<30 { recorder.record(result(id, at: 1.5)) }
        recorder.tick(stats(at: 2, sent: 30, scheduled: 30))
        // Second 3: 4 sends, answered 500, a timeout, a reset and 200; one more send is missed.
        recorder.record(result(30, at: 2.5, status: 500))
        recorder.record(result(31, at: 2.5, error: .timeout))
        recorder.record(result(32, at: 2.5, error: .reset))
        recorder.record(result(33, at: 2.5))
        recorder.record(result(34, at: 2.5, error: .missed))
        recorder.tick(stats(at: 3, sent: 34, scheduled: 35))
        let rows = recorder.timeseries
        #expect(rows.map(\.second) == [1, 2, 3])
        // Sends minus successes, as the run report used to chart it, goes negative in second 2.
        #expect(rows[1].sent - rows[1].ok == -30)
        #expect(rows.map(\.failed) == [0, 0, 3])
        #expect(rows.allSatisfy { $0.failed >= 0 })
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

    @Test func summaryJSONIsWrittenOnlyWhenTheCallerDoesNotWriteItsOwn() throws {
        for writes in [true, false] {
            let directory = FileManager.default.temporaryDirectory
                .appendingPathComponent("recorder-\(UInt64.random(in: 0...UInt64.max))").path
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let recorder = try LoadRecorder(directory: directory)
            recorder.finish(stats(at: 1, sent: 0, scheduled: 0), writesSummary: writes)
            #expect(FileManager.default.fileExists(atPath: directory + "/summary.json") == writes)
        }
    }
}
