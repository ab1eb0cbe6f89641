import Foundation
import PayStormTestKit
import Testing

/// A backend that limits its API's rate, as most staging gateways do: the final probe of every account at once
/// gets 429 for most of them, backs off and asks again fewer at a time, so the run judges every account
/// instead of ending unknown.
@Suite(.serialized)
struct RateLimitedProbeTests {
    /// Python for a server whose `respond` first calls `limited(request)`: `(status, answer[, headers])` when the
    /// request is refused, else None. Credits a device delivery's consumable once per transaction, takes a
    /// refunded one back, and answers `GET /wallet/TOKEN` with the contract's JSON; purchases are never refused.
    /// Logs each wallet read to `probes.jsonl` as `{"status": …}` plus what `limited` put in `logged`.
    static func server(limiter: String) -> String {
        PythonTestServer.script(
            respond: limiter + #"""

                wallets, refunded, logged = {}, set(), {}
                def claims(jws):
                    segment = jws.split(".")[1]
                    return json.loads(base64.urlsafe_b64decode(segment + "=" * (-len(segment) % 4)))
                def respond(request, body):
                    parts = request.path.split("/")
                    refused = limited(request)
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
                        with open(work + "/probes.jsonl", "a") as f:
                            f.write(json.dumps(dict(logged, status=refused[0] if refused else 200)) + "\n")
                        if refused:
                            return refused
                        balances = {}
                        for product, quantity in wallets.get(parts[2].lower(), {}).values():
                            balances[product] = balances.get(product, 0) + quantity
                        return 200, json.dumps({"entitlements": [], "balances": balances}).encode()
                    return 200, b""
                """#
        )
    }

    /// Counts the client's requests (webhooks, device deliveries and wallet reads) over the last second and, past
    /// eight, answers a wallet read 429, as a gateway limiting a client's rate does. A sliding second, not the
    /// clock's: safety probes that came early in each second of the clock, before eight requests, were never
    /// limited in some runs.
    static let perSecond = server(
        limiter: #"""
            recent = []
            def limited(request):
                now = time.time()
                recent[:] = [t for t in recent if t > now - 1] + [now]
                return (429, b"") if request.path.startswith("/wallet/") and len(recent) > 8 else None
            """#
    )

    /// Four wallet reads in a window of two seconds, opened by the first read after the last window ended; a read
    /// past them is answered 429 with the `Retry-After` (whole seconds) to the window's end, as most gateways
    /// answer. A read that comes back before that end, in a later burst than the answer that told it (0.5 s on),
    /// is logged `early`.
    static let windowed = server(
        limiter: #"""
            window, told = {"end": 0.0, "count": 0}, {"until": 0.0, "at": 0.0}
            def limited(request):
                if not request.path.startswith("/wallet/"):
                    return None
                now = time.time()
                logged["early"] = now < told["until"] - 0.05 and now - told["at"] > 0.5
                if now >= window["end"]:
                    window.update(end=now + 2, count=0)
                window["count"] += 1
                if window["count"] <= 4:
                    return None
                told.update(until=window["end"], at=now)
                return 429, b"", {"Retry-After": str(max(1, int(window["end"] - now + 0.999)))}
            """#
    )

    /// Runs ten accounts buying consumables and refunds for `seconds` at `rate` actions a second against `server`,
    /// with safety probes every `intervalSeconds` (0: the final probe only).
    /// - Returns: the exit code and console, every wallet read the server logged, and the report's notes.
    func run(
        _ server: String,
        intervalSeconds: Double,
        rate: Int,
        seconds: Int
    ) throws -> (code: Int32, output: String, reads: [[String: Any]], notes: [String]) {
        var outcome: (Int32, String, [[String: Any]], [String])?
        try PythonTestServer.withBackend("rate-limited", server: server, provision: "") { work, server in
            let url = "http://127.0.0.1:\(server.port)"
            var target = ProfileBuilder.Target(probeURL: "\(url)/wallet/{appAccountToken}", requestTimeoutSeconds: 2)
            target.probeIntervalSeconds = intervalSeconds
            target.extra = [
                #"webhook: { url: "\#(url)/hooks", body: { payload: "{signedPayload}" } }"#,
                #"deviceDelivery: { url: "\#(url)/device/{appAccountToken}", body: { jws: "{signedTransaction}" } }"#,
            ]
            var profile = ProfileBuilder(name: "rate-limited", seed: 5, target: target)
            profile.actionMix = ["consumable": 1, "refund": 1]
            profile.schedule = [.constant(rate: Double(rate), seconds: Double(seconds))]
            profile.settleSeconds = 1
            try profile.write(into: work)
            let (code, output) = try PayStormRunner.exec([
                "run", work + "/profile.json5", "--quiet", "--pki", work + "/pki", "--reports", work + "/reports",
            ])
            let log = (try? String(contentsOfFile: work + "/probes.jsonl", encoding: .utf8)) ?? ""
            let reads = try log.split(separator: "\n").compactMap {
                try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
            }
            let notes = (try? RestartCommandTests.latestSummary(in: work + "/reports")["notes"] as? [String]) ?? []
            outcome = (code, output, reads, notes)
        }
        return try #require(outcome)
    }

    /// Final probe only, then safety probes every second too (of the accounts a refund touched), which the
    /// device deliveries leave no budget for: a 429 reads nothing, so it decides nothing, and the run still passes.
    @Test(arguments: [0, 1])
    func probesOfATargetThatLimitsItsRateBackOffAndJudgeEveryAccount(intervalSeconds: Double) throws {
        let (code, output, reads, notes) = try run(
            Self.perSecond,
            intervalSeconds: intervalSeconds,
            rate: 20,
            seconds: 3
        )
        let statuses = reads.compactMap { $0["status"] as? Int }
        #expect(statuses.contains(429), "the server never limited the probe: \(statuses)")
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

    /// Final probe only, then safety probes every half second too: each waits as long as the target's
    /// Retry-After asked, so none comes back inside the window it was told to wait out, and the run passes.
    @Test(arguments: [0, 0.5])
    func probesWaitAsLongAsTheTargetsRetryAfterAsks(intervalSeconds: Double) throws {
        let (code, output, reads, notes) = try run(
            Self.windowed,
            intervalSeconds: intervalSeconds,
            rate: 10,
            seconds: 6
        )
        #expect(reads.contains { $0["status"] as? Int == 429 }, "the server never limited the probe")
        #expect(!reads.contains { $0["early"] as? Bool == true }, "\(reads)")
        #expect(code == 0, "\(output)")
        let final = notes.first { $0.contains("final probes were answered 429 or 503") }
        #expect(final?.contains("Retry-After asked: up to 2 s") == true, "\(notes)")
        if intervalSeconds > 0 {
            let safety = notes.first { $0.contains("safety probes during the run were answered 429") }
            #expect(safety?.contains("sent again when the target's Retry-After asked") == true, "\(notes)")
        }
    }
}
