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
        let run = try PayStormRunner.run(inline: Self.profile, name: "settle")
        let retriesSent = run.events.filter {
            $0["event"] as? String == "send" && $0["copy"] as? String == "retry"
                && ($0["t"] as? Double ?? 0) > 2
        }
        #expect(!retriesSent.isEmpty, "no retry was sent after the schedule: \(run.output)")
        #expect(run.notes.contains { $0.contains("fell after the settle period and were not sent") }, "\(run.notes)")
    }
}
