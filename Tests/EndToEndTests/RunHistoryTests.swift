import Foundation
import Testing

/// A short run against the embedded ledger with one planned restart: what it records about its traffic.
/// One run (about 15 seconds) serves every test of the suite.
@Suite(.serialized)
struct RunHistoryTests {
    /// What the run left, kept as text (JSON objects are not Sendable) and parsed by each test.
    struct ShortRun: Sendable {
        var exitCode: Int32
        var output: String
        var summaryJSON: Data
        var historyJSONL: String

        var summary: [String: Any] {
            (try? JSONSerialization.jsonObject(with: summaryJSON)) as? [String: Any] ?? [:]
        }
        var history: [[String: Any]] {
            historyJSONL.split(separator: "\n").map {
                (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any] ?? [:]
            }
        }
    }

    static let profile = """
        { name: "restart-history", seed: 5,
          target: { embeddedLedger: true, bundleId: "com.example.paystorm", environment: "Sandbox" },
          catalog: { products: [
            { id: "coins.100", type: "consumable", priceMilli: 990 },
            { id: "pro.unlock", type: "nonConsumable", priceMilli: 4990 } ] },
          population: { accounts: 40, devicesPerAccount: 1 },
          actionMix: { consumable: 2, nonConsumable: 1, deviceReport: 0.5 },
          schedule: [{ kind: "constant", rate: 20, seconds: 8 }],
          faults: { targetRestart: { count: 1, downSeconds: 1 } },
          settleSeconds: 2,
          thresholds: ["restart.requests > 0", "webhook.errorRate < 5%"] }
        """

    static let run: Result<ShortRun, any Error> = Result {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("paystorm-history-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let file = directory.appendingPathComponent("restart-history.json5")
        try Data(profile.utf8).write(to: file)
        let reports = directory.appendingPathComponent("reports")
        let (code, output) = try PayStormRunner.exec(["run", file.path, "--quiet", "--reports", reports.path])
        let latest = reports.appendingPathComponent("latest")
        let summary = try Data(contentsOf: latest.appendingPathComponent("summary.json"))
        let history = try String(contentsOf: latest.appendingPathComponent("history.jsonl"), encoding: .utf8)
        return ShortRun(exitCode: code, output: output, summaryJSON: summary, historyJSONL: history)
    }

    @Test func refusedSendsDuringAPlannedRestartHaveTheirOwnKind() throws {
        let run = try Self.run.get()
        #expect(run.exitCode == 0 || run.exitCode == 2, "\(run.output)")
        let thresholds = run.summary["thresholds"] as? [[String: Any]] ?? []
        #expect(thresholds.count == 2)
        for threshold in thresholds {
            #expect(threshold["passed"] as? Bool == true, "\(threshold)")
        }
    }
}
