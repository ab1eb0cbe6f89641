import Checking
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A probe's command (a `command` or `bulk` probe, or an `http` probe's `transform`), run with a deadline.
///
/// Its standard input, output and error are unlinked temporary files rather than pipes, and it runs in a
/// session of its own with no other descriptor of PayStorm's: a grandchild that outlives it (`sh -c 'x &'`)
/// holds no pipe PayStorm would wait on, and at the deadline the whole session is killed. Every failure is a
/// ``ProbeError``, so the account's checks become unknown, never a crash or a pass.
enum ProbeCommand {
    /// Runs `arguments` (no shell; a bare name is searched in `PATH`) with `input` on its standard input.
    /// - Parameters:
    ///   - arguments: the argument vector; the first element is the program.
    ///   - input: bytes for its standard input (empty: an empty input).
    ///   - timeout: seconds it may run before its session is killed.
    /// - Returns: its standard output.
    /// - Throws: ``ProbeError/transport(_:)`` naming the command, with its exit status and the first line of
    ///   its standard error, or the timeout.
    static func run(_ arguments: [String], input: [UInt8] = [], timeout: Double) throws(ProbeError) -> [UInt8] {
        guard !arguments.isEmpty else { throw .transport("the probe command is empty") }
        let shown = "'\(arguments.joined(separator: " "))'"
        let stdinFile = try scratchFile()
        defer { close(stdinFile) }
        let stdoutFile = try scratchFile()
        defer { close(stdoutFile) }
        let stderrFile = try scratchFile()
        defer { close(stderrFile) }
        guard writeAll(input, to: stdinFile), lseek(stdinFile, 0, SEEK_SET) == 0 else {
            throw .transport("cannot write the input of \(shown): \(String(cString: strerror(errno)))")
        }

        let pid: pid_t
        switch DetachedCommand.spawn(arguments, stdin: stdinFile, stdout: stdoutFile, stderr: stderrFile) {
        case .success(let child): pid = child
        case .failure(let failure): throw .transport("cannot start \(shown): \(failure)")
        }

        let exit: Int32
        switch DetachedCommand.wait(for: pid, until: Date().addingTimeInterval(timeout)) {
        case .exited(let status):
            exit = status
        case .lost(let number):
            throw .transport("lost \(shown): \(String(cString: strerror(number)))")
        case .stillRunning:
            // The session is the command's own (setsid), so this ends what it started too.
            kill(-pid, SIGKILL)
            var ignored: Int32 = 0
            _ = waitpid(pid, &ignored, 0)
            throw .transport("\(shown) timed out after \(PayStormRun.format(timeout)) s")
        }
        guard exit == 0 else {
            let message = String(decoding: readAll(stderrFile).prefix(4096), as: UTF8.self)
            let firstLine = message.split(whereSeparator: \.isNewline).first.map { ": \($0)" } ?? ""
            throw .transport("\(shown) exited \(exit)\(firstLine)")
        }
        return readAll(stdoutFile)
    }

    /// An open, already unlinked temporary file: nothing is left behind, whatever happens.
    private static func scratchFile() throws(ProbeError) -> Int32 {
        var template = Array((NSTemporaryDirectory() + "/paystorm-probe-XXXXXX").utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard fd >= 0 else { throw .transport("cannot create a temporary file: \(String(cString: strerror(errno)))") }
        // Not inherited by other commands PayStorm starts (its own child gets it through dup2).
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        template.withUnsafeBufferPointer { _ = unlink($0.baseAddress!) }
        return fd
    }

    private static func writeAll(_ bytes: [UInt8], to fd: Int32) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { return false }
            offset += written
        }
        return true
    }

    private static func readAll(_ fd: Int32) -> [UInt8] {
        guard lseek(fd, 0, SEEK_SET) == 0 else { return [] }
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
