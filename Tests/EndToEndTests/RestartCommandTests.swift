import Foundation
import PayStormTestKit
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Target restarts by command against a separately started ledger whose start script leaves the server running
/// in the background, as `gunicorn --daemon` or `nohup … &` do: the run must not wait for the daemon, must play
/// every restart, and must say how each went.
@Suite(.serialized)
struct RestartCommandTests {
    @Test func restartsADaemonizingTargetAndReportsEachRestart() throws {
        let ledger = try DaemonLedger("restart")
        defer { ledger.stop() }
        var profile = ledger.profile(
            "restart-cmd",
            timeout: 2,
            restart: (count: 2, downSeconds: 0.5, startTimeoutSeconds: 10),
            start: ["/bin/sh", "\(ledger.work)/start.sh"]
        )
        profile.target.deviceURL = "http://127.0.0.1:\(ledger.port)/transactions"
        profile.products = [.init("c", "consumable", priceMilli: 990), .init("n", "nonConsumable", priceMilli: 1990)]
        profile.accounts = 20
        profile.actionMix = ["consumable": 1, "nonConsumable": 1]
        profile.schedule = [.constant(rate: 5, seconds: 8)]
        profile.settleSeconds = 1
        let (code, output, summary) = try ledger.run(profile.json5, timeout: 90)
        #expect(code != 69 && code != 70, "\(output)")
        let notes = (summary["notes"] as? [String]) ?? []
        let restarts = notes.filter { $0.hasPrefix("target restart ") }
        #expect(restarts.count == 2, "\(notes)")
        #expect(restarts.allSatisfy { $0.contains("accepting connections") }, "\(restarts)")
        #expect(!ledger.restartLog.contains("No such file"), "\(ledger.restartLog)")
        // Both restarts and the end of the run: three checks of target-recovers, all held.
        let recovers = try Self.invariant("target-recovers", in: summary)
        #expect(recovers["status"] as? String == "passed", "\(recovers)")
        #expect((recovers["reason"] as? String)?.hasPrefix("3 checks held") == true, "\(recovers)")
    }

    @Test func aStartCommandThatFailsIsReportedNotSkipped() throws {
        let ledger = try DaemonLedger("restart-fail")
        defer { ledger.stop() }
        var profile = ledger.profile(
            "restart-fail",
            timeout: 1,
            restart: (count: 1, downSeconds: 0.2, startTimeoutSeconds: 2),
            start: ["/bin/sh", "-c", "echo cannot start; exit 7"]
        )
        profile.schedule = [.constant(rate: 2, seconds: 4)]
        profile.settleSeconds = 0
        let (code, output, summary) = try ledger.run(profile.json5, timeout: 60)
        let notes = (summary["notes"] as? [String]) ?? []
        let restart = notes.first { $0.hasPrefix("target restart 1 of 1") }
        #expect(restart?.contains("failed: the start command") == true, "\(notes)")
        #expect(restart?.contains("exited 7") == true, "\(notes)")
        #expect(ledger.restartLog.contains("cannot start"))
        // A restart that did not happen fails target-recovers, with the start command's output as its witness;
        // the target never came back, so the end of the run fails it too.
        #expect(code == 1, "\(output)")
        let violations = Self.violations(of: "target-recovers", in: summary)
        #expect(violations.count == 2, "\(violations)")
        let failed = try #require(violations.first { ($0["summary"] as? String)?.contains("restart 1 of 1") == true })
        #expect((failed["summary"] as? String)?.contains("exited 7") == true, "\(failed)")
        #expect((failed["witness"] as? [String])?.contains { $0.hasSuffix("restart.log: cannot start") } == true)
        #expect(failed["account"] as? String == "")
        #expect((failed["replay"] as? String)?.contains("--account") == false)
        #expect(output.contains("first violation, target-recovers, the target:"), "\(output)")
    }

    /// A target whose start script starts it, but whose server dies a second later and stays down: the
    /// restart itself held, the end of the run fails target-recovers, with what the server wrote as it died.
    @Test func aTargetThatDiesAfterItsRestartFailsAtTheEnd() throws {
        let ledger = try DaemonLedger("restart-dies")
        defer { ledger.stop() }
        // Started by the run (a second start), the server crashes a second later and does not come back.
        try
            (ledger.serve + "\n"
            + #"(sleep 1; echo "fatal: start-up after an outage failed"; kill -9 $(cat "\#(ledger.work)/ledger.pid")) &"#)
            .write(toFile: ledger.work + "/restart.sh", atomically: true, encoding: .utf8)
        var profile = ledger.profile(
            "restart-dies",
            timeout: 1,
            restart: (count: 1, downSeconds: 0.2, startTimeoutSeconds: 5),
            start: ["/bin/sh", "\(ledger.work)/restart.sh"]
        )
        profile.schedule = [.constant(rate: 4, seconds: 8)]
        profile.settleSeconds = 2
        let (code, output, summary) = try ledger.run(profile.json5, timeout: 90)
        #expect(code == 1, "\(output)")
        let violations = Self.violations(of: "target-recovers", in: summary)
        #expect(violations.count == 1, "\(violations)")
        let violation = try #require(violations.first)
        #expect((violation["summary"] as? String)?.contains("unreachable at the end of the run") == true)
        let witness = (violation["witness"] as? [String]) ?? []
        #expect(witness.contains { $0.contains("fatal: start-up after an outage failed") }, "\(witness)")
        #expect(witness.contains { $0.contains("answered a delivery for the last time") }, "\(witness)")
    }

    /// The violations of one invariant in a summary.
    static func violations(of invariant: String, in summary: [String: Any]) -> [[String: Any]] {
        (summary["violations"] as? [[String: Any]] ?? []).filter { $0["invariant"] as? String == invariant }
    }

    /// Polls 127.0.0.1:`port` until it accepts a connection.
    static func waitForListener(port: UInt16, timeout: Double) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = port.bigEndian
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
                }
            }
            close(fd)
            if connected { return true }
            Thread.sleep(forTimeInterval: 0.1)
        }
        return false
    }

    /// A loopback port nothing listens on right now.
    static func freePort() throws -> UInt16 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(fd, pointer, length) == 0 && getsockname(fd, pointer, &length) == 0
            }
        }
        guard bound else { throw CocoaError(.fileWriteUnknown) }
        return UInt16(bigEndian: address.sin_port)
    }

    /// Runs a script with `system(3)`, which waits for the shell alone (Foundation's `Process` would wait for the
    /// ledger the script leaves running, through a descriptor it inherits).
    static func shell(_ script: String) -> Int32 {
        system("/bin/sh '\(script)' </dev/null >/dev/null 2>&1")
    }

    /// Runs the binary with its output in a file (a daemon holding a pipe cannot hang the test), killing it at
    /// the deadline; nil when it had to be killed.
    static func execBounded(_ arguments: [String], timeout: Double) throws -> (Int32, String)? {
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("out-\(UUID())")
        _ = FileManager.default.createFile(atPath: output.path, contents: nil)
        defer { try? FileManager.default.removeItem(at: output) }
        let handle = try FileHandle(forWritingTo: output)
        defer { try? handle.close() }
        let process = Process()
        process.executableURL = try PayStormBinary.url()
        process.arguments = arguments
        process.currentDirectoryURL = PayStormBinary.packageRoot
        process.standardOutput = handle
        process.standardError = handle
        try process.run()
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.1) }
        if process.isRunning {
            process.interrupt()
            Thread.sleep(forTimeInterval: 2)
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            return nil
        }
        return (process.terminationStatus, (try? String(contentsOf: output, encoding: .utf8)) ?? "")
    }

    /// One invariant's entry in a summary.
    static func invariant(_ name: String, in summary: [String: Any]) throws -> [String: Any] {
        let invariants = summary["invariants"] as? [[String: Any]] ?? []
        return try #require(invariants.first { $0["name"] as? String == name })
    }

    static func latestSummary(in reports: String) throws -> [String: Any] {
        let data = try Data(contentsOf: URL(fileURLWithPath: reports + "/latest/summary.json"))
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }
}

/// A work folder with a test PKI and a ledger started apart, on a free port: `start.sh` backgrounds it and returns
/// at once (its pid in `ledger.pid`), `kill.sh` ends it by that pid.
struct DaemonLedger {
    let work: String
    let port: UInt16
    /// The start script's text.
    let serve: String

    init(_ name: String) throws {
        work = FileManager.default.temporaryDirectory.appendingPathComponent("\(name)-\(UUID())").path
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
        #expect(try PayStormRunner.exec(["pki", "init", work + "/pki"]).0 == 0)
        port = try RestartCommandTests.freePort()
        let binary = try PayStormBinary.url().path
        serve = """
            "\(binary)" ledger serve --listen 127.0.0.1:\(port) --db "\(work)/ledger.db" \
              --trust "\(work)/pki/root.der" --bundle-id com.example.paystorm >>"\(work)/ledger.out" 2>&1 &
            echo $! >"\(work)/ledger.pid"
            """
        try serve.write(toFile: work + "/start.sh", atomically: true, encoding: .utf8)
        try #"kill -9 "$(cat "\#(work)/ledger.pid")"; sleep 0.2"#.write(
            toFile: work + "/kill.sh",
            atomically: true,
            encoding: .utf8
        )
        #expect(RestartCommandTests.shell(work + "/start.sh") == 0)
        #expect(RestartCommandTests.waitForListener(port: port, timeout: 20), "the ledger did not start")
    }

    /// A profile named `name` (seed 3) aimed at this ledger, with its probe, requests timing out after `timeout`
    /// seconds and a `targetRestart` fault that kills the ledger with `kill.sh` and starts it with `start`.
    func profile(
        _ name: String,
        timeout: Double,
        restart: (count: Int, downSeconds: Double, startTimeoutSeconds: Double),
        start: [String]
    ) -> ProfileBuilder {
        let target = ProfileBuilder.Target(
            webhookURL: "http://127.0.0.1:\(port)/notifications",
            probeURL: "http://127.0.0.1:\(port)/accounts/{appAccountToken}",
            bundleId: "com.example.paystorm",
            requestTimeoutSeconds: timeout
        )
        var profile = ProfileBuilder(name: name, seed: 3, target: target)
        let commands = [["/bin/sh", work + "/kill.sh"], start].map {
            "[" + $0.map { #""\#($0)""# }.joined(separator: ", ") + "]"
        }
        profile.faults = [
            "targetRestart": """
            { count: \(restart.count), downSeconds: \(restart.downSeconds), \
            startTimeoutSeconds: \(restart.startTimeoutSeconds), killCommand: \(commands[0]), startCommand: \(commands[1]) }
            """
        ]
        return profile
    }

    /// Runs `profile` against it, bounded by `timeout`: the exit code, the output and the summary.
    func run(_ profile: String, timeout: Double) throws -> (Int32, String, [String: Any]) {
        try profile.write(toFile: work + "/profile.json5", atomically: true, encoding: .utf8)
        let outcome = try RestartCommandTests.execBounded(
            ["run", work + "/profile.json5", "--quiet", "--pki", work + "/pki", "--reports", work + "/reports"],
            timeout: timeout
        )
        let (code, output) = try #require(outcome, "the run did not end within \(timeout) s")
        return (code, output, try RestartCommandTests.latestSummary(in: work + "/reports"))
    }

    /// What the run's restart commands wrote.
    var restartLog: String {
        (try? String(contentsOfFile: work + "/reports/latest/restart.log", encoding: .utf8)) ?? "missing"
    }

    /// Ends the ledger and removes the folder.
    func stop() {
        _ = RestartCommandTests.shell(work + "/kill.sh")
        try? FileManager.default.removeItem(atPath: work)
    }
}
