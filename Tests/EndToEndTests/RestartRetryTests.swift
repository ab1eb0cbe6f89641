import Foundation
import Testing

/// Apple's webhook retries come hours apart, a target's restart lasts real seconds. Under strong time compression
/// the whole retry schedule fits inside one restart, so without care every webhook refused by the restart would
/// also have all its retries refused, and its purchase would go unchecked, which no real restart causes.
@Suite(.serialized)
struct RestartRetryTests {
    /// A month lasts a second, so Apple's 72 hours of retries last 0.1 s, a tenth of the planned down time.
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
          faults: { targetRestart: { count: 1, downSeconds: 1 } },
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
}
