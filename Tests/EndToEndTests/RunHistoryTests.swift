import Foundation
import PayStormTestKit
import Testing

/// A short run against the embedded ledger with one planned restart, reordering and duplicates: what it records
/// about its traffic.
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

    static let profile: ProfileBuilder = {
        var target = ProfileBuilder.Target.embeddedLedger
        target.bundleId = "com.example.paystorm"
        target.environment = "Sandbox"
        var profile = ProfileBuilder(name: "restart-history", seed: 5, target: target)
        profile.products = [
            .init("coins.100", "consumable", priceMilli: 990), .init("pro.unlock", "nonConsumable", priceMilli: 4990),
        ]
        profile.accounts = 40
        profile.devicesPerAccount = 1
        profile.actionMix = ["consumable": 2, "nonConsumable": 1, "deviceReport": 0.5]
        profile.schedule = [.constant(rate: 20, seconds: 8)]
        profile.faults = [
            "targetRestart": "{ count: 1, downSeconds: 1 }",
            "reorder": "{ probability: 0.5, windowSeconds: 2 }",
            "duplicate": "{ probability: 0.3, maxDelaySeconds: 1 }",
        ]
        profile.settleSeconds = 2
        profile.thresholds = ["restart.requests > 0", "webhook.errorRate < 5%", "requests < 1"]
        return profile
    }()

    static let run: Result<ShortRun, any Error> = Result {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("paystorm-history-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let file = URL(fileURLWithPath: try profile.write(into: directory.path, fileName: "restart-history.json5"))
        let reports = directory.appendingPathComponent("reports")
        let (code, output) = try PayStormRunner.exec(["run", file.path, "--quiet", "--reports", reports.path])
        let latest = reports.appendingPathComponent("latest")
        let summary = try Data(contentsOf: latest.appendingPathComponent("summary.json"))
        let history = try PayStormRunner.history(in: latest)
        return ShortRun(exitCode: code, output: output, summaryJSON: summary, historyJSONL: history)
    }

    @Test func refusedSendsDuringAPlannedRestartHaveTheirOwnKind() throws {
        let run = try Self.run.get()
        let thresholds = run.summary["thresholds"] as? [[String: Any]] ?? []
        let held = thresholds.filter { $0["passed"] as? Bool == true }.compactMap { $0["expression"] as? String }
        #expect(held.sorted() == ["restart.requests > 0", "webhook.errorRate < 5%"], "\(thresholds)")
    }

    @Test func aBreachedThresholdFailsTheVerdictInWordsToo() throws {
        let run = try Self.run.get()
        // `requests < 1` cannot hold: the run's only failure, so exit 3 and a failing verdict everywhere.
        #expect(run.exitCode == 3, "\(run.output)")
        #expect(run.summary["verdict"] as? String == "fail")
        #expect(run.summary["exitCode"] as? Int == 3)
        #expect(["pass", "unknown"].contains(run.summary["invariantVerdict"] as? String ?? ""))
        let reasons = run.summary["reasons"] as? [String] ?? []
        #expect(reasons.contains { $0.hasPrefix("threshold breached: requests < 1") }, "\(reasons)")
        #expect(run.output.contains("verdict: FAIL"), "\(run.output)")
        #expect(!run.output.contains("verdict: PASS"))
    }

    @Test func historySaysSendOnlyForWhatWasSentAndNamesEveryRole() throws {
        let run = try Self.run.get()
        let roles: Set<String> = ["webhook", "device", "report", "probe", "marker"]
        let withoutRole = run.history.filter { !roles.contains($0["role"] as? String ?? "") }
        #expect(
            withoutRole.isEmpty,
            "\(withoutRole.count) lines without a known role, such as \(withoutRole.prefix(2))"
        )
        let deliveryLines = run.history.filter { $0["delivery"] != nil }
        // A result whose error says the request never left (missed, refused, dns) was not sent.
        let neverLeft: Set<String> = ["missed", "refused", "dns"]
        let unsentResults = deliveryLines.filter {
            $0["event"] as? String == "result"
                && ($0["sent"] as? Bool == false || neverLeft.contains($0["error"] as? String ?? ""))
        }
        #expect(unsentResults.allSatisfy { $0["sent"] as? Bool == false })
        let notSent = Set(unsentResults.compactMap { $0["delivery"] as? Int })
        let sent = Set(
            deliveryLines.filter { $0["event"] as? String == "send" }.compactMap { $0["delivery"] as? Int }
        )
        // The restart refuses connections: the run must have unsent deliveries for this test to mean anything.
        #expect(!notSent.isEmpty, "no delivery went unsent; the restart did not refuse anything")
        #expect(notSent.isDisjoint(with: sent), "'send' written for unsent deliveries \(notSent.intersection(sent))")
        #expect(!sent.isEmpty)
        let webhooks = deliveryLines.filter { $0["role"] as? String == "webhook" }
        #expect(!webhooks.isEmpty)
        for line in webhooks {
            #expect(line["notificationType"] is String, "\(line)")
            #expect(line["originalTransactionId"] is String || line["transactionId"] == nil, "\(line)")
        }
    }

    /// Issue 9 item 6: reordering, duplicates and retries only delay; no line of the history (dispatched at
    /// its intended time, sent on the wire) comes before the signedDate its payload carries.
    @Test func noDeliveryGoesOutBeforeItsSignedDate() throws {
        let run = try Self.run.get()
        let timed = run.history.filter { ["dispatch", "send"].contains($0["event"] as? String ?? "") }
        let signed = timed.filter { $0["signedAt"] is Double }
        #expect(signed.count > 100 && signed.count * 10 > timed.count * 8, "\(signed.count) of \(timed.count)")
        #expect(signed.contains { ($0["faults"] as? [String] ?? []).contains("reorder") })
        // signedAt has millisecond resolution, `t` microsecond: a delivery due exactly at its signedDate may
        // read up to half a millisecond before it.
        let early = signed.filter { ($0["t"] as? Double ?? 0) < ($0["signedAt"] as? Double ?? 0) - 0.001 }
        #expect(early.isEmpty, "\(early.count) lines before their signedDate, such as \(early.prefix(2))")
    }

    /// Issue 9 item 5: webhooks refused while the target is down are retried, and accepted once it is back.
    @Test func refusedWebhooksAreRetriedAfterTheRestart() throws {
        let run = try Self.run.get()
        let results = run.history.filter { $0["event"] as? String == "result" && $0["role"] as? String == "webhook" }
        let refused = results.filter { $0["error"] as? String == "refused" }
        #expect(!refused.isEmpty, "the restart refused no webhook")
        let retried = results.filter { $0["copy"] as? String == "retry" }
        #expect(retried.contains { $0["status"] as? Int == 200 }, "no retry was acknowledged: \(retried.prefix(3))")
    }
}
