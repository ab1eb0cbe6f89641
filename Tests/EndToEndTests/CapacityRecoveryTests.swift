import Dispatch
import Foundation
import PayStormTestKit
import Synchronization
import Testing

/// Capacity steps that do not inherit each other's backlog: the same knee whatever the search starts from.
struct CapacityRecoveryTests {
    /// What one search against its own target found.
    struct Search {
        var start: Double
        var code: Int32
        var output: String
        var json: [String: Any]
        var server: FixedCapacityServer
    }

    /// Three searches of targets with the same known capacity (2 workers × 40 ms: 50 requests/s), started above,
    /// at and below it, side by side to bound the test's time (each sends at most a few hundred requests a
    /// second). A target keeps serving the requests an overloaded step gave up on: a step that does not wait for
    /// it to recover measures that backlog (no success at all, below the knee too), and the knee found then
    /// depends on where the search started.
    @Test(.timeLimit(.minutes(3)))
    func aSearchFindsTheSameKneeFromAboveAtAndBelowIt() throws {
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("capacity-recovery-\(UUID())").path
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: work) }
        #expect(try PayStormRunner.exec(["pki", "init", work + "/pki"]).0 == 0)
        let servers = try [160.0, 50, 20].map { ($0, try FixedCapacityServer(workers: 2, serviceSeconds: 0.040)) }
        defer { for (_, server) in servers { server.close() } }
        let ran = Mutex<[Double: (code: Int32, output: String)]>([:])
        let group = DispatchGroup()
        for (start, server) in servers {
            group.enter()
            Thread.detachNewThread {
                defer { group.leave() }
                let result = (try? Self.search(from: start, port: server.port, work: work)) ?? (-1, "did not start")
                ran.withLock { $0[start] = result }
            }
        }
        group.wait()
        let results = ran.withLock { $0 }
        var done: [Search] = []
        for (start, server) in servers {
            let (code, output) = try #require(results[start])
            let json = try CapacityCommandTests.capacityJSON(under: Self.reports(start, work: work))
            done.append(Search(start: start, code: code, output: output, json: json, server: server))
        }
        var knees: [Double] = []
        for search in done {
            #expect(search.code == 0, "from \(search.start)/s: \(search.output)")
            let knee = try #require(search.json["sustainableRate"] as? Double, "\(search.output)")
            #expect(abs(knee - 50) / 50 <= 0.15, "from \(search.start)/s: knee \(knee)/s: \(search.output)")
            knees.append(knee)
            let steps = try #require(search.json["steps"] as? [[String: Any]], "\(search.output)")
            try Self.checkSteps(steps, search: search)
        }
        let (low, high) = (knees.min() ?? 0, knees.max() ?? 0)
        #expect(high <= low * 1.10, "knees \(knees) from 160, 50 and 20/s")
    }

    /// No step after an overloaded one is without successes; every later step waited for the target, which
    /// recovered, and no delivery of the step before reached the target while it waited.
    static func checkSteps(_ steps: [[String: Any]], search: Search) throws {
        var overloaded = false
        for step in steps {
            let index = step["index"] as? Int ?? 0
            let achieved = step["achieved"] as? Double ?? 0
            if overloaded {
                #expect(achieved > 0, "from \(search.start)/s, step \(index) had no success: \(search.output)")
            }
            let slos = step["slos"] as? [[String: Any]] ?? []
            if slos.contains(where: { $0["held"] as? Bool == false }) { overloaded = true }
            guard index > 1 else { continue }
            let recovery = try #require(step["recovery"] as? [String: Any], "step \(index): \(search.output)")
            #expect(recovery["recovered"] as? Bool == true, "step \(index): \(search.output)")
            let from = try #require(recovery["startedAt"] as? Double)
            let waited = try #require(recovery["waitedSeconds"] as? Double)
            let late = search.server.deliveries(from: from + 0.05, to: from + waited)
            #expect(late == 0, "step \(index): \(late) deliveries during the recovery wait: \(search.output)")
        }
    }

    /// The reports folder of the search from `start`.
    static func reports(_ start: Double, work: String) -> String { work + "/reports-\(Int(start))" }

    /// One search from `start` against the target on `port`: 4 s steps, the first second warm-up, p90 under
    /// 300 ms.
    static func search(from start: Double, port: UInt16, work: String) throws -> (code: Int32, output: String) {
        let name = "knee\(Int(start))"
        var profile = ProfileBuilder(
            name: name,
            seed: 3,
            target: .init(webhookURL: "http://127.0.0.1:\(port)/notifications", requestTimeoutSeconds: 1)
        )
        // Enough connections for every send of an overloaded step to reach the target and queue there.
        profile.target.extra = ["connections: 256"]
        profile.accounts = 2000
        profile.schedule = [.constant(rate: 15, seconds: 3)]
        profile.settleSeconds = 0
        try profile.write(into: work, fileName: name + ".json5")
        return try PayStormRunner.exec([
            "capacity", work + "/" + name + ".json5", "--slo", "p90 < 300ms", "--slo", "errorRate < 1%", "--pki",
            work + "/pki", "--reports", reports(start, work: work), "--start", "\(start)", "--step-seconds", "4",
            "--warmup-seconds", "1", "--resolution", "0.1", "--max-steps", "8", "--recovery-timeout", "30",
        ])
    }
}
