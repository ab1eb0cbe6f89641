import Foundation
import Testing

/// Apple's webhook retries come hours apart, a target's restart lasts real seconds. Under strong time compression
/// the whole retry schedule fits inside one restart, so without care every webhook refused by the restart would
/// also have all its retries refused, and its purchase would go unchecked, which no real restart causes.
@Suite(.serialized)
struct RestartRetryTests {
    /// A month lasts a second, so Apple's 72 hours of retries last 0.1 s, a tenth of the planned down time (no
    /// real-time floor between attempts, which would put every retry after the restart).
    static let profile = """
        { name: "restart-retries", seed: 11,
          target: { embeddedLedger: true, bundleId: "com.example.paystorm", environment: "Sandbox" },
          catalog: { products: [
            { id: "coins.100", type: "consumable", priceMilli: 990 },
            { id: "pro.unlock", type: "nonConsumable", priceMilli: 4990 } ] },
          population: { accounts: 30, devicesPerAccount: 1 },
          actionMix: { consumable: 2, nonConsumable: 1 },
          timeCompression: { secondsPerMonth: 1 },
          schedule: [{ kind: "constant", rate: 20, seconds: 6 }],
          faults: { targetRestart: { count: 1, downSeconds: 1 }, appStoreRetries: { floorSeconds: 0 } },
          settleSeconds: 3 }
        """

    @Test func webhooksRefusedByARestartAreRetriedOnceTheTargetIsBack() throws {
        let run = try PayStormRunner.run(inline: Self.profile, name: "restart-retries")
        #expect(run.exitCode == 0, "\(run.output)")
        #expect(run.notes.contains { $0.contains("waited until it answered again") }, "\(run.notes)")

        // A webhook chain is its notification's bytes: the same type, transaction and signedDate on every attempt.
        let results = run.events.filter { $0["event"] as? String == "result" && $0["role"] as? String == "webhook" }
        func chain(_ line: [String: Any]) -> String {
            ["notificationType", "transactionId", "signedAt"].map { "\(line[$0] ?? "")" }.joined(separator: "|")
        }
        let refused = Set(results.filter { $0["error"] as? String == "refused" }.map(chain))
        let acknowledged = Set(results.filter { $0["status"] as? Int == 200 }.map(chain))
        #expect(!refused.isEmpty, "the restart refused no webhook")
        let lost = refused.subtracting(acknowledged)
        #expect(lost.isEmpty, "\(lost.count) of \(refused.count) refused chains never acknowledged: \(lost.prefix(3))")
    }

    /// The restart stands for 120 hours of App Store time (5 s with a 30 s month), longer than Apple's 72 hours of
    /// retries and than the embedded ledger's real outage: the App Store's attempts due inside it fail even once
    /// the ledger is back, and a notification first sent early in it has every attempt fail.
    static let declaredOutage = profile.replacingOccurrences(of: "secondsPerMonth: 1", with: "secondsPerMonth: 30")
        .replacingOccurrences(of: "downSeconds: 1 }", with: "downSeconds: 0.5, outageHours: 120 }")

    @Test func attemptsInsideTheDeclaredOutageFailEvenOnceTheTargetIsBack() throws {
        #expect(Self.declaredOutage.contains("outageHours: 120"))
        let run = try PayStormRunner.run(inline: Self.declaredOutage, name: "declared-outage")
        // No invariant fails: a notification the webhook never delivered obliges the target to nothing.
        #expect(run.exitCode != 1 && run.exitCode < 3, "\(run.output)")
        let note = try #require(run.notes.first { $0.contains("fell inside the App Store time") }, "\(run.notes)")
        #expect(!note.contains(" 0 notifications had"), "\(note)")
        let failed = run.events.filter {
            $0["event"] as? String == "skip" && ($0["detail"] as? String)?.contains("App Store time") == true
        }.compactMap { $0["t"] as? Double }
        // Over most of the 5 s declared, long after the ledger (down 0.5 s) was back.
        #expect((failed.max() ?? 0) - (failed.min() ?? 0) > 3, "\(failed)")
    }
}
