import Foundation
import PayStormTestKit
import Testing

/// A soak against a backend whose bearer tokens expire: `target.accounts.refreshSeconds` re-runs the provisioning
/// command while the run lasts, so every device delivery and every probe carries a live token
/// (`target.probe.headers`); without it, requests after the first tokens expire are refused with 401.
@Suite(.serialized)
struct AccountRefreshTests {
    /// Accepts a user's request only with `Authorization: Bearer t-<ms>` issued at most 5 s earlier (else 401),
    /// credits a device delivery's consumable once per transaction, answers `GET /api/users/ID/wallet` with the
    /// contract's JSON, logs each user request's kind and status to `requests.jsonl`, and answers 200 to webhooks.
    static let server = PythonTestServer.script(
        respond: #"""
            wallets = {}
            def respond(request, body):
                status, answer = 200, b""
                parts = request.path.split("/")
                if request.path.startswith("/api/users/"):
                    auth = request.headers.get("Authorization") or ""
                    issued = int(auth[len("Bearer t-"):]) if auth.startswith("Bearer t-") else 0
                    status = 200 if time.time() * 1000 - issued <= 5000 else 401
                    kind = "probe" if request.command == "GET" else "device"
                    wallet = wallets.setdefault(parts[3], {})
                    if status == 200 and kind == "device":
                        segment = json.loads(body)["jws"].split(".")[1]
                        tx = json.loads(base64.urlsafe_b64decode(segment + "=" * (-len(segment) % 4)))
                        wallet[tx["transactionId"]] = (tx["productId"], tx.get("quantity", 1))
                    if status == 200 and kind == "probe":
                        balances = {}
                        for product, quantity in wallet.values():
                            balances[product] = balances.get(product, 0) + quantity
                        answer = json.dumps({"entitlements": [], "balances": balances}).encode()
                    with open(work + "/requests.jsonl", "a") as f:
                        f.write(json.dumps({"kind": kind, "status": status, "auth": auth}) + "\n")
                return status, answer
            """#
    )

    /// Prints a token issued now for every account, and counts its runs in `provisioned`.
    static let provision = #"""
        import json, sys, time
        work = sys.argv[1]
        for line in sys.stdin:
            token = json.loads(line)["appAccountToken"]
            print(json.dumps({"appAccountToken": token, "id": "u-" + token[:8], "token": "t-%d" % (time.time() * 1000)}))
        open(work + "/provisioned", "a").write("x")
        """#

    @Test func refreshedTokensKeepASoakAuthorizedWhereTokensProvisionedOnceExpire() throws {
        try PythonTestServer.withBackend("refresh", server: Self.server, provision: Self.provision) { work, server in
            try check(work: work, server: server)
        }
    }

    private func check(work: String, server: PythonTestServer) throws {
        // Provisioned once, the tokens issued before the run expire 3.5 s into its 10 s.
        let once = try run(work: work, port: server.port, refresh: nil)
        #expect(once.device.contains(401), "the server never refused an expired token: \(once.device)")
        #expect(once.probe.contains(401), "the final probe's tokens did not expire: \(once.probe)")
        let refused = once.notes.first { $0.contains("refused as unauthorized (HTTP 401 or 403: ") }
        #expect(refused?.hasSuffix("; tokens that expire during a run need target.accounts.refreshSeconds") == true)

        let refreshed = try run(work: work, port: server.port, refresh: 1)
        #expect(!refreshed.device.isEmpty && refreshed.device.allSatisfy { $0 == 200 }, "\(refreshed.device)")
        #expect(refreshed.probe.count >= 10 && refreshed.probe.allSatisfy { $0 == 200 }, "\(refreshed.probe)")
        #expect(Set(refreshed.tokens).count > 3, "requests carried \(Set(refreshed.tokens).count) tokens")
        let note = try #require(refreshed.notes.first { $0.hasPrefix("accounts re-provisioned every 1 s") })
        #expect(note.contains("all succeeded"), "\(note)")
        #expect(!refreshed.notes.contains { $0.contains("refused as unauthorized") }, "\(refreshed.notes)")
        #expect(refreshed.provisioned >= 6, "the command ran \(refreshed.provisioned) times in a 10 s run")
        // Every purchase credited once and probed: the run passes.
        #expect(refreshed.code == 0, "\(refreshed.output)")
    }

    /// One 10 s run of device purchases through the server, with the tokens refreshed every `refresh` seconds
    /// or provisioned once: the statuses of its device deliveries and probes, the tokens they carried, the
    /// report's notes, how many times the provisioning command ran, and the exit code and output.
    private func run(work: String, port: Int, refresh: Int?) throws -> Outcome {
        for file in ["requests.jsonl", "provisioned"] { try? FileManager.default.removeItem(atPath: work + "/" + file) }
        var target = ProfileBuilder.Target(requestTimeoutSeconds: 2)
        target.extra = [
            #"webhook: { url: "http://127.0.0.1:\#(port)/apple/hooks", body: { payload: "{signedPayload}" } }"#,
            """
            deviceDelivery: {
              url: "http://127.0.0.1:\(port)/api/users/{account.id}/purchases",
              headers: { Authorization: "Bearer {account.token}" },
              body: { jws: "{signedTransaction}" },
            }
            """,
            """
            probe: { kind: "http", url: "http://127.0.0.1:\(port)/api/users/{account.id}/wallet",
                     headers: { Authorization: "Bearer {account.token}" }, intervalSeconds: 0 }
            """,
            """
            accounts: { provision: ["python3", "\(work)/provision.py", "\(work)"], timeoutSeconds: 20
                        \(refresh.map { ", refreshSeconds: \($0)" } ?? "") }
            """,
        ]
        var profile = ProfileBuilder(name: "refresh", seed: 5, target: target)
        profile.schedule = [.constant(rate: 4, seconds: 10)]
        profile.settleSeconds = 0
        try profile.write(into: work)
        let (code, output) = try PayStormRunner.exec([
            "run", work + "/profile.json5", "--quiet", "--pki", work + "/pki", "--reports", work + "/reports",
        ])
        let lines = try String(contentsOfFile: work + "/requests.jsonl", encoding: .utf8).split(separator: "\n")
        let requests = try lines.map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
        let statuses = { (kind: String) in
            requests.filter { $0["kind"] as? String == kind }.compactMap { $0["status"] as? Int }
        }
        return Outcome(
            device: statuses("device"),
            probe: statuses("probe"),
            tokens: requests.compactMap { $0["auth"] as? String },
            notes: (try RestartCommandTests.latestSummary(in: work + "/reports")["notes"] as? [String]) ?? [],
            provisioned: (try? String(contentsOfFile: work + "/provisioned", encoding: .utf8))?.count ?? 0,
            code: code,
            output: output
        )
    }

    /// What one run showed.
    private struct Outcome {
        var device: [Int]
        var probe: [Int]
        var tokens: [String]
        var notes: [String]
        var provisioned: Int
        var code: Int32
        var output: String
    }
}
