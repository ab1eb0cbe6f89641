package import AppStoreModel
import Foundation
package import RunControl

#if canImport(Glibc)
import Glibc
#endif

/// The embedded default target: `paystorm ledger serve` run as a child process of this binary, on an
/// ephemeral loopback port, so that a target restart is a real SIGKILL and a relaunch on the same
/// database and port.
///
/// The child's standard input is a pipe whose other end only this process holds, and the child serves with
/// `--exit-with-stdin`: however PayStorm ends, SIGKILL included, the kernel closes that end, and the ledger
/// shuts down cleanly (its database committed and checkpointed) instead of serving on as an orphan.
package final class LedgerProcess: @unchecked Sendable {
    // @unchecked: `process`, `lifeline` and `port` change only under `lock`.
    private let executable: String
    private let baseArguments: [String]
    private let logPath: String
    private let lock = NSLock()
    private var process: Process?
    /// The write end of the child's standard input, held open while it should run.
    private var lifeline: FileHandle?
    private var port: UInt16 = 0

    /// The address it listens on, `127.0.0.1:PORT`, once started.
    private(set) var address = ""

    /// Prepares the child's command line.
    /// - Parameters:
    ///   - executable: the `paystorm` binary.
    ///   - database: the SQLite file.
    ///   - trustedRoot: the root certificate (DER) the ledger trusts.
    ///   - bundleId: the app's bundle ID.
    ///   - environment: `Sandbox`, `Production`...
    ///   - appAppleId: the app's Apple ID (Production).
    ///   - flaws: the ledger flaws to switch on.
    ///   - logPath: where the ledger's standard error goes.
    package init(
        executable: String,
        database: String,
        trustedRoot: String,
        bundleId: String,
        environment: Environment,
        appAppleId: Int64?,
        flaws: [String],
        logPath: String
    ) {
        self.executable = executable
        var arguments = [
            "ledger", "serve", "--db", database, "--trust", trustedRoot, "--bundle-id", bundleId,
            "--environment", environment.rawValue, "--exit-with-stdin",
        ]
        if let appAppleId { arguments += ["--app-apple-id", String(appAppleId)] }
        for flaw in flaws { arguments += ["--flaw", flaw] }
        baseArguments = arguments
        self.logPath = logPath
    }

    /// Starts the ledger (on the port it had before, after a restart) and waits for its address.
    /// - Parameter interruption: when given, an interruption kills the starting ledger and ends the wait.
    /// - Throws: `RunError.unreachable` when it does not come up within 15 seconds (or was interrupted).
    @discardableResult
    package func start(interruption: Interruption? = nil) throws(RunError) -> String {
        lock.lock()
        defer { lock.unlock() }
        let child = Process()
        child.executableURL = URL(fileURLWithPath: executable)
        child.arguments = baseArguments + ["--listen", "127.0.0.1:\(port)"]
        let output = Pipe()
        child.standardOutput = output
        let input = Pipe()
        child.standardInput = input
        if !FileManager.default.fileExists(atPath: logPath) {
            _ = FileManager.default.createFile(atPath: logPath, contents: nil)
        }
        let log = FileHandle(forWritingAtPath: logPath)
        _ = try? log?.seekToEnd()
        child.standardError = log ?? FileHandle.nullDevice
        do {
            try child.run()
        } catch {
            throw .unreachable("cannot start the embedded ledger (\(executable)): \(error)")
        }
        let pid = child.processIdentifier
        let stopping = interruption?.onInterrupt { _ = Glibc.kill(pid, SIGKILL) }
        let line = Self.firstLine(of: output.fileHandleForReading, timeout: 15)
        stopping?.cancel()
        guard let line, interruption?.isInterrupted != true else {
            child.terminate()
            child.waitUntilExit()
            let interrupted = interruption?.signal.map { " (the run was interrupted by \($0.name))" } ?? ""
            throw .unreachable("the embedded ledger did not print its address\(interrupted); see \(logPath)")
        }
        // Keep draining its standard output so it never blocks on a full pipe.
        let reader = output.fileHandleForReading
        Thread.detachNewThread {
            while !reader.availableData.isEmpty {}
        }
        address = line.trimmingCharacters(in: .whitespacesAndNewlines)
        if let portText = address.split(separator: ":").last, let bound = UInt16(portText) { port = bound }
        process = child
        lifeline = input.fileHandleForWriting
        return address
    }

    /// Kills the ledger with SIGKILL (a crash: nothing is flushed) and waits for it to die.
    package func kill() {
        lock.lock()
        defer { lock.unlock() }
        guard let process, process.isRunning else { return }
        Glibc.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        self.process = nil
        closeLifeline()
    }

    /// Stops the ledger cleanly (SIGTERM) and waits for it.
    package func stop() {
        lock.lock()
        defer { lock.unlock() }
        guard let process, process.isRunning else { return }
        process.terminate()
        process.waitUntilExit()
        self.process = nil
        closeLifeline()
    }

    private func closeLifeline() {
        try? lifeline?.close()
        lifeline = nil
    }

    /// Reads one line from a pipe, giving up after `timeout` seconds.
    private static func firstLine(of handle: FileHandle, timeout: Double) -> String? {
        let result = LockedBox<String?>(nil)
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            var bytes: [UInt8] = []
            var byte: UInt8 = 0
            while read(handle.fileDescriptor, &byte, 1) == 1 {
                if byte == UInt8(ascii: "\n") { break }
                bytes.append(byte)
            }
            result.value = bytes.isEmpty ? nil : String(decoding: bytes, as: UTF8.self)
            done.signal()
        }
        guard done.wait(timeout: .now() + timeout) == .success else { return nil }
        return result.value
    }
}

/// A value shared between threads under a lock.
final class LockedBox<Value>: @unchecked Sendable {
    // @unchecked: every access goes through `lock`.
    private let lock = NSLock()
    private var stored: Value
    init(_ value: Value) { stored = value }
    var value: Value {
        get { lock.withLock { stored } }
        set { lock.withLock { stored = newValue } }
    }
}

/// The path of the running executable, for spawning the embedded ledger from the same binary.
package func currentExecutablePath() -> String {
    if let path = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") { return path }
    return CommandLine.arguments[0]
}
