import Foundation
import Testing

/// A soak against a backend whose bearer tokens expire: `target.accounts.refreshSeconds` re-runs the provisioning
/// command while the run lasts, and every device delivery carries a live token; without it, deliveries after the
/// first tokens expire are refused with 401.
@Suite(.serialized)
struct AccountRefreshTests {
    /// Accepts a device delivery only with `Authorization: Bearer t-<ms>` issued at most 5 s earlier (else 401),
    /// logs each one's status to `devices.jsonl`, and answers 200 to webhooks.
    static let server =
        #"""
        import json, sys, threading, time
        from http.server import ThreadingHTTPServer, BaseHTTPRequestHandler
        work = sys.argv[1]
        lock = threading.Lock()
        class H(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            def do_any(self):
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                status = 200
                if self.path.startswith("/api/users/"):
                    auth = self.headers.get("Authorization") or ""
                    issued = int(auth[len("Bearer t-"):]) if auth.startswith("Bearer t-") else 0
                    status = 200 if time.time() * 1000 - issued <= 5000 else 401
                    with lock, open(work + "/devices.jsonl", "a") as f:
                        f.write(json.dumps({"status": status, "auth": auth}) + "\n")
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()
            do_POST = do_any
            def log_message(self, *args): pass
        """# + "\n" + PythonTestServer.serve

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
        #expect(once.statuses.contains(401), "the server never refused an expired token: \(once.statuses)")

        let refreshed = try run(work: work, port: server.port, refresh: 1)
        #expect(!refreshed.statuses.isEmpty && refreshed.statuses.allSatisfy { $0 == 200 }, "\(refreshed.statuses)")
        #expect(Set(refreshed.tokens).count > 3, "device deliveries carried \(Set(refreshed.tokens).count) tokens")
        let note = try #require(refreshed.notes.first { $0.hasPrefix("accounts re-provisioned every 1 s") })
        #expect(note.contains("all succeeded"), "\(note)")
        #expect(refreshed.provisioned >= 6, "the command ran \(refreshed.provisioned) times in a 10 s run")
    }

    /// One 10 s run of device purchases through the server, with the tokens refreshed every `refresh` seconds
    /// or provisioned once: the device deliveries' statuses and tokens, the report's notes, and how many times
    /// the provisioning command ran.
    private func run(
        work: String,
        port: Int,
        refresh: Int?
    ) throws -> (
        statuses: [Int], tokens: [String], notes: [String], provisioned: Int
    ) {
        for file in ["devices.jsonl", "provisioned"] { try? FileManager.default.removeItem(atPath: work + "/" + file) }
        let profile = """
            { name: "refresh", seed: 5,
              target: {
                webhook: { url: "http://127.0.0.1:\(port)/apple/hooks", body: { payload: "{signedPayload}" } },
                deviceDelivery: {
                  url: "http://127.0.0.1:\(port)/api/users/{account.id}/purchases",
                  headers: { Authorization: "Bearer {account.token}" },
                  body: { jws: "{signedTransaction}" },
                },
                accounts: { provision: ["python3", "\(work)/provision.py", "\(work)"], timeoutSeconds: 20
                            \(refresh.map { ", refreshSeconds: \($0)" } ?? "") },
                requestTimeoutSeconds: 2,
              },
              catalog: { products: [{ id: "c", type: "consumable", priceMilli: 990 }] },
              population: { accounts: 10 }, actionMix: { consumable: 1 },
              schedule: [{ kind: "constant", rate: 4, seconds: 10 }],
              settleSeconds: 0 }
            """
        try profile.write(toFile: work + "/profile.json5", atomically: true, encoding: .utf8)
        let (code, output) = try PayStormRunner.exec([
            "run", work + "/profile.json5", "--quiet", "--pki", work + "/pki", "--reports", work + "/reports",
        ])
        #expect([0, 1, 2, 3].contains(code), "\(output)")
        let lines = try String(contentsOfFile: work + "/devices.jsonl", encoding: .utf8).split(separator: "\n")
        let devices = try lines.map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
        let notes = (try RestartCommandTests.latestSummary(in: work + "/reports")["notes"] as? [String]) ?? []
        let provisioned = (try? String(contentsOfFile: work + "/provisioned", encoding: .utf8))?.count ?? 0
        return (
            devices.compactMap { $0["status"] as? Int }, devices.compactMap { $0["auth"] as? String }, notes,
            provisioned
        )
    }
}
