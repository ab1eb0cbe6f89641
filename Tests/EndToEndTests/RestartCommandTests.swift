import Foundation
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
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("restart-\(UUID())").path
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: work) }
        #expect(try PayStormRunner.exec(["pki", "init", work + "/pki"]).0 == 0)
        let port = try Self.freePort()
        let binary = try LedgerProcess.binary().path
        // The start script backgrounds the ledger and returns at once; the kill script ends it by its pid file.
        let start = """
            "\(binary)" ledger serve --listen 127.0.0.1:\(port) --db "\(work)/ledger.db" \
              --trust "\(work)/pki/root.der" --bundle-id com.example.paystorm >>"\(work)/ledger.out" 2>&1 &
            echo $! >"\(work)/ledger.pid"
            """
        let kill = #"kill -9 "$(cat "\#(work)/ledger.pid")"; sleep 0.2"#
        try start.write(toFile: work + "/start.sh", atomically: true, encoding: .utf8)
        try kill.write(toFile: work + "/kill.sh", atomically: true, encoding: .utf8)
        defer { _ = Self.shell(work + "/kill.sh") }
        #expect(Self.shell(work + "/start.sh") == 0)
        #expect(Self.waitForListener(port: port, timeout: 20), "the ledger did not start")

        let profile = """
            { name: "restart-cmd", seed: 3,
              target: { webhookURL: "http://127.0.0.1:\(port)/notifications",
                        deviceURL: "http://127.0.0.1:\(port)/transactions",
                        probe: { kind: "http", url: "http://127.0.0.1:\(port)/accounts/{appAccountToken}" },
                        bundleId: "com.example.paystorm", requestTimeoutSeconds: 2 },
              catalog: { products: [{ id: "c", type: "consumable", priceMilli: 990 },
                                    { id: "n", type: "nonConsumable", priceMilli: 1990 }] },
              population: { accounts: 20 }, actionMix: { consumable: 1, nonConsumable: 1 },
              schedule: [{ kind: "constant", rate: 5, seconds: 8 }],
              faults: { targetRestart: { count: 2, downSeconds: 0.5, startTimeoutSeconds: 10,
                                         killCommand: ["/bin/sh", "\(work)/kill.sh"],
                                         startCommand: ["/bin/sh", "\(work)/start.sh"] } },
              settleSeconds: 1 }
            """
        try profile.write(toFile: work + "/profile.json5", atomically: true, encoding: .utf8)
        let outcome = try Self.execBounded(
            ["run", work + "/profile.json5", "--quiet", "--pki", work + "/pki", "--reports", work + "/reports"],
            timeout: 90
        )
        let (code, output) = try #require(outcome, "the run did not end within 90 s: it waited for the daemon")
        #expect(code != 69 && code != 70, "\(output)")
        let summary = try Self.latestSummary(in: work + "/reports")
        let notes = (summary["notes"] as? [String]) ?? []
        let restarts = notes.filter { $0.hasPrefix("target restart ") }
        #expect(restarts.count == 2, "\(notes)")
        #expect(restarts.allSatisfy { $0.contains("accepting connections") }, "\(restarts)")
        let log = (try? String(contentsOfFile: work + "/reports/latest/restart.log", encoding: .utf8)) ?? "missing"
        #expect(!log.contains("No such file"), "\(log)")
    }

    @Test func aStartCommandThatFailsIsReportedNotSkipped() throws {
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("restart-fail-\(UUID())").path
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: work) }
        #expect(try PayStormRunner.exec(["pki", "init", work + "/pki"]).0 == 0)
        let port = try Self.freePort()
        let binary = try LedgerProcess.binary().path
        try """
        "\(binary)" ledger serve --listen 127.0.0.1:\(port) --db "\(work)/ledger.db" \
          --trust "\(work)/pki/root.der" --bundle-id com.example.paystorm >>"\(work)/ledger.out" 2>&1 &
        echo $! >"\(work)/ledger.pid"
        """.write(toFile: work + "/start.sh", atomically: true, encoding: .utf8)
        try #"kill -9 "$(cat "\#(work)/ledger.pid")""#.write(
            toFile: work + "/kill.sh",
            atomically: true,
            encoding: .utf8
        )
        defer { _ = Self.shell(work + "/kill.sh") }
        #expect(Self.shell(work + "/start.sh") == 0)
        #expect(Self.waitForListener(port: port, timeout: 20), "the ledger did not start")
        let profile = """
            { name: "restart-fail", seed: 3,
              target: { webhookURL: "http://127.0.0.1:\(port)/notifications",
                        probe: { kind: "http", url: "http://127.0.0.1:\(port)/accounts/{appAccountToken}" },
                        bundleId: "com.example.paystorm", requestTimeoutSeconds: 1 },
              catalog: { products: [{ id: "c", type: "consumable", priceMilli: 990 }] },
              population: { accounts: 10 }, actionMix: { consumable: 1 },
              schedule: [{ kind: "constant", rate: 2, seconds: 4 }],
              faults: { targetRestart: { count: 1, downSeconds: 0.2, startTimeoutSeconds: 2,
                                         killCommand: ["/bin/sh", "\(work)/kill.sh"],
                                         startCommand: ["/bin/sh", "-c", "echo cannot start; exit 7"] } },
              settleSeconds: 0 }
            """
        try profile.write(toFile: work + "/profile.json5", atomically: true, encoding: .utf8)
        let outcome = try Self.execBounded(
            ["run", work + "/profile.json5", "--quiet", "--pki", work + "/pki", "--reports", work + "/reports"],
            timeout: 60
        )
        _ = try #require(outcome, "the run did not end within 60 s")
        let notes = (try Self.latestSummary(in: work + "/reports")["notes"] as? [String]) ?? []
        let restart = notes.first { $0.hasPrefix("target restart 1 of 1") }
        #expect(restart?.contains("failed: the start command") == true, "\(notes)")
        #expect(restart?.contains("exited 7") == true, "\(notes)")
        let log = (try? String(contentsOfFile: work + "/reports/latest/restart.log", encoding: .utf8)) ?? ""
        #expect(log.contains("cannot start"))
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
        process.executableURL = try LedgerProcess.binary()
        process.arguments = arguments
        process.currentDirectoryURL = PayStormRunner.root
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

    static func latestSummary(in reports: String) throws -> [String: Any] {
        let data = try Data(contentsOf: URL(fileURLWithPath: reports + "/latest/summary.json"))
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }
}
