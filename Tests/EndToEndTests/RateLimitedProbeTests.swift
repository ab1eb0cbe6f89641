import Foundation
import Testing

/// A backend that limits its API's rate, as most staging gateways do: the final probe of every account at once
/// gets 429 for most of them, backs off and asks again fewer at a time, so the run judges every account
/// instead of ending unknown.
@Suite(.serialized)
struct RateLimitedProbeTests {
    /// Credits a device delivery's consumable once per transaction, takes a refunded one back, and answers
    /// `GET /wallet/TOKEN` with the contract's JSON; but it counts the client's device and wallet requests in each
    /// second of the clock, and past eight answers a wallet read 429 (purchases are never refused), as a gateway
    /// limiting a client's rate does. Logs each wallet read's status to `probes.jsonl`.
    static let server = PythonTestServer.script(
        respond: #"""
            wallets, refunded = {}, set()
            window = [0, 0]
            def claims(jws):
                segment = jws.split(".")[1]
                return json.loads(base64.urlsafe_b64decode(segment + "=" * (-len(segment) % 4)))
            def respond(request, body):
                status, answer = 200, b""
                parts = request.path.split("/")
                second = int(time.time())
                if window[0] != second:
                    window[:] = [second, 0]
                window[1] += 1
                if request.path.startswith("/device/"):
                    tx = claims(json.loads(body)["jws"])
                    if tx["transactionId"] not in refunded:
                        wallet = wallets.setdefault(parts[2].lower(), {})
                        wallet[tx["transactionId"]] = (tx["productId"], tx.get("quantity", 1))
                elif request.path.startswith("/hooks"):
                    note = claims(json.loads(body)["payload"])
                    if note["notificationType"] == "REFUND":
                        tx = claims(note["data"]["signedTransactionInfo"])
                        refunded.add(tx["transactionId"])
                        wallets.get(tx["appAccountToken"].lower(), {}).pop(tx["transactionId"], None)
                elif request.path.startswith("/wallet/"):
                    if window[1] > 8:
                        status = 429
                    else:
                        balances = {}
                        for product, quantity in wallets.get(parts[2].lower(), {}).values():
                            balances[product] = balances.get(product, 0) + quantity
                        answer = json.dumps({"entitlements": [], "balances": balances}).encode()
                    with open(work + "/probes.jsonl", "a") as f:
                        f.write(json.dumps({"status": status}) + "\n")
                return status, answer
            """#
    )

    /// Final probe only, then safety probes every second too (of the accounts a refund touched), which the
    /// device deliveries leave no budget for: a 429 reads nothing, so it decides nothing, and the run still passes.
    @Test(arguments: [0, 1])
    func probesOfATargetThatLimitsItsRateBackOffAndJudgeEveryAccount(intervalSeconds: Double) throws {
        try PythonTestServer.withBackend("rate-limited", server: Self.server, provision: "") { work, server in
            let port = server.port
            let profile = """
                { name: "rate-limited", seed: 5,
                  target: {
                    webhook: { url: "http://127.0.0.1:\(port)/hooks", body: { payload: "{signedPayload}" } },
                    deviceDelivery: { url: "http://127.0.0.1:\(port)/device/{appAccountToken}",
                                      body: { jws: "{signedTransaction}" } },
                    probe: { kind: "http", url: "http://127.0.0.1:\(port)/wallet/{appAccountToken}",
                             intervalSeconds: \(intervalSeconds) },
                    requestTimeoutSeconds: 2,
                  },
                  catalog: { products: [{ id: "c", type: "consumable", priceMilli: 990 }] },
                  population: { accounts: 10 }, actionMix: { consumable: 1, refund: 1 },
                  schedule: [{ kind: "constant", rate: 20, seconds: 3 }],
                  settleSeconds: 1 }
                """
            try profile.write(toFile: work + "/profile.json5", atomically: true, encoding: .utf8)
            let (code, output) = try PayStormRunner.exec([
                "run", work + "/profile.json5", "--quiet", "--pki", work + "/pki", "--reports", work + "/reports",
            ])
            let statuses = try String(contentsOfFile: work + "/probes.jsonl", encoding: .utf8)
                .split(separator: "\n").compactMap {
                    (try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Int])?["status"]
                }
            #expect(statuses.contains(429), "the server never limited the probe: \(statuses)")
            let notes = (try RestartCommandTests.latestSummary(in: work + "/reports")["notes"] as? [String]) ?? []
            // Every account probed and judged: the run passes, and says how the probes got their answers.
            #expect(code == 0, "\(output)")
            #expect(!notes.contains { $0.contains("final probes failed") }, "\(notes)")
            #expect(statuses.filter { $0 == 200 }.count >= 8, "\(statuses)")
            let final = notes.first { $0.contains("final probes were answered 429 or 503") }
            #expect(final?.contains("each was answered within") == true, "\(notes)")
            let safety = notes.first { $0.contains("safety probes during the run were answered 429") }
            #expect((safety != nil) == (intervalSeconds > 0), "\(notes)")
            #expect(!notes.contains { $0.contains("probe answered 429") }, "\(notes)")
        }
    }
}
