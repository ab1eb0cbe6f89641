import Foundation
import RunControl

#if canImport(Glibc)
import Glibc
#endif

/// A profile's command whose output PayStorm reads (a probe's command or transform, the accounts' provisioning
/// command), run with a deadline.
///
/// Its standard input, output and error are unlinked temporary files rather than pipes, and it runs as a
/// ``DetachedCommand`` in a session of its own: a grandchild that outlives it (`sh -c 'x &'`) holds no pipe
/// PayStorm would wait on, so its output is read in full as soon as it exits, and at the deadline, or when the
/// run is interrupted, the whole session is killed.
enum CapturedCommand {
    /// How the command ended and what it wrote.
    struct Output {
        /// Its exit status (or `128 + signal` when a signal ended it).
        var status: Int32
        /// Its standard output.
        var stdout: [UInt8]
        /// Its standard error.
        var stderr: [UInt8]
    }

    /// Why no output could be read; the description is a phrase to follow the command's name.
    enum Failure: Error, CustomStringConvertible {
        /// A temporary file could not be made or its input written (`strerror`).
        case noScratchFile(String)
        /// The command could not be started.
        case cannotStart(String)
        /// Waiting for it failed (`strerror` of `waitpid`).
        case lost(String)
        /// It was still running after this many seconds; its session was killed.
        case timedOut(Double)
        /// The run was interrupted by this signal before it ended (its session was killed) or before it started.
        case interrupted(StopSignal)
        /// It printed more bytes than the caller reads (the size, the limit); none of it was read.
        case outputTooLarge(Int, limit: Int)

        var description: String {
            switch self {
            case .noScratchFile(let reason): "cannot make its input and output files: \(reason)"
            case .cannotStart(let reason): "cannot start: \(reason)"
            case .lost(let reason): "lost while waiting for it: \(reason)"
            case .timedOut(let seconds): "timed out after \(String(format: "%g", seconds)) s"
            case .interrupted(let signal): "stopped: the run was interrupted (\(signal.name))"
            case .outputTooLarge(let size, let limit):
                "printed \(mebibytes(size)) on its standard output, more than the \(mebibytes(limit)) PayStorm reads "
                    + "from it; none of it was read"
            }
        }
    }

    /// The most standard output read from one command unless the caller allows more: far above one account's
    /// JSON, far below what would crowd the run's memory.
    static let defaultOutputLimit = 64 << 20

    /// The output limit of a command that answers for `accounts` accounts at once (a bulk probe, provisioning).
    static func outputLimit(accounts: Int) -> Int { max(defaultOutputLimit, accounts * (16 << 10)) }

    static func mebibytes(_ bytes: Int) -> String { String(format: "%.1f MiB", Double(bytes) / 1_048_576) }

    /// Runs `arguments` (no shell; a bare name is searched in `PATH`) with `input` on its standard input.
    /// - Parameters:
    ///   - arguments: the argument vector; the first element is the program.
    ///   - input: bytes for its standard input (empty: an empty input).
    ///   - timeout: seconds it may run before its session is killed.
    ///   - interruption: kills its session at once when the run is interrupted; an interrupted run starts none.
    ///   - maxOutputBytes: the most standard output read; more is ``Failure/outputTooLarge(_:limit:)``.
    /// - Returns: its exit status and both outputs, whatever the status.
    /// - Throws: ``Failure`` when it could not run to its end.
    static func run(
        _ arguments: [String],
        input: [UInt8],
        timeout: Double,
        interruption: Interruption,
        maxOutputBytes: Int = defaultOutputLimit
    ) throws(Failure) -> Output {
        if let signal = interruption.signal { throw .interrupted(signal) }
        let stdinFile = try scratchFile()
        defer { close(stdinFile) }
        let stdoutFile = try scratchFile()
        defer { close(stdoutFile) }
        let stderrFile = try scratchFile()
        defer { close(stderrFile) }
        guard writeAll(input, to: stdinFile), lseek(stdinFile, 0, SEEK_SET) == 0 else {
            throw .noScratchFile(String(cString: strerror(errno)))
        }

        let pid: pid_t
        let spawned = DetachedCommand.spawn(
            arguments,
            stdin: stdinFile,
            stdout: stdoutFile,
            stderr: stderrFile,
            diesWithPayStorm: true
        )
        switch spawned {
        case .success(let child): pid = child
        case .failure(let failure): throw .cannotStart(failure.description)
        }

        // The session is the command's own (setsid): killing it ends what the command started too.
        let stopping = interruption.onInterrupt { _ = kill(-pid, SIGKILL) }
        let ended = DetachedCommand.wait(for: pid, until: Date().addingTimeInterval(timeout))
        stopping.cancel()
        if let signal = interruption.signal {
            if ended == .stillRunning {
                var ignored: Int32 = 0
                _ = waitpid(pid, &ignored, 0)
            }
            throw .interrupted(signal)
        }
        switch ended {
        case .exited(let status):
            // Sized before it is read: a runaway command's output is refused, not loaded into memory.
            var size = stat()
            if fstat(stdoutFile, &size) == 0, Int(size.st_size) > maxOutputBytes {
                throw .outputTooLarge(Int(size.st_size), limit: maxOutputBytes)
            }
            return Output(status: status, stdout: readAll(stdoutFile), stderr: readAll(stderrFile, limit: 1 << 20))
        case .lost(let number):
            throw .lost(String(cString: strerror(number)))
        case .stillRunning:
            // The session is the command's own (setsid), so this ends what it started too.
            kill(-pid, SIGKILL)
            var ignored: Int32 = 0
            _ = waitpid(pid, &ignored, 0)
            throw .timedOut(timeout)
        }
    }

    /// An open, already unlinked temporary file: nothing is left behind, whatever happens.
    private static func scratchFile() throws(Failure) -> Int32 {
        var template = Array((NSTemporaryDirectory() + "/paystorm-command-XXXXXX").utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard fd >= 0 else { throw .noScratchFile(String(cString: strerror(errno))) }
        // Not inherited by other commands PayStorm starts (its own child gets it through dup2).
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        template.withUnsafeBufferPointer { _ = unlink($0.baseAddress!) }
        return fd
    }

    /// Writes all of `bytes` to `fd` (a file or a pipe), retrying after a signal.
    /// - Returns: false when a write fails (`errno` says why).
    static func writeAll(_ bytes: [UInt8], to fd: Int32) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { return false }
            offset += written
        }
        return true
    }

    /// The file's bytes, at most `limit` of them (standard error is only quoted: its end is enough).
    private static func readAll(_ fd: Int32, limit: Int = .max) -> [UInt8] {
        var size = stat()
        let start = fstat(fd, &size) == 0 && Int(size.st_size) > limit ? Int(size.st_size) - limit : 0
        guard lseek(fd, off_t(start), SEEK_SET) == off_t(start) else { return [] }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return bytes }
            bytes += chunk[..<count]
        }
    }
}
