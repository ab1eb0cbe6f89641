import Foundation
import PayStormTestKit
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `paystorm capacity` end to end against a loopback target of known capacity, and its usage errors.
struct CapacityCommandTests {
    @Test func capacityFindsTheKneeOfATargetWithKnownCapacity() throws {
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("capacity-\(UUID())").path
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: work) }
        #expect(try PayStormRunner.exec(["pki", "init", work + "/pki"]).0 == 0)
        // Two workers, 40 ms each: 50 requests/s. Every action is one consumable purchase, one webhook.
        let server = try FixedCapacityServer(workers: 2, serviceSeconds: 0.040)
        defer { server.close() }
        let webhook = "http://127.0.0.1:\(server.port)/notifications"
        var profile = ProfileBuilder(
            name: "knee",
            seed: 3,
            target: .init(webhookURL: webhook, requestTimeoutSeconds: 2)
        )
        profile.accounts = 2000
        profile.schedule = [.constant(rate: 15, seconds: 3)]
        profile.settleSeconds = 0
        try profile.write(into: work, fileName: "knee.json5")
        // Above 50/s the queue grows by (rate − 50) requests a second, so a request t seconds into an overloaded
        // step waits (rate − 50)/50 × t: at 54/s the p90 of the judged seconds (1 to 6) passes 400 ms; below 50/s
        // the latency stays near the 40 ms service time. The 360 ms between them absorb the scheduling delays of a
        // busy 2-core machine (the suite runs beside the detection matrix), which a 200 ms SLO over 3 s steps did not.
        let (code, output) = try PayStormRunner.exec([
            "capacity", work + "/knee.json5", "--slo", "p90 < 400ms", "--slo", "errorRate < 1%", "--pki",
            work + "/pki", "--reports", work + "/reports", "--step-seconds", "6", "--warmup-seconds", "1",
            "--max-steps", "10", "--quiet",
        ])
        #expect(code == 0, "\(output)")
        let folders = try FileManager.default.contentsOfDirectory(atPath: work + "/reports")
        let folder = work + "/reports/" + (try #require(folders.first { $0.hasSuffix("-capacity") }))
        let json = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: folder + "/capacity.json")))
                as? [String: Any]
        )
        let sustainable = try #require(json["sustainableRate"] as? Double, "\(output)")
        #expect(abs(sustainable - 50) / 50 <= 0.10, "sustainable \(sustainable)/s, analytic 50/s: \(output)")
        #expect(json["outcome"] as? String == "sustainable")
        let csv = try String(contentsOfFile: folder + "/capacity.csv", encoding: .utf8)
        let steps = (json["steps"] as? [Any])?.count ?? 0
        #expect(csv.split(separator: "\n").count == steps + 1)
        #expect(FileManager.default.fileExists(atPath: folder + "/capacity.html"))
        #expect(output.contains("sustainable rate:"))
        // Beside the knee, the ceiling the fitted law puts on the throughput (about 50/s here).
        let ceiling = try #require(json["uslCeiling"] as? Double, "\(output)")
        #expect(ceiling > 25 && ceiling < 200, "ceiling \(ceiling)/s: \(output)")
        #expect(output.contains("USL ceiling: "), "\(output)")

        // Re-analysis sends nothing and finds the same rate.
        let served = server.requests
        let (again, reanalysed) = try PayStormRunner.exec(["capacity", "--from", folder])
        #expect(again == 0, "\(reanalysed)")
        #expect(server.requests == served)
        let second = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: folder + "/capacity.json")))
                as? [String: Any]
        )
        #expect(second["sustainableRate"] as? Double == sustainable)
        // Every step once: the steps/latest link the runs leave is not a step of its own.
        #expect((second["steps"] as? [Any])?.count == steps)
    }

    /// A backend that double-grants meets a loose objective at every rate: the search still finds its rates, and
    /// says which invariants its steps failed and exits 1, as a run would, instead of passing it.
    @Test func invariantsAStepFailedAreSaidAndExitOne() throws {
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("capacity-flawed-\(UUID())").path
        defer { try? FileManager.default.removeItem(atPath: work) }
        let (code, output) = try PayStormRunner.exec([
            "capacity", "Profiles/detect.json5", "--flaw", "double-grant", "--slo", "p99 < 5s", "--step-seconds", "3",
            "--max-steps", "1", "--reports", work, "--quiet",
        ])
        #expect(code == 1, "\(output)")
        #expect(output.contains("every step met every SLO"), "\(output)")
        #expect(output.contains("invariants failed at 25 actions/s (1 of 1 steps): no-double-grant ("), "\(output)")
        // One step could not bracket anything: the search says that --max-steps, not the backend, stopped it.
        #expect(output.contains("stopped by --max-steps before any step broke an SLO"), "\(output)")
        // A script reading capacity.json sees them too, without walking the steps.
        let json = try Self.capacityJSON(under: work)
        #expect(json["searchEnd"] as? String == "maxSteps", "\(json)")
        let failed = try #require(json["failedInvariants"] as? [String: Int], "\(json)")
        #expect((failed["no-double-grant"] ?? 0) > 0, "\(failed)")
        #expect((json["invariantsSentence"] as? String)?.hasPrefix("invariants failed at 25 actions/s") == true)
    }

    /// `--slo invariants`: a step that double-granted is a bad step, and a re-analysis keeps judging it so.
    @Test func withTheInvariantsObjectiveAStepThatDoubleGrantsIsBad() throws {
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("capacity-judged-\(UUID())").path
        defer { try? FileManager.default.removeItem(atPath: work) }
        let (code, output) = try PayStormRunner.exec([
            "capacity", "Profiles/detect.json5", "--flaw", "double-grant", "--slo", "p99 < 5s", "--slo", "invariants",
            "--step-seconds", "3", "--max-steps", "1", "--reports", work, "--quiet",
        ])
        #expect(code == 1, "\(output)")
        #expect(output.contains("no step met every SLO: at the lowest, 25 actions/s, invariants (no-double-grant ("))
        #expect(output.contains("SLO invariants: broke already at the lowest step"), "\(output)")
        let folders = try FileManager.default.contentsOfDirectory(atPath: work)
        let folder = work + "/" + (try #require(folders.first { $0.hasSuffix("-capacity") }, "\(folders)"))
        let (again, reanalysed) = try PayStormRunner.exec(["capacity", "--from", folder])
        #expect(again == 1, "\(reanalysed)")
        #expect(reanalysed.contains("invariants (no-double-grant ("), "\(reanalysed)")
    }

    /// A search stopped by a signal during its second step exits with the signal's code, writes the outcome
    /// `interrupted` and claims no rate: never "every step met every SLO up to" the one step it finished.
    @Test(arguments: [(SIGINT, Int32(130)), (SIGTERM, Int32(143))])
    func anInterruptedSearchWritesInterruptedAndClaimsNoRate(signal: Int32, code: Int32) throws {
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("capacity-signal-\(UUID())").path
        defer { try? FileManager.default.removeItem(atPath: work) }
        let run = try SignalledRun.start([
            "capacity", "Profiles/detect.json5", "--slo", "p99 < 5s", "--start", "5", "--step-seconds", "4",
            "--warmup-seconds", "1", "--max-steps", "4", "--reports", work,
        ])
        defer { run.kill() }
        try #require(run.waitForOutput("step 1:", timeout: 60), "step 1 never ended: \(run.output)")
        usleep(1_000_000)
        let (status, _) = try #require(run.signal(signal, within: 20), "still running: \(run.output)")
        #expect(status == code, "\(run.output)")
        #expect(run.output.contains("capacity: interrupted ("), "\(run.output)")
        #expect(!run.output.contains("every step met every SLO"), "\(run.output)")
        #expect(!run.output.contains("USL ceiling"), "\(run.output)")
        let json = try Self.capacityJSON(under: work)
        #expect(json["outcome"] as? String == "interrupted", "\(json)")
        #expect(json["sustainableRate"] == nil, "\(json)")
        #expect(json["searchEnd"] == nil, "\(json)")
        #expect((json["sentence"] as? String)?.contains("no rate is established") == true, "\(json)")
    }

    /// The `capacity.json` of the one capacity folder under `reports`.
    static func capacityJSON(under reports: String) throws -> [String: Any] {
        let folders = try FileManager.default.contentsOfDirectory(atPath: reports)
        let folder = reports + "/" + (try #require(folders.first { $0.hasSuffix("-capacity") }, "\(folders)"))
        return try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: folder + "/capacity.json")))
                as? [String: Any]
        )
    }

    @Test(arguments: [["--slo", "p99 <"], ["--slo", "p99 < 250"], ["--slo", "webhook.errorRate < 1%"]])
    func aBadSLOIsAUsageErrorNamingIt(_ slo: [String]) throws {
        let (code, output) = try PayStormRunner.exec(["capacity", "Profiles/capacity.json5"] + slo)
        #expect(code == 64, "\(output)")
        #expect(output.contains("--slo"))
        #expect(output.contains(slo[1]), "\(output)")
    }

    /// Without --slo the profile's thresholds are the SLOs, under the same rules: a count on one kind is refused
    /// (steps keep counts for all traffic only, so it would always hold) before anything is sent.
    @Test func aProfileThresholdCountingOneKindIsRefusedAsAnSLO() throws {
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("capacity-kind-\(UUID())").path
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: work) }
        var profile = ProfileBuilder(
            name: "kinds",
            seed: 1,
            target: .init(webhookURL: "http://127.0.0.1:9/notifications")
        )
        profile.schedule = [.constant(rate: 5, seconds: 3)]
        profile.thresholds = ["webhook.errorRate < 1%"]
        try profile.write(into: work, fileName: "kinds.json5")
        let (code, output) = try PayStormRunner.exec(["capacity", work + "/kinds.json5", "--reports", work + "/r"])
        #expect(code == 65, "\(output)")
        #expect(output.contains("thresholds") && output.contains("webhook.errorRate"), "\(output)")
    }

    @Test func fromAFolderThatIsNotACapacityFolderIsBadInput() throws {
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("capacity-from-\(UUID())").path
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: work) }
        let (code, output) = try PayStormRunner.exec(["capacity", "--from", work, "--slo", "p99 < 1s"])
        #expect(code == 65, "\(output)")
        #expect(output.contains(work))
    }
}

/// An HTTP/1.1 server on 127.0.0.1:0 with a known capacity: `workers` servers, each taking `serviceSeconds`
/// per request. Completion times follow the ideal schedule (a request starts when it arrives or when a
/// worker frees, whichever is later), so a late wake-up on a busy machine adds latency but never lowers the
/// capacity of `workers / serviceSeconds` requests a second. Like a real server it serves every request it
/// read, also one whose client gave up and closed: an overload leaves a backlog that outlasts it.
final class FixedCapacityServer: @unchecked Sendable {
    // @unchecked: the listener and accepted descriptors are touched by the accept thread and close(); the
    // workers' schedule and the counter are behind their own Mutex and Atomic.
    let port: UInt16
    private let listener: Int32
    private let freeAt: Mutex<[Double]>
    private let served = Atomic<Int>(0)
    private let service: Double
    /// When each request was read (seconds since 1970), and whether it was a recovery probe (body `{}`).
    private let arrivals = Mutex<[(at: Double, probe: Bool)]>([])

    var requests: Int { served.load(ordering: .relaxed) }

    /// Requests other than recovery probes read between two times (seconds since 1970).
    func deliveries(from: Double, to: Double) -> Int {
        arrivals.withLock { $0.filter { !$0.probe && $0.at >= from && $0.at <= to }.count }
    }

    init(workers: Int, serviceSeconds: Double) throws {
        service = serviceSeconds
        freeAt = Mutex([Double](repeating: 0, count: workers))
        let (listener, port) = try listenOnLoopback(backlog: 512)
        self.listener = listener
        self.port = port
        Thread.detachNewThread { [self] in
            while true {
                let client = accept(listener, nil, nil)
                if client < 0 { return }
                Thread.detachNewThread { [self] in serve(client) }
            }
        }
    }

    func close() {
        shutdown(listener, Int32(SHUT_RDWR))
        Glibc.close(listener)
    }

    private static func now() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }

    /// Answers each request on one kept-alive connection with 200 `{}` at its scheduled completion time.
    private func serve(_ client: Int32) {
        defer { Glibc.close(client) }
        var buffer: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            // One whole request: headers, then Content-Length bytes of body.
            var end: Int?
            var needed = 0
            while true {
                if end == nil, let range = buffer.firstRange(of: Array("\r\n\r\n".utf8)) {
                    end = range.upperBound
                    let head = String(decoding: buffer[..<range.lowerBound], as: UTF8.self).lowercased()
                    let length = head.split(separator: "\r\n").first { $0.hasPrefix("content-length:") }
                        .flatMap { Int($0.dropFirst(15).trimmingCharacters(in: .whitespaces)) }
                    needed = range.upperBound + (length ?? 0)
                }
                if end != nil && buffer.count >= needed { break }
                let count = recv(client, &chunk, chunk.count, 0)
                if count <= 0 { return }
                buffer += chunk[0..<count]
            }
            let probe = buffer[(end ?? needed)..<needed].elementsEqual("{}".utf8)
            arrivals.withLock { $0.append((Date().timeIntervalSince1970, probe)) }
            buffer.removeFirst(needed)
            let arrival = Self.now()
            let done = freeAt.withLock { free in
                let worker = free.indices.min { free[$0] < free[$1] }!
                free[worker] = max(arrival, free[worker]) + service
                return free[worker]
            }
            let wait = done - Self.now()
            if wait > 0 { usleep(useconds_t(wait * 1_000_000)) }
            served.add(1, ordering: .relaxed)
            let response = Array(
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}".utf8
            )
            if send(client, response, response.count, Int32(MSG_NOSIGNAL)) < 0 { return }
        }
    }
}
