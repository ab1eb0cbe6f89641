import Foundation
import Load
import PayStorm
import Primitives
import Reporting
import RunControl
import Testing

@testable import ShardMerge

/// `paystorm merge`: shard summaries combined exactly, thresholds judged on the merged figures, and the
/// refusals (shards of other runs, a shard twice, shards missing).
struct MergeTests {
    /// A shard's report: `sent` requests to `webhook`, all 2xx, with latencies `micros` (µs).
    static func shard(
        _ index: Int,
        of count: Int,
        seed: UInt64 = 42,
        micros: [Int64],
        thresholds: [String] = [],
        tally: ShardTally = ShardTally(passed: 10, failed: 0, unknown: 0)
    ) -> RunReport {
        var histogram = Histogram()
        for value in micros { histogram.record(value) }
        let counts = RequestCounts(
            scheduled: micros.count,
            sent: micros.count,
            ok: micros.count,
            statusClasses: ["2xx": micros.count],
            errors: [:],
            missed: 0
        )
        let encoded = HistogramCodec.encodeBase64(histogram)
        let figures = ShardFigures(
            counts: ["all": counts, "webhook": counts],
            histograms: [
                "all.intended": encoded, "all.service": encoded, "webhook.intended": encoded,
                "webhook.service": encoded,
            ],
            late: 1,
            durationSeconds: 10,
            tallies: ["no-double-grant": tally],
            unchecked: [:]
        )
        return RunReport(
            toolVersion: "paystorm test",
            profile: "tiny",
            seed: seed,
            startedAt: Date(timeIntervalSince1970: 1_700_000_000),
            endedAt: Date(timeIntervalSince1970: 1_700_000_020),
            target: "test",
            verdict: .pass,
            exitCode: 0,
            requests: ReportedRequests(
                RequestCounts(scheduled: micros.count, sent: micros.count, ok: micros.count),
                late: 1
            ),
            thresholds: thresholds.map { ThresholdResult(expression: $0, observed: "-", passed: true) },
            faults: ["duplicate": 1],
            shard: ShardInfo(
                index: index,
                count: count,
                profilePath: "tiny.json5",
                figures: figures,
                run: OneRunTests.run
            )
        )
    }

    /// Writes each report as `summary.json` into its own folder under a fresh temporary directory.
    static func folders(_ reports: [RunReport]) throws -> (root: URL, folders: [String]) {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("merge-\(UUID().uuidString)")
        var folders: [String] = []
        for (index, report) in reports.enumerated() {
            let folder = root.appendingPathComponent("shard-\(index)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try Data(ReportWriter.summaryJSON(report).utf8).write(to: folder.appendingPathComponent("summary.json"))
            folders.append(folder.path)
        }
        return (root, folders)
    }

    @Test func sumsCountsAndAddsHistogramsExactly() throws {
        // Shard 0 is fast, shard 1 slow: the merged p99 is the slow one's, which no average of shard
        // percentiles gives.
        let fast = Array(repeating: Int64(1_000), count: 98)
        let slow = Array(repeating: Int64(500_000), count: 2)
        let (root, folders) = try Self.folders([Self.shard(0, of: 2, micros: fast), Self.shard(1, of: 2, micros: slow)])
        defer { try? FileManager.default.removeItem(at: root) }
        let outcome = try PayStormMerge.execute(directories: folders, out: root.appendingPathComponent("merged").path)
        let report = outcome.report
        #expect(report.requests.counts.sent == 100 && report.requests.counts.ok == 100 && report.requests.late == 2)
        #expect(report.faults == ["duplicate": 2])
        var whole = Histogram()
        for value in fast + slow { whole.record(value) }
        let all = try #require(report.latency.first { $0.kind == "all" && $0.measure == "intended" })
        #expect(all.count == 100)
        // The same figures as one histogram of every value, stored the way shards store theirs (a decoded
        // histogram knows its extremes to the bucket, 3 significant digits, not to the microsecond).
        let stored = try HistogramCodec.decodeBase64(HistogramCodec.encodeBase64(whole))
        #expect(all.micros == LatencyFigures(kind: "all", measure: "intended", histogram: stored).micros)
        #expect(all.micros["p99"]! >= 500_000 && all.micros["p50"]! < 2_000)
        #expect(report.invariants.first { $0.name == "no-double-grant" }?.status == .passed)
        #expect(report.verdict == .pass && report.exitCode == 0)
        for name in ReportWriter.fileNames {
            #expect(FileManager.default.fileExists(atPath: outcome.folder.appendingPathComponent(name).path))
        }
    }

    /// The request hook's time (`all.hook` among a shard's histograms) merges exactly like the other measures,
    /// listed after them as a run lists it, and never counts as a request's latency.
    @Test func addsTheRequestHooksTimeExactly() throws {
        func withHook(_ report: RunReport, _ micros: [Int64]) -> RunReport {
            var histogram = Histogram()
            for value in micros { histogram.record(value) }
            var report = report
            report.shard?.figures?.histograms["all.hook"] = HistogramCodec.encodeBase64(histogram)
            return report
        }
        let fast = Array(repeating: Int64(200), count: 99)
        let (root, folders) = try Self.folders([
            withHook(Self.shard(0, of: 2, micros: [1_000]), fast),
            withHook(Self.shard(1, of: 2, micros: [1_000]), [90_000]),
        ])
        defer { try? FileManager.default.removeItem(at: root) }
        let report = try PayStormMerge.execute(directories: folders, out: root.appendingPathComponent("merged").path)
            .report
        let hook = try #require(report.latency.first { $0.measure == "hook" }, "\(report.latency)")
        #expect(hook.kind == "all" && hook.count == 100)
        #expect(hook.micros["max"]! >= 90_000 && hook.micros["p50"]! < 300)
        #expect(report.latency.last?.measure == "hook")
        #expect(report.latency.filter { $0.measure != "hook" }.allSatisfy { $0.count == 2 }, "\(report.latency)")
    }

    /// Resent requests are summed like the other counts, and a shard written before they were counted (no
    /// `resent` key in its `summary.json`) still merges, as 0 resent.
    @Test func sumsResentRequestsAndReadsShardsWrittenBeforeThem() throws {
        var resending = Self.shard(0, of: 2, micros: Array(repeating: 1_000, count: 10))
        resending.requests.counts.resent = 3
        let (root, folders) = try Self.folders([resending, Self.shard(1, of: 2, micros: [1_000])])
        defer { try? FileManager.default.removeItem(at: root) }
        let older = URL(fileURLWithPath: folders[1]).appendingPathComponent("summary.json")
        let text = try String(contentsOf: older, encoding: .utf8)
        let withoutResent = text.replacingOccurrences(of: "\"resent\" : 0,", with: "")
        #expect(withoutResent != text)
        try Data(withoutResent.utf8).write(to: older)
        let report = try PayStormMerge.execute(directories: folders, out: root.appendingPathComponent("m").path).report
        #expect(report.requests.counts.resent == 3 && report.requests.counts.sent == 11)
    }

    /// The merged report names the namespace the shards shared, and none when each drew its own (each
    /// witness's replay line still names its shard's).
    @Test func namesTheNamespaceTheShardsShared() throws {
        func merged(_ namespaces: [String?]) throws -> String? {
            let reports = namespaces.enumerated().map { index, namespace in
                var report = Self.shard(index, of: namespaces.count, micros: [1_000])
                report.namespace = namespace
                return report
            }
            let (root, folders) = try Self.folders(reports)
            defer { try? FileManager.default.removeItem(at: root) }
            return try PayStormMerge.execute(directories: folders, out: root.appendingPathComponent("merged").path)
                .report.namespace
        }
        #expect(try merged(["0000000000005a17", "0000000000005a17"]) == "0000000000005a17")
        #expect(try merged(["0000000000005a17", "00000000000000b2"]) == nil)
        #expect(try merged([nil, nil]) == nil)
    }

    @Test func judgesThresholdsOnTheMergedFigures() throws {
        // Each shard's p99 (1 ms, and 1 ms) holds; together 2 of 100 requests took 500 ms, so the run's p99 does not.
        let fast = Array(repeating: Int64(1_000), count: 49)
        let threshold = ["p99 < 100ms"]
        let reports = [
            Self.shard(0, of: 2, micros: fast + [500_000], thresholds: threshold),
            Self.shard(1, of: 2, micros: fast + [500_000], thresholds: threshold),
        ]
        let (root, folders) = try Self.folders(reports)
        defer { try? FileManager.default.removeItem(at: root) }
        let report = try PayStormMerge.execute(directories: folders, out: root.appendingPathComponent("m").path).report
        #expect(report.thresholds.count == 1)
        #expect(report.thresholds.first?.passed == false)
        #expect(report.verdict == .fail && report.exitCode == ExitCode.thresholdBreached.rawValue)
    }

    /// A latency threshold the merged figures breach is unknown, not breached, when a shard fell behind its own
    /// schedule: its latency then includes PayStorm's delay, as in a run.
    @Test func harnessLimitedShardLeavesLatencyThresholdsUnknown() throws {
        let fast = Array(repeating: Int64(1_000), count: 49)
        let threshold = ["p99 < 100ms"]
        var behind = Self.shard(1, of: 2, micros: fast + [500_000], thresholds: threshold)
        behind.harnessLimited = HarnessLimit(
            fromSeconds: 3,
            deliveriesPerSecond: 9_000,
            reason: "minting behind the schedule",
            actions: HarnessLimit.DroppedActions(scheduled: 1_000, dropped: 400)
        )
        let reports = [Self.shard(0, of: 2, micros: fast + [500_000], thresholds: threshold), behind]
        let (root, folders) = try Self.folders(reports)
        defer { try? FileManager.default.removeItem(at: root) }
        let report = try PayStormMerge.execute(directories: folders, out: root.appendingPathComponent("m").path).report
        let limit = try #require(report.harnessLimited)
        #expect(limit.fromSeconds == 3 && limit.reason == "minting behind the schedule in shard 1")
        #expect(limit.actions == HarnessLimit.DroppedActions(scheduled: 1_000, dropped: 400))
        let result = try #require(report.thresholds.first)
        #expect(result.unknown?.contains("harness-limited from 3 s") == true)
        #expect(report.exitCode != ExitCode.thresholdBreached.rawValue)
    }

    /// Held purchases are judged on the shards' sums, as a run judges them: one shard held none of its 10
    /// purchases, the other 6 of its 10, so 6 of 20 (more than a fifth) were held and the merge is unknown.
    @Test func purchasesHeldAcrossShardsAreJudgedOnTheirSum() throws {
        func shard(_ index: Int, held: Int) -> RunReport {
            var report = Self.shard(index, of: 2, micros: [1_000])
            report.shard?.figures?.heldPurchases = held
            report.shard?.figures?.genuinePurchases = 10
            return report
        }
        let (root, folders) = try Self.folders([shard(0, held: 0), shard(1, held: 6)])
        defer { try? FileManager.default.removeItem(at: root) }
        let report = try PayStormMerge.execute(directories: folders, out: root.appendingPathComponent("m").path).report
        #expect(report.verdict == .unknown && report.exitCode == ExitCode.unknown.rawValue)
        #expect(
            report.reasons.contains { $0.contains("6 of 20 genuine purchases were still held") },
            "\(report.reasons)"
        )
    }

    /// Each shard passes with 4 of no-lost-purchase's 18 checks undecided (under the floor of 5), but the merge
    /// holds 8 of 36 beside 2 of 400 others': judged like a run, one invariant too undecided leaves it unknown.
    @Test func invariantTooUndecidedOnTheShardsSumLeavesTheMergeUnknown() throws {
        func shard(_ index: Int) -> RunReport {
            var report = Self.shard(
                index,
                of: 2,
                micros: [1_000],
                tally: ShardTally(passed: 199, failed: 0, unknown: 1)
            )
            report.shard?.figures?.tallies["no-lost-purchase"] = ShardTally(passed: 14, failed: 0, unknown: 4)
            return report
        }
        let (root, folders) = try Self.folders([shard(0), shard(1)])
        defer { try? FileManager.default.removeItem(at: root) }
        let report = try PayStormMerge.execute(directories: folders, out: root.appendingPathComponent("m").path).report
        #expect(report.invariantVerdict == .unknown && report.exitCode == ExitCode.unknown.rawValue)
        #expect(
            report.reasons.contains { $0.contains("no-lost-purchase: 8 of 36 checks could not decide") },
            "\(report.reasons)"
        )
        // The invariant itself reads unknown (a skipped JUnit case), not passed; the others still pass.
        let statuses = Dictionary(uniqueKeysWithValues: report.invariants.map { ($0.name, $0.status) })
        #expect(statuses["no-lost-purchase"] == .unknown && statuses["no-double-grant"] == .passed)
    }

    @Test func aViolationInOneShardFailsTheMerge() throws {
        let reports = [
            Self.shard(0, of: 2, micros: [1_000]),
            Self.shard(1, of: 2, micros: [1_000], tally: ShardTally(passed: 3, failed: 1, unknown: 0)),
        ]
        let (root, folders) = try Self.folders(reports)
        defer { try? FileManager.default.removeItem(at: root) }
        let report = try PayStormMerge.execute(directories: folders, out: root.appendingPathComponent("m").path).report
        #expect(report.invariantVerdict == .fail && report.exitCode == ExitCode.violation.rawValue)
    }

    @Test func refusesShardsOfDifferentRuns() throws {
        let (root, folders) = try Self.folders([
            Self.shard(0, of: 2, micros: [1]), Self.shard(1, of: 2, seed: 7, micros: [1]),
        ])
        defer { try? FileManager.default.removeItem(at: root) }
        #expect {
            _ = try PayStormMerge.execute(directories: folders, out: root.appendingPathComponent("m").path)
        } throws: { error in
            guard case .badInput(let message) = error as? RunError else { return false }
            return message.contains("seed 7 differs from 42")
        }
    }

    @Test func refusesAShardGivenTwice() throws {
        let (root, folders) = try Self.folders([Self.shard(1, of: 2, micros: [1]), Self.shard(1, of: 2, micros: [1])])
        defer { try? FileManager.default.removeItem(at: root) }
        #expect {
            _ = try PayStormMerge.execute(directories: folders, out: root.appendingPathComponent("m").path)
        } throws: { error in
            guard case .badInput(let message) = error as? RunError else { return false }
            return message.contains("shard 1 is also in")
        }
    }

    @Test(arguments: ["sent", "missed", "late", "failed"])
    func refusesANegativeCountNamingIt(field: String) throws {
        var report = Self.shard(0, of: 2, micros: [1, 2])
        switch field {
        case "sent": report.shard?.figures?.counts["webhook"]?.sent = -5
        case "missed": report.shard?.figures?.counts["all"]?.missed = -1
        case "late": report.shard?.figures?.late = -3
        default: report.shard?.figures?.tallies["no-double-grant"]?.failed = -1
        }
        let (root, folders) = try Self.folders([report, Self.shard(1, of: 2, micros: [1])])
        defer { try? FileManager.default.removeItem(at: root) }
        #expect {
            _ = try PayStormMerge.execute(directories: folders, out: root.appendingPathComponent("m").path)
        } throws: { error in
            guard case .badInput(let message) = error as? RunError else { return false }
            return message.contains("shard.figures.") && message.contains(".\(field) is negative")
                || (field == "late" && message.contains("shard.figures.late is negative"))
        }
    }

    @Test func namesTheMissingShards() throws {
        let (root, folders) = try Self.folders([Self.shard(1, of: 4, micros: [1])])
        defer { try? FileManager.default.removeItem(at: root) }
        #expect {
            _ = try PayStormMerge.execute(directories: folders, out: root.appendingPathComponent("m").path)
        } throws: { error in
            guard case .noInput(let message) = error as? RunError else { return false }
            return message == "missing shards 0, 2, 3 of 4"
        }
    }

    @Test func refusesAWholeRunsReport() throws {
        var whole = Self.shard(0, of: 1, micros: [1])
        whole.shard = nil
        let (root, folders) = try Self.folders([whole])
        defer { try? FileManager.default.removeItem(at: root) }
        #expect {
            _ = try PayStormMerge.execute(directories: folders, out: root.appendingPathComponent("m").path)
        } throws: { error in
            guard case .badInput(let message) = error as? RunError else { return false }
            return message.contains("not a shard's report")
        }
    }

    @Test func refusesToWriteIntoAShardsFolder() throws {
        let (root, folders) = try Self.folders([Self.shard(0, of: 1, micros: [1])])
        defer { try? FileManager.default.removeItem(at: root) }
        let before = try Data(contentsOf: URL(fileURLWithPath: folders[0]).appendingPathComponent("summary.json"))
        #expect {
            _ = try PayStormMerge.execute(directories: folders, out: folders[0] + "/")
        } throws: { error in
            guard case .badInput(let message) = error as? RunError else { return false }
            return message.contains("is the shard folder")
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: folders[0]).appendingPathComponent("summary.json")) == before)
    }

    @Test func refusesACorruptHistogramNamingItsKey() throws {
        var corrupt = Self.shard(1, of: 2, micros: [1])
        corrupt.shard?.figures?.histograms["webhook.service"] = "not a histogram"
        let (root, folders) = try Self.folders([Self.shard(0, of: 2, micros: [1]), corrupt])
        defer { try? FileManager.default.removeItem(at: root) }
        #expect {
            _ = try PayStormMerge.execute(directories: folders, out: root.appendingPathComponent("m").path)
        } throws: { error in
            guard case .badInput(let message) = error as? RunError else { return false }
            return message.hasPrefix(folders[1] + "/summary.json: shard.figures.histograms.webhook.service: ")
        }
    }

    @Test func refusesAThresholdItCannotParse() throws {
        let (root, folders) = try Self.folders([Self.shard(0, of: 1, micros: [1], thresholds: ["p99 <"])])
        defer { try? FileManager.default.removeItem(at: root) }
        #expect {
            _ = try PayStormMerge.execute(directories: folders, out: root.appendingPathComponent("m").path)
        } throws: { error in
            guard case .badInput(let message) = error as? RunError else { return false }
            return message.hasPrefix(folders[0] + "/summary.json: thresholds: ")
        }
    }

    @Test func keepsEveryShardsNotesTimelineSpanAndUncheckedReason() throws {
        var first = Self.shard(0, of: 2, micros: [1_000])
        first.notes = ["probe slow"]
        first.startedAt = Date(timeIntervalSince1970: 1_699_999_990)
        first.timeline = [
            TimelinePoint(second: 0, intended: 2, ok: 2, errors: 0, p50Micros: 10, p99Micros: 90),
            TimelinePoint(second: 1, intended: 3, ok: 2, errors: 1, p50Micros: 40, p99Micros: 50),
        ]
        first.shard?.figures?.unchecked = ["revocation-honored": "no refund in this shard"]
        var second = Self.shard(1, of: 2, micros: [2_000])
        second.endedAt = Date(timeIntervalSince1970: 1_700_000_030)
        second.timeline = [TimelinePoint(second: 1, intended: 4, ok: 4, errors: 0, p50Micros: 20, p99Micros: 70)]
        let (root, folders) = try Self.folders([first, second])
        defer { try? FileManager.default.removeItem(at: root) }
        let report = try PayStormMerge.execute(directories: folders, out: root.appendingPathComponent("m").path).report
        #expect(
            report.notes == [
                "merged from 2 shards of tiny, seed 42",
                "per-second percentiles in the timeline are the highest of the shards' for that second",
                "shard 0: probe slow",
            ]
        )
        #expect(
            report.timeline == [
                TimelinePoint(second: 0, intended: 2, ok: 2, errors: 0, p50Micros: 10, p99Micros: 90),
                TimelinePoint(second: 1, intended: 7, ok: 6, errors: 1, p50Micros: 40, p99Micros: 70),
            ]
        )
        #expect(report.startedAt == first.startedAt && report.endedAt == second.endedAt)
        #expect(
            report.latency.map { "\($0.kind).\($0.measure)" } == [
                "all.intended", "all.service", "webhook.intended", "webhook.service",
            ]
        )
        let revocation = try #require(report.invariants.first { $0.name == "revocation-honored" })
        #expect(revocation.status == .unchecked && revocation.reason == "no refund in this shard")
        #expect(report.toolVersion == "paystorm \(PayStormVersion.current)")
    }
}
