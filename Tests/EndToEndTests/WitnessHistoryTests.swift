import Foundation
import PayStormTestKit
import Testing

/// A witness cites deliveries by the numbers the history records, so each of its lines can be found there.
struct WitnessHistoryTests {
    /// A ledger that grants again on every redelivery, with half the webhooks' answers lost: the App Store
    /// retries them and each acknowledged retry is a second grant (a witness cites it). About 10 seconds.
    static let profile: ProfileBuilder = {
        var target = ProfileBuilder.Target.embeddedLedger
        target.bundleId = "com.example.paystorm"
        target.environment = "Sandbox"
        var profile = ProfileBuilder(name: "witness-retries", seed: 3, target: target)
        profile.accounts = 20
        profile.schedule = [.constant(rate: 10, seconds: 4)]
        profile.faults = ["lostResponse": "{ probability: 0.5, retrySeconds: 0.5 }"]
        profile.settleSeconds = 2
        return profile
    }()

    @Test func witnessesNameRetriedWebhooksByTheirNumberInTheHistory() throws {
        let run = try PayStormRunner.run(
            inline: Self.profile.json5,
            name: "witness-retries",
            extra: ["--flaw", "double-grant"]
        )
        let violations = run.summary["violations"] as? [[String: Any]] ?? []
        #expect(!violations.isEmpty, "the flawed ledger broke no invariant\n\(run.output)")
        let lines = violations.flatMap { $0["witness"] as? [String] ?? [] }
        let cited = Set(lines.compactMap(Self.deliveryNumber))
        var copies: [UInt64: String] = [:]
        for event in run.events {
            guard let number = (event["delivery"] as? NSNumber)?.uint64Value else { continue }
            copies[number] = event["copy"] as? String
        }
        let missing = cited.filter { copies[$0] == nil }
        #expect(missing.isEmpty, "witnesses cite deliveries the history never names: \(missing.sorted())")
        #expect(
            cited.contains { copies[$0] == "retry" },
            "no witness cites a retry: \(lines.filter { $0.contains("delivery") }.prefix(6))"
        )
    }

    /// The number of the delivery a witness line cites (`delivery 42 (transaction …): …`), if any.
    static func deliveryNumber(_ line: String) -> UInt64? {
        guard let range = line.range(of: "delivery ") else { return nil }
        return UInt64(line[range.upperBound...].prefix { $0.isNumber })
    }
}
