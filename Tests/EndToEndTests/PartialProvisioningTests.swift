import Foundation
import PayStormTestKit
import Testing

/// A provisioning command that prints only some of the accounts it was given: the run goes on (the others keep
/// their defaults) and says so, in its notes and on the console.
struct PartialProvisioningTests {
    /// Prints the first half of the accounts it reads.
    static let provision = #"""
        import json, sys
        lines = sys.stdin.read().splitlines()
        for line in lines[: len(lines) // 2]:
            token = json.loads(line)["appAccountToken"]
            print(json.dumps({"appAccountToken": token, "id": "u-" + token[:8]}))
        """#

    static let server = PythonTestServer.script(
        respond: #"""
            def respond(request, body):
                if request.command == "GET":
                    return 200, json.dumps({"entitlements": [], "balances": {}}).encode()
                return 500, b"{}"
            """#
    )

    @Test func aCommandThatPrintsHalfTheAccountsIsNoted() throws {
        try PythonTestServer.withBackend("partial", server: Self.server, provision: Self.provision) { work, server in
            var target = ProfileBuilder.Target(
                webhookURL: "http://127.0.0.1:\(server.port)/hook",
                probeURL: "http://127.0.0.1:\(server.port)/users/{account.id}"
            )
            target.extra = [#"accounts: { provision: ["python3", "\#(work)/provision.py"] }"#]
            var profile = ProfileBuilder(name: "partial", seed: 5, target: target)
            profile.schedule = [.constant(rate: 2, seconds: 1)]
            profile.settleSeconds = 0
            try profile.write(into: work)
            let (_, output) = try PayStormRunner.exec([
                "run", work + "/profile.json5", "--plain", "--no-history", "--pki", work + "/pki", "--reports",
                work + "/reports",
            ])
            let expected = "target.accounts.provision printed 5 of the 10 accounts it was given; the other 5 keep"
            #expect(output.contains("note: " + expected), "\(output)")
            let summary = try #require(
                try JSONSerialization.jsonObject(
                    with: Data(contentsOf: URL(fileURLWithPath: work + "/reports/latest/summary.json"))
                ) as? [String: Any]
            )
            let notes = summary["notes"] as? [String] ?? []
            #expect(notes.contains { $0.hasPrefix(expected) }, "\(notes)")
        }
    }
}
