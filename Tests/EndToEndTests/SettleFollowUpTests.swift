import Foundation
import Testing

/// Retries and redeliveries near the end of the schedule: those due within the settle period are still sent,
/// later ones are not, and the report says how many.
struct SettleFollowUpTests {
    /// Every answer is lost; its retry comes 3 s later, after the 2 s schedule but within the 4 s settle.
    /// Every device crashes before finish() and would relaunch only after 30 s, past the settle period.
    static let profile = """
        { name: "settle-follow-ups", seed: 9,
          target: { embeddedLedger: true, environment: "Sandbox" },
          catalog: { products: [{ id: "pro.unlock", type: "nonConsumable", priceMilli: 4990 }] },
          population: { accounts: 10, devicesPerAccount: 1 },
          actionMix: { nonConsumable: 1 },
          schedule: [{ kind: "constant", rate: 5, seconds: 2 }],
          faults: { lostResponse: { probability: 1, retrySeconds: 3 },
                    crashBeforeFinish: { probability: 1, relaunchSeconds: 30 } },
          settleSeconds: 4 }
        """

    @Test func followUpsDueWithinSettleAreSentAndLaterOnesCounted() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("paystorm-settle-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let file = directory.appendingPathComponent("settle.json5")
        try Data(Self.profile.utf8).write(to: file)
        let reports = directory.appendingPathComponent("reports")
        let (_, output) = try PayStormRunner.exec(["run", file.path, "--quiet", "--reports", reports.path])
        let latest = reports.appendingPathComponent("latest")
        let history = try PayStormRunner.history(in: latest)
            .split(separator: "\n").compactMap {
                (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any]
            }
        let retriesSent = history.filter {
            $0["event"] as? String == "send" && $0["copy"] as? String == "retry"
                && ($0["t"] as? Double ?? 0) > 2
        }
        #expect(!retriesSent.isEmpty, "no retry was sent after the schedule: \(output)")
        let summary = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: latest.appendingPathComponent("summary.json")))
                as? [String: Any]
        )
        let notes = summary["notes"] as? [String] ?? []
        #expect(notes.contains { $0.contains("fell after the settle period and were not sent") }, "\(notes)")
    }
}
