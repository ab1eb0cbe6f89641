import Foundation
import Load
import Reporting
import RunControl
import Testing

@testable import Capacity

/// Judging a step from its report folder: only the seconds after the warm-up and up to the end of the
/// step's schedule count, and a harness-limited span inside the step marks it.
struct CapacityStepReaderTests {
    /// A step of 4 s with 2 s of warm-up: 10 requests a second; the warm-up seconds are slow and fail, the
    /// judged seconds 3 and 4 are fast, second 5 (the drain after the schedule) is slow again.
    static func writeStep(harnessLimitedFrom: Double? = nil, invariants: String? = nil) throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("step-\(UUID())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let plan = CapacityStepPlan(
            index: 2,
            rate: 10,
            seconds: 4,
            warmupSeconds: 2,
            harnessCPU: 0.5,
            recovery: Self.recovery
        )
        try JSONEncoder().encode(plan).write(to: folder.appendingPathComponent("step.json"))
        var summary = #"{"profile": "p", "seed": 7"#
        if let from = harnessLimitedFrom {
            summary +=
                #", "harnessLimited": {"fromSeconds": \#(from), "deliveriesPerSecond": 9, "reason": "engine thread late"}"#
        }
        if let invariants { summary += #", "invariants": \#(invariants)"# }
        try Data((summary + "}").utf8).write(to: folder.appendingPathComponent("summary.json"))
        var csv = TimeseriesRow.csvHeader + "\n"
        for second in 1...5 {
            let judged = second == 3 || second == 4
            let ok = judged ? 9 : 5
            let timeouts = judged ? 1 : 5
            // second,intended_rate,scheduled,sent,ok,non_2xx,timeout,reset,refused,dns,tls,hung_up,other,missed,late,
            // in_flight,p50_us,p90_us,p99_us,max_us,service_p99_us
            csv += "\(second),10,10,10,\(ok),0,\(timeouts),0,0,0,0,0,0,0,\(judged ? 1 : 4),\(second),0,0,0,0,0\n"
        }
        try Data(csv.utf8).write(to: folder.appendingPathComponent("timeseries.csv"))
        let log = try HistogramLogWriter(
            path: folder.appendingPathComponent("latency.hlog").path,
            startTime: Date(timeIntervalSince1970: 1_000)
        )
        for second in 0..<5 {
            let micros: Int64 = second == 2 || second == 3 ? 10_000 : 2_000_000
            for suffix in ["latency", "service"] {
                var histogram = Histogram()
                histogram.record(micros, count: 10)
                log.write(
                    HistogramLogEntry(tag: "webhook.\(suffix)", start: Double(second), length: 1, histogram: histogram)
                )
            }
        }
        log.close()
        return folder
    }

    /// The wait for recovery before the step, as its `step.json` records it.
    static let recovery = CapacityRecovery(
        recovered: false,
        waitedSeconds: 60,
        startedAt: 1_000,
        probes: 300,
        medianMicros: 900_000,
        quietMicros: 40_000,
        boundMicros: 105_000
    )

    /// A re-analysis (`--from`) keeps what the search said of the target's recovery before each step.
    @Test func theRecoveryBeforeTheStepIsReadFromItsPlan() throws {
        let folder = try Self.writeStep()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (step, _, _) = try CapacityStepReader.read(folder, name: "steps/x", slos: [])
        #expect(step.recovery == Self.recovery)
    }

    @Test func onlyTheSecondsAfterTheWarmupAndBeforeTheEndOfTheScheduleAreJudged() throws {
        let folder = try Self.writeStep()
        defer { try? FileManager.default.removeItem(at: folder) }
        let slos = try PayStormCapacity.parseSLOs(["p99 < 100ms", "errorRate < 5%", "webhook.p50 < 20ms"])
        let (step, profile, seed) = try CapacityStepReader.read(folder, name: "steps/x", slos: slos)
        #expect(profile == "p" && seed == 7)
        #expect(step.index == 2 && step.rate == 10 && step.folder == "steps/x")
        #expect(step.offered == 10)
        #expect(step.achieved == 9)
        #expect(step.errors["timeout"] == 2)
        #expect(step.late == 2)
        #expect(step.inFlight == 4)
        #expect(step.harnessCPU == 0.5)
        #expect(step.latency.p99 < 11_000)
        #expect(abs(step.meanServiceMicros - 10_000) < 20)
        // Little's law: 9 requests/s × 10 ms.
        #expect(abs(step.concurrency - 0.09) < 0.001)
        #expect(step.slos.map(\.held) == [true, false, true])
        #expect(step.harnessLimited == nil)
    }

    @Test func aHarnessLimitedSpanInsideTheStepMarksIt() throws {
        let inside = try Self.writeStep(harnessLimitedFrom: 3)
        defer { try? FileManager.default.removeItem(at: inside) }
        #expect(try CapacityStepReader.read(inside, name: "a", slos: []).step.harnessLimited != nil)
        // Limited only while the last answers drained, after the schedule: the step still measured the target.
        let after = try Self.writeStep(harnessLimitedFrom: 4.5)
        defer { try? FileManager.default.removeItem(at: after) }
        #expect(try CapacityStepReader.read(after, name: "b", slos: []).step.harnessLimited == nil)
    }

    /// The search judges a step by its objectives, but what its run's invariants said goes with it: a backend
    /// that double-grants at some rate must not pass a capacity search unseen.
    @Test func theInvariantsTheStepsRunFailedAreReadWithTheirViolations() throws {
        let failing = try Self.writeStep(
            invariants: #"[{"name": "no-double-grant", "status": "failed", "violations": 34}, "#
                + #"{"name": "no-lost-purchase", "status": "passed", "violations": 0}, "#
                + #"{"name": "revocation-honored", "status": "failed", "violations": 1}]"#
        )
        defer { try? FileManager.default.removeItem(at: failing) }
        let step = try CapacityStepReader.read(failing, name: "a", slos: []).step
        #expect(step.failedInvariants == ["no-double-grant": 34, "revocation-honored": 1])
        #expect(step.failedInvariantsText == "no-double-grant (34 violations), revocation-honored (1 violation)")
        #expect(step.isGood, "the objectives alone judge the step")
        let passing = try Self.writeStep(invariants: #"[{"name": "no-double-grant", "status": "passed"}]"#)
        defer { try? FileManager.default.removeItem(at: passing) }
        #expect(try CapacityStepReader.read(passing, name: "b", slos: []).step.failedInvariants == [:])
    }

    /// `--slo invariants`: a failed invariant breaks the step like a missed objective, and an unknown one does not.
    @Test func withTheInvariantsObjectiveAFailedInvariantBreaksTheStep() throws {
        let failing = try Self.writeStep(
            invariants: #"[{"name": "no-double-grant", "status": "failed", "violations": 34}, "#
                + #"{"name": "revocation-honored", "status": "unknown"}]"#
        )
        defer { try? FileManager.default.removeItem(at: failing) }
        let broken = try CapacityStepReader.read(failing, name: "a", slos: [], invariants: true).step
        #expect(!broken.isGood)
        let observation = try #require(broken.slos.first { $0.expression == PayStormCapacity.invariantsSLO })
        #expect(!observation.held && observation.observed == 34)
        #expect(observation.observedText == "no-double-grant (34 violations)")
        let unknown = try Self.writeStep(invariants: #"[{"name": "no-double-grant", "status": "unknown"}]"#)
        defer { try? FileManager.default.removeItem(at: unknown) }
        let held = try CapacityStepReader.read(unknown, name: "b", slos: [], invariants: true).step
        #expect(held.isGood)
        #expect(held.slos.map(\.observedText) == ["none failed (1 undecided)"])
    }

    @Test func theInvariantsObjectiveIsNoThresholdAndIsToldApart() throws {
        #expect(try PayStormCapacity.parseSLOs(["p99 < 250ms", " invariants "]).map(\.expression) == ["p99 < 250ms"])
        #expect(PayStormCapacity.judgesInvariants(["p99 < 250ms", "invariants"]))
        #expect(!PayStormCapacity.judgesInvariants(["p99 < 250ms"]))
    }

    @Test func reanalysingACapacityFolderInPlaceKeepsItsLabel() throws {
        let capacity = FileManager.default.temporaryDirectory.appendingPathComponent("capacity-\(UUID())")
        defer { try? FileManager.default.removeItem(at: capacity) }
        try FileManager.default.createDirectory(
            at: capacity.appendingPathComponent("steps"),
            withIntermediateDirectories: true
        )
        try FileManager.default.moveItem(at: try Self.writeStep(), to: capacity.appendingPathComponent("steps/s1"))
        var earlier = CapacityReport(steps: [], slos: ["p99 < 1s"], profile: "p", seed: 7)
        earlier.label = "commit abc123"
        try CapacityWriter.writeAll(earlier, to: capacity)
        let outcome = try PayStormCapacity.analyse(paths: [capacity.path], slos: [], out: nil, reports: "unused")
        #expect(outcome.folder.standardizedFileURL.path == capacity.standardizedFileURL.path)
        #expect(outcome.report.label == "commit abc123")
        let data = try Data(contentsOf: capacity.appendingPathComponent("capacity.json"))
        #expect(try JSONDecoder().decode(CapacityReport.self, from: data).label == "commit abc123")
    }

    @Test func aFolderGivenTwiceIsRefusedNamingIt() throws {
        let folder = try Self.writeStep()
        defer { try? FileManager.default.removeItem(at: folder) }
        let link = folder.deletingLastPathComponent().appendingPathComponent("link-\(UUID())")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: folder)
        defer { try? FileManager.default.removeItem(at: link) }
        for second in [folder.path, link.path] {
            #expect {
                _ = try PayStormCapacity.analyse(
                    paths: [folder.path, second],
                    slos: ["p99 < 1s"],
                    out: nil,
                    reports: folder.deletingLastPathComponent().appendingPathComponent("reports-\(UUID())").path
                )
            } throws: { error in
                guard case .badInput(let message) = error as? RunError else { return false }
                return message.contains("is already given by \(folder.path)")
            }
        }
    }

    @Test func aFolderWithoutStepJSONIsMissingInput() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("nostep-\(UUID())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        #expect(throws: CapacityStepError.self) { try CapacityStepReader.read(folder, name: "c", slos: []) }
    }
}
