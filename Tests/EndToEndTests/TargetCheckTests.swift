import Foundation
import PayStormTestKit
import Testing

/// `paystorm target check`: passes on a working mapping, names the problem on a wrong one.
@Suite(.serialized)
struct TargetCheckTests {
    @Test func passesAgainstTheEmbeddedLedger() throws {
        let (code, output) = try PayStormRunner.exec(["target", "check", "Profiles/smoke.json5"])
        #expect(code == 0, "\(output)")
        #expect(output.contains("result: PASS"))
        for role in ["deviceDelivery", "webhook", "deviceReport"] { #expect(output.contains(role), "\(output)") }
    }

    @Test func failsAndNamesAForgeryTheLedgerGrants() throws {
        let (code, output) = try PayStormRunner.exec([
            "target", "check", "Profiles/smoke.json5", "--flaw", "trust-unverified",
        ])
        #expect(code == 1, "\(output)")
        #expect(output.contains("forgery was acknowledged and granted: the backend trusts unverified input"))
    }

    /// A separately started ledger mapped with a probe URL whose path is wrong (404): every purchase is
    /// acknowledged, but the probe cannot see it. The port comes in through a profile variable.
    @Test func failsAndNamesAWrongProbeURL() throws {
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("target-check-\(UUID())").path
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: work) }
        #expect(try PayStormRunner.exec(["pki", "init", work + "/pki"]).0 == 0)
        let port = try RestartCommandTests.freePort()
        let binary = try PayStormBinary.url().path
        let start = """
            "\(binary)" ledger serve --listen 127.0.0.1:\(port) --db "\(work)/ledger.db" \
              --trust "\(work)/pki/root.der" --bundle-id com.example.paystorm >>"\(work)/ledger.out" 2>&1 &
            echo $! >"\(work)/ledger.pid"
            """
        try start.write(toFile: work + "/start.sh", atomically: true, encoding: .utf8)
        try #"kill -9 "$(cat "\#(work)/ledger.pid")""#.write(
            toFile: work + "/kill.sh",
            atomically: true,
            encoding: .utf8
        )
        defer { _ = RestartCommandTests.shell(work + "/kill.sh") }
        #expect(RestartCommandTests.shell(work + "/start.sh") == 0)
        let target = ProfileBuilder.Target(
            webhookURL: "http://127.0.0.1:${PORT}/notifications",
            deviceURL: "http://127.0.0.1:${PORT}/transactions",
            probeURL: "http://127.0.0.1:${PORT}/${PROBE_PATH:-account}/{appAccountToken}",
            requestTimeoutSeconds: 2
        )
        var profile = ProfileBuilder(name: "wrong-probe", seed: 3, target: target)
        profile.products = [.init("n", "nonConsumable", priceMilli: 1990)]
        profile.accounts = 1
        profile.actionMix = ["nonConsumable": 1]
        profile.schedule = [.constant(rate: 1, seconds: 1)]
        profile.settleSeconds = 0.5
        try profile.write(into: work)
        let check = ["target", "check", work + "/profile.json5", "--pki", work + "/pki", "--set", "PORT=\(port)"]
        // Wait until the ledger accepts connections (its start script returns at once).
        var outcome = try RestartCommandTests.execBounded(check, timeout: 60)
        for _ in 0..<50 where outcome?.0 == 69 {
            Thread.sleep(forTimeInterval: 0.1)
            outcome = try RestartCommandTests.execBounded(check, timeout: 60)
        }
        let (code, output) = try #require(outcome, "target check did not end within 60 s")
        #expect(code == 1, "\(output)")
        #expect(output.contains("/account/"))
        #expect(output.contains("check the probe URL or mapping"), "\(output)")

        // The same profile with the right path passes.
        let (fixed, fixedOutput) = try #require(
            try RestartCommandTests.execBounded(check + ["--set", "PROBE_PATH=accounts"], timeout: 60)
        )
        #expect(fixed == 0, "\(fixedOutput)")
    }
}
