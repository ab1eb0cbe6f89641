import Foundation
import PayStormTestKit
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A run against a backend whose API is not contract v1 (issue 9, items 1–3): its own paths and bodies, a
/// bearer token and user id from a provisioning command, and 409 for "already had it". Device deliveries must be
/// sent through the template, and a 409 must count as acknowledged (not as an error).
@Suite(.serialized)
struct TemplatedTargetTests {
    /// A stdlib HTTP server on 127.0.0.1:0: it writes its port to `port`, every request (method, path,
    /// Authorization, body) as a JSON line to `requests.jsonl`, answers 200 to webhooks and 409 to device
    /// deliveries, and exits after 120 s at most.
    static let server = PythonTestServer.script(
        respond: #"""
            def respond(request, body):
                with open(work + "/requests.jsonl", "a") as f:
                    f.write(json.dumps({"method": request.command, "path": request.path,
                                        "auth": request.headers.get("Authorization"), "body": body.decode()}) + "\n")
                return (409 if request.path.startswith("/api/users/") else 200), b""
            """#
    )

    /// Gives every account a lowercase user id and a token.
    static let provision = #"""
        import json, sys
        for line in sys.stdin:
            token = json.loads(line)["appAccountToken"]
            print(json.dumps({"appAccountToken": token.lower(), "id": "user-" + token.lower()[:8], "token": "t-" + token[:4]}))
        """#

    /// Runs `profile` from `work` (its PKI and reports there) and returns what the server logged, one object per
    /// request. No probe: the state invariants are unchecked (unknown), never a threshold breach (3) or a failure.
    static func run(_ profile: ProfileBuilder, in work: String) throws -> [[String: Any]] {
        try profile.write(into: work)
        let (code, output) = try PayStormRunner.exec([
            "run", work + "/profile.json5", "--quiet", "--pki", work + "/pki", "--reports", work + "/reports",
        ])
        #expect([0, 2].contains(code), "\(output)")
        return try logged(in: work)
    }

    /// What the server in `work` logged, one object per request.
    static func logged(in work: String) throws -> [[String: Any]] {
        let lines = try String(contentsOfFile: work + "/requests.jsonl", encoding: .utf8).split(separator: "\n")
        return try lines.map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
    }

    @Test func templatedDeviceDeliveriesAreSentAndA409CountsAsAcknowledged() throws {
        try PythonTestServer.withBackend("templated", server: Self.server, provision: Self.provision) { work, server in
            try check(work: work, port: server.port)
        }
    }

    private func check(work: String, port: Int) throws {
        var target = ProfileBuilder.Target(requestTimeoutSeconds: 2)
        target.extra = [
            #"webhook: { url: "http://127.0.0.1:\#(port)/apple/hooks", body: { payload: "{signedPayload}" } }"#,
            """
            deviceDelivery: {
              method: "PUT",
              url: "http://127.0.0.1:\(port)/api/users/{account.id}/purchases",
              headers: { Authorization: "Bearer {account.token}" },
              body: { jws: "{signedTransaction}", userId: "{account.id}", sku: "{productId}" },
              responses: { granted: ["200-299"], alreadyHad: [409] },
            }
            """,
            #"accounts: { provision: ["python3", "\#(work)/provision.py"], timeoutSeconds: 20 }"#,
        ]
        var profile = ProfileBuilder(name: "templated", seed: 5, target: target)
        profile.products = [.init("n", "nonConsumable", priceMilli: 1990)]
        profile.actionMix = ["nonConsumable": 1]
        profile.schedule = [.constant(rate: 5, seconds: 3)]
        profile.thresholds = ["device.errorRate == 0%"]
        profile.settleSeconds = 0
        let requests = try Self.run(profile, in: work)
        let devices = requests.filter { ($0["path"] as? String)?.hasPrefix("/api/users/") == true }
        try #require(!devices.isEmpty, "no device delivery reached the templated endpoint")
        for device in devices {
            let path = try #require(device["path"] as? String)
            let text = try #require(device["body"] as? String)
            let body = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: String])
            #expect(device["method"] as? String == "PUT")
            #expect(body["userId"]?.hasPrefix("user-") == true, "\(body)")
            #expect(path == "/api/users/\(body["userId"] ?? "")/purchases")
            #expect(body["jws"]?.split(separator: ".").count == 3)
            #expect(body["sku"] == "n")
            #expect((device["auth"] as? String)?.hasPrefix("Bearer t-") == true)
        }
        let hooks = requests.filter { $0["path"] as? String == "/apple/hooks" }
        #expect(!hooks.isEmpty && hooks.allSatisfy { ($0["body"] as? String)?.hasPrefix(#"{"payload":""#) == true })

        let summary = try RestartCommandTests.latestSummary(in: work + "/reports")
        let totals = try #require(summary["requests"] as? [String: Any])
        #expect((totals["errors"] as? [String: Int])?["http4xx"] == nil, "\(totals)")
        let thresholds = try #require(summary["thresholds"] as? [[String: Any]])
        #expect(thresholds.count == 1 && thresholds.allSatisfy { $0["passed"] as? Bool == true }, "\(thresholds)")
    }
}
