import Foundation
import PayStormTestKit
import Testing

/// `target.requestHook` (issue 45, item 1) end to end: the shipped example hook signs every device delivery of a
/// run with its account's secret, and a hook that dies, answers garbage or stays silent stops the run with exit 69,
/// one line naming the hook, and a report.
@Suite(.serialized)
struct RequestHookTests {
    /// The folder of the example hook and its provisioning, in the repository.
    static let example = PayStormBinary.packageRoot.appendingPathComponent("Profiles/examples/request-hook").path

    /// A server that checks `X-Signature` on `/api/purchases` against the secret the provisioning stored for
    /// `X-User-Id` (401 when it does not match), and logs each request's path and whether it was signed right.
    static let server = PythonTestServer.script(
        respond: #"""
            import hashlib, hmac
            def respond(request, body):
                signature = request.headers.get("X-Signature")
                signed = None
                if request.path == "/api/purchases":
                    users = dict(line.split() for line in open(work + "/users.txt"))
                    key = users.get(request.headers.get("X-User-Id"), "").encode()
                    signed = signature == "sha256=" + hmac.new(key, body, hashlib.sha256).hexdigest()
                with open(work + "/requests.jsonl", "a") as f:
                    f.write(json.dumps({"path": request.path, "signed": signed, "signature": signature}) + "\n")
                return (401 if signed is False else 200), b"{}"
            """#
    )

    /// A profile of the signing backend at `port`: device deliveries through the example hook, keyed by the
    /// secrets the example provisioning stores in `work/users.txt`.
    static func signedProfile(work: String, port: Int) -> ProfileBuilder {
        var target = ProfileBuilder.Target(requestTimeoutSeconds: 3)
        let base = "http://127.0.0.1:\(port)"
        target.extra = [
            #"webhook: { url: "\#(base)/apple/notifications", body: { signedPayload: "{signedPayload}" } }"#,
            """
            deviceDelivery: {
              url: "\(base)/api/purchases",
              headers: { "X-User-Id": "{account.id}" },
              body: { jws: "{signedTransaction}", userId: "{account.id}" },
            }
            """,
            #"accounts: { provision: ["python3", "\#(example)/provision.py", "--store", "\#(work)/users.txt"] }"#,
            #"requestHook: { command: ["python3", "\#(example)/sign.py"], roles: ["deviceDelivery"] }"#,
        ]
        var profile = ProfileBuilder(name: "request-hook", seed: 3, target: target)
        profile.schedule = [.constant(rate: 10, seconds: 3)]
        profile.settleSeconds = 0
        profile.thresholds = ["device.errorRate == 0%"]
        return profile
    }

    /// `target check` sent device deliveries without the hook: the backend refused each as unsigned.
    @Test func targetCheckSendsWhatTheHookAnswers() throws {
        try PythonTestServer.withBackend("request-hook-check", server: Self.server, provision: "") { work, server in
            try Self.signedProfile(work: work, port: server.port).write(into: work)
            let (_, output) = try PayStormRunner.exec([
                "target", "check", work + "/profile.json5", "--pki", work + "/pki",
            ])
            let devices = try TemplatedTargetTests.logged(in: work).filter { $0["path"] as? String == "/api/purchases" }
            try #require(!devices.isEmpty, "no device delivery reached the backend: \(output)")
            #expect(devices.allSatisfy { $0["signed"] as? Bool == true }, "\(devices)\n\(output)")
        }
    }

    @Test func everyDeviceDeliveryCarriesTheHooksSignatureAndItsTimeIsReported() throws {
        try PythonTestServer.withBackend("request-hook", server: Self.server, provision: "") { work, server in
            let profile = Self.signedProfile(work: work, port: server.port)
            let requests = try TemplatedTargetTests.run(profile, in: work)
            let devices = requests.filter { $0["path"] as? String == "/api/purchases" }
            try #require(!devices.isEmpty, "no device delivery reached the backend")
            #expect(devices.allSatisfy { $0["signed"] as? Bool == true }, "\(devices)")
            // Only the hook's roles go through it: the App Store's webhooks are not signed by the app.
            let webhooks = requests.filter { $0["path"] as? String == "/apple/notifications" }
            #expect(!webhooks.isEmpty && webhooks.allSatisfy { $0["signature"] is NSNull }, "\(webhooks)")

            let summary = try RestartCommandTests.latestSummary(in: work + "/reports")
            let latency = try #require(summary["latency"] as? [[String: Any]])
            let hook = try #require(latency.first { $0["measure"] as? String == "hook" }, "\(latency)")
            #expect(hook["count"] as? Int == devices.count)
            #expect((hook["micros"] as? [String: Any])?["p99"] != nil)
            let notes = summary["notes"] as? [String] ?? []
            #expect(notes.contains { $0.hasPrefix("the request hook (python3 ") && $0.contains("p99") }, "\(notes)")
        }
    }

    /// A hook that dies stops `capacity` and `detect` as it stops a run, with its one line and exit 69: a step it
    /// cut short is not read as the target breaking, nor a run it stopped as a row of the matrix.
    @Test(arguments: ["capacity", "detect"])
    func aFailingHookStopsCapacityAndDetectWithExit69(command: String) throws {
        try withTemporaryFolder("request-hook-\(command)") { folder in
            var target = ProfileBuilder.Target.embeddedLedger
            target.extra = [#"requestHook: { command: ["sh", "-c", "read line; exit 3"], timeoutSeconds: 0.5 }"#]
            var profile = ProfileBuilder(name: "failing-hook", seed: 4, target: target)
            profile.schedule = [.constant(rate: 10, seconds: 4)]
            profile.settleSeconds = 1
            let file = try profile.write(into: folder.path)
            let arguments =
                command == "capacity"
                ? [file, "--slo", "p99 < 5s", "--step-seconds", "3", "--max-steps", "3", "--recovery-timeout", "0"]
                : [file, "--flaw", "double-grant", "--seeds", "1"]
            let (code, output) = try PayStormRunner.exec(
                [command] + arguments + ["--reports", folder.path + "/reports"]
            )
            #expect(code == 69, "\(output)")
            let lines = output.split(separator: "\n").filter { $0.hasPrefix("paystorm \(command): the request hook") }
            #expect(lines.count == 1 && lines.first?.contains("exited with status 3") == true, "\(output)")
            #expect(!output.contains("| double-grant |") && !output.contains("step 2"), "\(output)")
        }
    }

    /// A shard keeps the hook's time for `merge`, whose report lists it as the run's does.
    @Test func theHooksTimeSurvivesTheMergeOfAShard() throws {
        try PythonTestServer.withBackend("request-hook-shard", server: Self.server, provision: "") { work, server in
            try Self.signedProfile(work: work, port: server.port).write(into: work)
            let (code, output) = try PayStormRunner.exec([
                "run", work + "/profile.json5", "--quiet", "--pki", work + "/pki", "--reports", work + "/reports",
                "--shard", "0/1",
            ])
            #expect([0, 2].contains(code), "\(output)")
            let folders = try FileManager.default.contentsOfDirectory(atPath: work + "/reports")
            let shard = try #require(folders.first { $0.hasSuffix("-shard0of1") }, "\(folders)")
            let (merged, mergeOutput) = try PayStormRunner.exec([
                "merge", work + "/reports/" + shard, "--out", work + "/merged",
            ])
            #expect(merged == code, "\(mergeOutput)")
            let devices = try TemplatedTargetTests.logged(in: work).filter { $0["path"] as? String == "/api/purchases" }
            let data = try Data(contentsOf: URL(fileURLWithPath: work + "/merged/summary.json"))
            let summary = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
            let latency = try #require(summary["latency"] as? [[String: Any]])
            let hook = try #require(latency.first { $0["measure"] as? String == "hook" }, "\(latency)")
            #expect(!devices.isEmpty && hook["count"] as? Int == devices.count, "\(hook)")
        }
    }

    /// A hook that fails in each way stops the run: exit 69, one line naming the hook and what happened, and a
    /// report whose summary says the same.
    @Test(arguments: [
        (
            #"["sh", "-c", "read line; echo 'no key for this account' >&2; exit 3"]"#,
            "exited with status 3", "no key for this account"
        ),
        (#"["sh", "-c", "while read line; do echo 'signed!'; done"]"#, "answered garbage: not JSON", "signed!"),
        (
            #"["sh", "-c", "while read line; do echo '{\"id\": 999999}'; done"]"#,
            "answered garbage: id 999999 is not a request awaiting its answer", ""
        ),
        (#"["sh", "-c", "while read line; do :; done"]"#, "did not answer request", "within 0.5 s"),
    ])
    func aFailingHookStopsTheRunWithExit69(command: String, what: String, detail: String) throws {
        try withTemporaryFolder("request-hook-fails") { folder in
            var target = ProfileBuilder.Target.embeddedLedger
            target.extra = ["requestHook: { command: \(command), timeoutSeconds: 0.5 }"]
            var profile = ProfileBuilder(name: "failing-hook", seed: 4, target: target)
            profile.schedule = [.constant(rate: 10, seconds: 30)]
            profile.settleSeconds = 5
            let file = try profile.write(into: folder.path)
            let started = Date()
            let (code, output) = try PayStormRunner.exec([
                "run", file, "--quiet", "--no-history", "--reports", folder.path + "/reports",
            ])
            #expect(code == 69, "\(output)")
            let line = try #require(output.split(separator: "\n").first { $0.hasPrefix("paystorm: the request hook") })
            #expect(
                line.contains("(sh -c ") && line.contains(what) && (detail.isEmpty || line.contains(detail)),
                "\(line)"
            )
            // It stopped at the failure: not after the 30 s schedule, nor after a settle.
            #expect(Date().timeIntervalSince(started) < 20, "\(output)")
            let summary = try RestartCommandTests.latestSummary(in: folder.path + "/reports")
            #expect(summary["exitCode"] as? Int == 69)
            #expect((summary["reasons"] as? [String])?.first?.hasPrefix("stopped: the request hook") == true)
            #expect(summary["verdict"] as? String != "pass")
        }
    }
}
