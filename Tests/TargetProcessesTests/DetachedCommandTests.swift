import Foundation
import RunControl
import Testing

@testable import TargetProcesses

#if canImport(Glibc)
import Glibc
#endif

/// The one way PayStorm spawns a profile's or a probe's command, and waits for it.
struct DetachedCommandTests {
    private static func spawn(_ arguments: [String]) throws -> pid_t {
        let null = open("/dev/null", O_WRONLY | O_CLOEXEC)
        defer { close(null) }
        return try DetachedCommand.spawn(arguments, stdin: nil, stdout: null, stderr: null).get()
    }

    @Test(arguments: [("exit 0", 0), ("exit 3", 3), ("kill -9 $$", 128 + 9)] as [(String, Int32)])
    func waitReportsTheShellsExitStatus(script: String, status: Int32) throws {
        let pid = try Self.spawn(["sh", "-c", script])
        #expect(DetachedCommand.wait(for: pid, until: Date().addingTimeInterval(30)) == .exited(status))
    }

    @Test func waitLeavesAChildStillRunningAtTheDeadline() throws {
        let pid = try Self.spawn(["sleep", "30"])
        defer {
            kill(pid, SIGKILL)
            var ignored: Int32 = 0
            _ = waitpid(pid, &ignored, 0)
        }
        #expect(DetachedCommand.wait(for: pid, until: Date().addingTimeInterval(0.2)) == .stillRunning)
    }

    @Test func runTimesOutWithoutWaitingForTheCommand() throws {
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("detached-\(UUID()).log")
        defer { try? FileManager.default.removeItem(at: log) }
        // Left running past the deadline by design; a short sleep so it does not outlive the test run by much.
        let outcome = DetachedCommand.run(
            ["sleep", "3"],
            logPath: log.path,
            timeout: 0.5,
            interruption: Interruption()
        )
        #expect(outcome == .timedOut)
    }

    /// A script written just before it is run can still be open for writing for a moment (in a child that another
    /// thread forked in between, until that child's exec): the kernel then refuses to run it ("Text file busy").
    /// Seen with a probe script beside end-to-end runs; the spawn waits for the writer to let go.
    @Test func spawnWaitsForAScriptStillOpenForWriting() throws {
        let script = FileManager.default.temporaryDirectory.appendingPathComponent("busy-\(UUID()).sh")
        defer { try? FileManager.default.removeItem(at: script) }
        let writer = open(script.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o755)
        try #require(writer >= 0)
        _ = "#!/bin/sh\nexit 0\n".withCString { write(writer, $0, strlen($0)) }
        let release = DispatchWorkItem { close(writer) }
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.1, execute: release)
        let pid = try Self.spawn([script.path])
        #expect(DetachedCommand.wait(for: pid, until: Date().addingTimeInterval(30)) == .exited(0))
    }

    @Test func runCannotStartAMissingProgram() {
        let outcome = DetachedCommand.run(
            ["/no/such/program"],
            logPath: "/dev/null",
            timeout: 5,
            interruption: Interruption()
        )
        guard case .cannotStart(let reason) = outcome else {
            Issue.record("expected cannotStart, got \(outcome)")
            return
        }
        #expect(reason.contains("/no/such/program"))
    }
}
