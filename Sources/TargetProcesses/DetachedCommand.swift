internal import CPayStormShims
import Foundation
package import RunControl

#if canImport(Glibc)
import Glibc
#endif

/// A profile's command (a target's kill or start script), run the way a service manager runs one: in a session
/// of its own, with standard input from `/dev/null`, standard output and error appended to a log, and no other
/// descriptor of PayStorm's. A daemon it leaves behind therefore holds nothing of the run's (no pipe, no socket)
/// and is never waited for: only the command itself is.
package enum DetachedCommand {
    /// How a command ended.
    package enum Outcome: Equatable {
        /// It exited with this status (or `128 + signal` when a signal ended it).
        case exited(Int32)
        /// It was still running at the deadline; it was left running, in its own session.
        case timedOut
        /// It could not be started (not found, not executable...).
        case cannotStart(String)
    }

    /// Runs `arguments` (no shell; a bare name is searched in `PATH`) and waits at most `timeout` seconds for
    /// it to exit.
    /// - Parameters:
    ///   - arguments: the argument vector; the first element is the program.
    ///   - logPath: the file its standard output and error are appended to (created when missing).
    ///   - timeout: seconds to wait for the command itself (not for what it leaves running).
    ///   - cancelled: polled while waiting; true stops the wait early with ``Outcome/timedOut``.
    ///   - interruption: when the run is interrupted, the command's session gets SIGTERM and the wait ends with
    ///     ``Outcome/timedOut``; an interrupted run starts none.
    package static func run(
        _ arguments: [String],
        logPath: String,
        timeout: Double,
        cancelled: () -> Bool = { false },
        interruption: Interruption
    ) -> Outcome {
        if interruption.isInterrupted { return .timedOut }
        guard !arguments.isEmpty else { return .cannotStart("the command is empty") }
        let log = open(logPath, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        guard log >= 0 else { return .cannotStart("cannot open \(logPath): \(String(cString: strerror(errno)))") }
        defer { close(log) }

        let pid: pid_t
        switch spawn(arguments, stdin: nil, stdout: log, stderr: log) {
        case .success(let child): pid = child
        case .failure(let failure): return .cannotStart(failure.description)
        }

        let stopping = interruption.onInterrupt { _ = kill(-pid, SIGTERM) }
        defer { stopping.cancel() }
        switch wait(
            for: pid,
            until: Date().addingTimeInterval(timeout),
            cancelled: { cancelled() || interruption.isInterrupted }
        ) {
        case .exited(let status):
            return .exited(status)
        case .lost:
            return .exited(-1)
        case .stillRunning where interruption.isInterrupted:
            // It had SIGTERM (its whole session) when the run was interrupted: a moment to end, then SIGKILL, so a
            // command that ignores SIGTERM does not outlive the run.
            if wait(for: pid, until: Date().addingTimeInterval(Self.termGrace)) == .stillRunning {
                kill(-pid, SIGKILL)
                var ignored: Int32 = 0
                _ = waitpid(pid, &ignored, 0)
            }
            return .timedOut
        case .stillRunning:
            // Reap it later so it does not stay a zombie; it keeps running in its own session.
            Thread.detachNewThread {
                var ignored: Int32 = 0
                _ = waitpid(pid, &ignored, 0)
            }
            return .timedOut
        }
    }

    /// Seconds an interrupted command gets between SIGTERM and SIGKILL.
    static let termGrace = 1.0

    /// How waiting for a spawned child ended.
    enum Wait: Equatable {
        /// It exited with this status (or `128 + signal` when a signal ended it); it is reaped.
        case exited(Int32)
        /// It was still running at the deadline (or when the wait was cancelled); it is not reaped.
        case stillRunning
        /// `waitpid` failed with this `errno`.
        case lost(Int32)
    }

    /// Polls `pid` until it exits, `deadline` passes or `cancelled` returns true; the poll starts at half a
    /// millisecond, so a quick command costs little, and backs off to 20 ms.
    static func wait(for pid: pid_t, until deadline: Date, cancelled: () -> Bool = { false }) -> Wait {
        var pause: useconds_t = 500
        while true {
            var waitStatus: Int32 = 0
            let reaped = waitpid(pid, &waitStatus, WNOHANG)
            if reaped == pid { return .exited(exitStatus(waitStatus)) }
            if reaped < 0 && errno != EINTR { return .lost(errno) }
            if Date() >= deadline || cancelled() { return .stillRunning }
            usleep(pause)
            pause = min(pause * 2, 20_000)
        }
    }

    /// Why a command could not be spawned.
    struct SpawnFailure: Error, CustomStringConvertible {
        var description: String
    }

    /// Starts `arguments` in a session of its own with `stdin` (nil: `/dev/null`), `stdout` and `stderr` as its
    /// standard descriptors, no other descriptor of PayStorm's, and every signal at its default action.
    /// - Parameter diesWithPayStorm: whether the command gets SIGKILL when the calling thread ends, so with
    ///   PayStorm however it ends (SIGKILL included). Only for a command the caller waits for on this thread
    ///   (a probe's, a provisioning's): a target's start command may leave the target running on purpose.
    /// - Returns: the child's pid, or why it could not start.
    static func spawn(
        _ arguments: [String],
        stdin: Int32?,
        stdout: Int32,
        stderr: Int32,
        diesWithPayStorm: Bool = false
    ) -> Result<pid_t, SpawnFailure> {
        guard let program = arguments.first else { return .failure(SpawnFailure(description: "the command is empty")) }
        // "Text file busy": the program (a script just written) is still open for writing somewhere, often only
        // in a child another thread forked before the writer closed it, until that child's exec. It passes.
        var pid: pid_t = -1
        var pause: useconds_t = 1_000
        let deadline = Date().addingTimeInterval(2)
        repeat {
            pid = withCStrings(arguments) { argv in
                ps_spawn_session(program, argv, environ, stdin ?? -1, stdout, stderr, diesWithPayStorm ? SIGKILL : 0)
            }
            guard pid < 0, errno == ETXTBSY, Date() < deadline else { break }
            usleep(pause)
            pause = min(pause * 2, 50_000)
        } while true
        guard pid > 0 else {
            return .failure(SpawnFailure(description: "\(program): \(String(cString: strerror(errno)))"))
        }
        return .success(pid)
    }

    /// WEXITSTATUS, or 128 + the signal for a command a signal ended (the shell's convention).
    private static func exitStatus(_ status: Int32) -> Int32 {
        let signal = status & 0x7f
        return signal == 0 ? (status >> 8) & 0xff : 128 + signal
    }

    /// Lends `strings` as a NULL-terminated `char *[]`.
    private static func withCStrings<R>(
        _ strings: [String],
        _ body: (UnsafePointer<UnsafeMutablePointer<CChar>?>) -> R
    ) -> R {
        var pointers: [UnsafeMutablePointer<CChar>?] = strings.map { strdup($0) }
        pointers.append(nil)
        defer { for pointer in pointers { free(pointer) } }
        return pointers.withUnsafeBufferPointer { body($0.baseAddress!) }
    }
}
