import Foundation
import PayStormTestKit
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A stopped run still leaves its whole report, at once: SIGINT, SIGTERM or SIGHUP during the settle period or
/// the final probe's back-off (a target answering `429 Retry-After: 99999`) ends the run within 2 s with the
/// signal's exit code, summary.json, junit.xml and report.html written and nothing left running.
@Suite(.serialized)
struct InterruptionTests {
    /// Answers every webhook and device delivery 200, and every wallet read 429 with `Retry-After: 99999`,
    /// logging each read to `probed`.
    static let limitingServer = PythonTestServer.script(
        respond: #"""
            def respond(request, body):
                if request.path.startswith("/wallet/"):
                    with open(work + "/probed", "a") as f:
                        f.write("read\n")
                    return 429, b"", {"Retry-After": "99999"}
                return 200, b""
            """#
    )

    /// The signals a CI runner, a terminal and a closed session send, with the exit code each gives.
    static let signals: [(Int32, Int32)] = [(SIGINT, 130), (SIGTERM, 143), (SIGHUP, 129)]

    /// Runs a profile of ten accounts buying consumables for two seconds against `port`, final probe only,
    /// with the report under `work/reports`.
    static func startRun(in work: String, port: Int, settle: Int) throws -> SignalledRun {
        try profile(port: port, settle: settle).write(into: work)
        return try SignalledRun.start([
            "run", work + "/profile.json5", "--plain", "--pki", work + "/pki", "--reports", work + "/reports",
        ])
    }

    private static func profile(port: Int, settle: Int) -> ProfileBuilder {
        let url = "http://127.0.0.1:\(port)"
        var target = ProfileBuilder.Target(probeURL: "\(url)/wallet/{appAccountToken}", requestTimeoutSeconds: 2)
        target.probeIntervalSeconds = 0
        target.extra = [
            #"webhook: { url: "\#(url)/hooks", body: { payload: "{signedPayload}" } }"#,
            #"deviceDelivery: { url: "\#(url)/device/{appAccountToken}", body: { jws: "{signedTransaction}" } }"#,
        ]
        var profile = ProfileBuilder(name: "interrupted", seed: 5, target: target)
        profile.schedule = [.constant(rate: 5, seconds: 2)]
        profile.settleSeconds = Double(settle)
        return profile
    }

    /// A target that answers 429 with `Retry-After: 99999` to every probe held the final probe's back-off six
    /// minutes, ignoring SIGINT; now each signal ends it at once.
    @Test(arguments: signals)
    func aSignalDuringTheFinalProbesBackOffEndsTheRunWithinTwoSecondsWithItsReport(
        signal: Int32,
        code: Int32
    )
        throws
    {
        try PythonTestServer.withBackend("backoff-signal", server: Self.limitingServer, provision: "") { work, server in
            let run = try Self.startRun(in: work, port: server.port, settle: 0)
            defer { run.kill() }
            try #require(run.wait(for: work + "/probed", timeout: 30), "the final probe never started")
            usleep(300_000)
            let (status, seconds) = try #require(run.signal(signal, within: 10))
            #expect(status == code, "\(run.output)")
            #expect(seconds < 2, "stopped \(seconds) s after the signal")
            try Self.expectInterruptedReport(in: work + "/reports", code: code)
        }
    }

    /// A run in its settle period (two minutes of it) stops at the signal and reports the accounts it never
    /// probed as unknown.
    @Test func aSignalDuringSettleEndsTheRunWithinTwoSecondsWithItsReport() throws {
        try PythonTestServer.withBackend("settle-signal", server: Self.limitingServer, provision: "") { work, server in
            let run = try Self.startRun(in: work, port: server.port, settle: 120)
            defer { run.kill() }
            try #require(run.waitForOutput("settling for", timeout: 30), "the run never settled: \(run.output)")
            let (status, seconds) = try #require(run.signal(SIGTERM, within: 10))
            #expect(status == 143, "\(run.output)")
            #expect(seconds < 2, "stopped \(seconds) s after the signal")
            #expect(!FileManager.default.fileExists(atPath: work + "/probed"), "the final probe ran")
            let summary = try Self.expectInterruptedReport(in: work + "/reports", code: 143)
            let notes = summary["notes"] as? [String] ?? []
            #expect(notes.contains { $0.contains("were not read by the final probe") }, "\(notes)")
        }
    }

    /// The metrics linger comes after the whole report: a signal in it ends the linger at once, and the run exits
    /// with its verdict's code (it exited with the signal's, though nothing was cut short), its report not marked
    /// interrupted.
    @Test(arguments: signals)
    func aSignalDuringTheMetricsLingerEndsItAndTheVerdictsExitCodeStands(signal: Int32, code: Int32) throws {
        let reports = FileManager.default.temporaryDirectory.appendingPathComponent("linger-signal-\(UUID())").path
        defer { try? FileManager.default.removeItem(atPath: reports) }
        let run = try SignalledRun.start([
            "run", "Profiles/smoke.json5", "--plain", "--metrics-listen", "127.0.0.1:0", "--metrics-linger", "60",
            "--rate", "2", "--duration", "1s", "--settle", "0", "--no-history", "--reports", reports,
        ])
        defer { run.kill() }
        try #require(run.waitForOutput("metrics: the final values stay at", timeout: 60), "\(run.output)")
        let (status, seconds) = try #require(run.signal(signal, within: 10))
        #expect(status == 0 && status != code, "\(run.output)")
        #expect(seconds < 2, "stopped \(seconds) s after the signal")
        let summary = try RestartCommandTests.latestSummary(in: reports)
        #expect(summary["interrupted"] as? Bool == false && summary["exitCode"] as? Int == 0, "\(summary)")
    }

    /// Checks the report of an interrupted run: its files, its exit code, and that no invariant passed on
    /// accounts the final probe never read.
    @discardableResult
    static func expectInterruptedReport(in reports: String, code: Int32) throws -> [String: Any] {
        let summary = try RestartCommandTests.latestSummary(in: reports)
        #expect(summary["interrupted"] as? Bool == true)
        #expect(summary["exitCode"] as? Int == Int(code))
        for file in ["junit.xml", "report.html", "summary.csv"] {
            #expect(FileManager.default.fileExists(atPath: reports + "/latest/" + file), "\(file) missing")
        }
        // What rests on the final probe's reads: never passed on accounts it did not read. (An invariant judged on
        // the target's answers alone, such as no-lost-notification, may pass on what was sent.)
        let probed = [
            "no-double-grant", "no-unlock-without-verified-purchase", "revocation-honored", "no-lost-purchase",
            "no-stale-regression", "subscription-state",
        ]
        let invariants = (summary["invariants"] as? [[String: Any]] ?? []).filter {
            probed.contains($0["name"] as? String ?? "")
        }
        #expect(invariants.count == probed.count)
        #expect(!invariants.contains { $0["status"] as? String == "passed" }, "\(invariants)")
        return summary
    }

    /// `paystorm detect` stops its matrix at the signal: the run in progress reports, its embedded ledger stops
    /// cleanly (no `ledger serve` left, no `ledger.db-wal`), and the exit code names the signal.
    @Test(arguments: signals)
    func anInterruptedDetectStopsItsLedgerAndExitsWithTheSignalsCode(signal: Int32, code: Int32) throws {
        let reports = FileManager.default.temporaryDirectory.appendingPathComponent("detect-signal-\(UUID())").path
        defer { try? FileManager.default.removeItem(atPath: reports) }
        let run = try SignalledRun.start(["detect", "--seeds", "1", "--reports", reports])
        defer { run.kill() }
        try #require(run.waitForLedger(under: reports, timeout: 30), "no embedded ledger started: \(run.output)")
        usleep(500_000)
        let (status, seconds) = try #require(run.signal(signal, within: 10))
        #expect(status == code, "\(run.output)")
        #expect(seconds < 2, "stopped \(seconds) s after the signal")
        #expect(SignalledRun.ledgers(under: reports).isEmpty, "a ledger was left serving")
        let folders = (try? FileManager.default.contentsOfDirectory(atPath: reports)) ?? []
        #expect(!folders.contains { FileManager.default.fileExists(atPath: reports + "/" + $0 + "/ledger.db-wal") })
        #expect(folders.contains { FileManager.default.fileExists(atPath: reports + "/" + $0 + "/summary.json") })
        #expect(!run.output.contains("| none (correct"), "the matrix ran on: \(run.output)")
    }

    /// A PayStorm killed with SIGKILL cannot stop anything, yet its embedded ledger stops on its own, cleanly.
    @Test func theEmbeddedLedgerStopsWhenPayStormIsKilled() throws {
        let reports = FileManager.default.temporaryDirectory.appendingPathComponent("killed-\(UUID())").path
        defer { try? FileManager.default.removeItem(atPath: reports) }
        let run = try SignalledRun.start([
            "run", "Profiles/smoke.json5", "--quiet", "--rate", "2", "--duration", "120", "--reports", reports,
        ])
        defer { run.kill() }
        try #require(run.waitForLedger(under: reports, timeout: 30), "no embedded ledger started: \(run.output)")
        _ = run.signal(SIGKILL, within: 5)
        let deadline = Date().addingTimeInterval(5)
        while !SignalledRun.ledgers(under: reports).isEmpty && Date() < deadline { usleep(50_000) }
        #expect(SignalledRun.ledgers(under: reports).isEmpty, "the ledger outlived PayStorm")
        let folders = (try? FileManager.default.contentsOfDirectory(atPath: reports)) ?? []
        #expect(!folders.contains { FileManager.default.fileExists(atPath: reports + "/" + $0 + "/ledger.db-wal") })
    }
}

/// The binary run with its output in a file, to be signalled and timed.
final class SignalledRun {
    let process = Process()
    private let outputPath: String

    private init(outputPath: String) { self.outputPath = outputPath }

    static func start(_ arguments: [String]) throws -> SignalledRun {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("signalled-\(UUID())").path
        _ = FileManager.default.createFile(atPath: path, contents: nil)
        let run = SignalledRun(outputPath: path)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        defer { try? handle.close() }
        run.process.executableURL = try PayStormBinary.url()
        run.process.arguments = arguments
        run.process.currentDirectoryURL = PayStormBinary.packageRoot
        run.process.standardOutput = handle
        run.process.standardError = handle
        try run.process.run()
        return run
    }

    /// What it printed so far.
    var output: String { (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? "" }

    /// Waits until `path` exists; false when the run ended first or `timeout` passed.
    func wait(for path: String, timeout: Double) -> Bool {
        waitUntil(timeout: timeout) { FileManager.default.fileExists(atPath: path) }
    }

    /// Waits until its output contains `text`.
    func waitForOutput(_ text: String, timeout: Double) -> Bool {
        waitUntil(timeout: timeout) { self.output.contains(text) }
    }

    /// Waits until a `ledger serve` on a database under `reports` runs.
    func waitForLedger(under reports: String, timeout: Double) -> Bool {
        waitUntil(timeout: timeout) { !Self.ledgers(under: reports).isEmpty }
    }

    private func waitUntil(timeout: Double, _ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline {
            if condition() { return true }
            usleep(50_000)
        }
        return condition()
    }

    /// Sends `number` and waits for the exit.
    /// - Returns: the exit status and the seconds it took, nil when it still ran after `within` seconds.
    func signal(_ number: Int32, within: Double) -> (Int32, Double)? {
        let sent = Date()
        Glibc.kill(process.processIdentifier, number)
        while process.isRunning && Date().timeIntervalSince(sent) < within { usleep(10_000) }
        guard !process.isRunning else { return nil }
        return (process.terminationStatus, Date().timeIntervalSince(sent))
    }

    /// Ends it (SIGKILL) if a failed test left it running, and removes its output.
    func kill() {
        if process.isRunning { Glibc.kill(process.processIdentifier, SIGKILL) }
        try? FileManager.default.removeItem(atPath: outputPath)
    }

    /// The pids of `paystorm ledger serve` processes whose database lies under `folder`.
    static func ledgers(under folder: String) -> [Int32] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap(Int32.init).filter { pid in
            guard let data = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") else { return false }
            let arguments = data.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
            return arguments.contains("serve") && arguments.contains { $0.hasPrefix(folder) }
        }
    }
}
