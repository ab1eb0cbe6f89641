import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The profile's request hook as a running process: lines written to its standard input by a writer thread,
/// answers read from its standard output by a reader thread, which decodes each and writes to ``wakeDescriptor``'s
/// pipe.
///
/// Started once per run in a session of its own (it dies with PayStorm), its standard error kept in an unlinked
/// scratch file whose last line is quoted when it fails. Either thread may find it gone: ``drain()`` then
/// reports why, once, after the answers it read before.
///
/// ```swift
/// let hook = try RequestHookProcess(command: ["python3", "sign.py"])
/// hook.send(request.line)
/// let (answers, failure) = hook.drain()  // after ``wakeDescriptor`` turns readable
/// hook.close()
/// ```
package final class RequestHookProcess: @unchecked Sendable {
    // @unchecked: the descriptors and the pid are set once in init; `inbox` is a Mutex and `outbox` is read and
    // written under `condition` only.

    /// One answer line as read: decoded, or why it could not be; with when it arrived (monotonic ns).
    package struct Received: Sendable {
        package var answer: Result<RequestHookAnswer, RequestHookProtocolError>
        package var at: Int64
    }

    private struct Inbox {
        var received: [Received] = []
        var failure: String?
        var closing = false
    }

    /// The command as one line (`python3 sign.py`), for messages.
    package let label: String
    /// The read end of a pipe that turns readable when answers or a failure are waiting (a load engine watches
    /// it, and reads it to clear it).
    package let wakeDescriptor: Int32
    private let wakeInput: Int32
    private let pid: pid_t
    private let input: Int32
    private let output: Int32
    private let errors: Int32
    private let inbox = Mutex(Inbox())
    private let condition = NSCondition()
    private var outbox: [UInt8] = []
    private var inputClosed = false

    /// The longest answer line read.
    static let maxLineBytes = 16 << 20

    /// Starts `command` (no shell; a bare name is searched in `PATH`).
    /// - Throws: ``RequestHookStartError`` when it cannot be started.
    package init(command: [String]) throws(RequestHookStartError) {
        label = command.joined(separator: " ")
        var toHook: [Int32] = [-1, -1]
        var fromHook: [Int32] = [-1, -1]
        var wake: [Int32] = [-1, -1]
        let scratch = Self.scratchFile()
        guard pipe(&toHook) == 0, pipe(&fromHook) == 0, pipe(&wake) == 0, scratch >= 0 else {
            let reason = String(cString: strerror(errno))
            for fd in toHook + fromHook + wake + [scratch] where fd >= 0 { Glibc.close(fd) }
            throw RequestHookStartError(description: "cannot make its pipes: \(reason)")
        }
        // None goes to another command PayStorm starts; neither end of the wake pipe ever blocks.
        for fd in toHook + fromHook + wake { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        for fd in wake { _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) }
        let spawned = DetachedCommand.spawn(
            command,
            stdin: toHook[0],
            stdout: fromHook[1],
            stderr: scratch,
            diesWithPayStorm: true
        )
        Glibc.close(toHook[0])
        Glibc.close(fromHook[1])
        guard case .success(let child) = spawned else {
            for fd in [toHook[1], fromHook[0], scratch] + wake { Glibc.close(fd) }
            if case .failure(let failure) = spawned { throw RequestHookStartError(description: failure.description) }
            throw RequestHookStartError(description: "cannot start")
        }
        pid = child
        input = toHook[1]
        output = fromHook[0]
        errors = scratch
        wakeDescriptor = wake[0]
        wakeInput = wake[1]
        Thread.detachNewThread { [self] in readAnswers() }
        Thread.detachNewThread { [self] in writeRequests() }
    }

    deinit {
        Glibc.close(wakeDescriptor)
        Glibc.close(wakeInput)
        Glibc.close(errors)
    }

    /// Queues one request line (newline included) for the hook.
    package func send(_ line: [UInt8]) {
        condition.withLock {
            outbox += line
            condition.signal()
        }
    }

    /// The answers read since the last call, in the order read, and why the hook is gone, if it is.
    package func drain() -> (answers: [Received], failure: String?) {
        inbox.withLock { inbox in
            defer { inbox.received.removeAll(keepingCapacity: true) }
            return (inbox.received, inbox.failure)
        }
    }

    /// Ends the hook: closes its standard input (so it can exit on its own), waits a second, then kills its
    /// session. Its end is then not a failure.
    package func close() {
        inbox.withLock { $0.closing = true }
        condition.withLock {
            inputClosed = true
            condition.signal()
        }
        if DetachedCommand.wait(for: pid, until: Date().addingTimeInterval(1)) == .stillRunning {
            kill(-pid, SIGKILL)
            var ignored: Int32 = 0
            _ = waitpid(pid, &ignored, 0)
        }
        // Whatever it started in its session goes too, so nothing holds its standard output open.
        kill(-pid, SIGKILL)
    }

    /// Records why the hook is gone (the first reason only, none once PayStorm is closing it) and wakes the reader
    /// of ``drain()``.
    private func fail(_ reason: String) {
        inbox.withLock { inbox in
            if inbox.failure == nil && !inbox.closing { inbox.failure = reason }
        }
        wake()
    }

    private func wake() {
        var one: UInt8 = 1
        _ = write(wakeInput, &one, 1)
    }

    /// The reader thread: splits standard output into lines and decodes each, until it ends.
    private func readAnswers() {
        var buffer: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(output, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            buffer += chunk[..<count]
            var received: [Received] = []
            var start = buffer.startIndex
            while let end = buffer[start...].firstIndex(of: UInt8(ascii: "\n")) {
                var line = buffer[start..<end]
                start = end + 1
                if line.last == UInt8(ascii: "\r") { line = line.dropLast() }
                guard !line.allSatisfy({ $0 == 32 || $0 == 9 }) else { continue }
                let at = Self.monotonicNanoseconds()
                do {
                    received.append(Received(answer: .success(try RequestHookAnswer.decode(line)), at: at))
                } catch {
                    received.append(Received(answer: .failure(error), at: at))
                }
            }
            buffer.removeSubrange(..<start)
            if buffer.count > Self.maxLineBytes {
                received.append(
                    Received(
                        answer: .failure(RequestHookProtocolError("a line longer than 16 MiB")),
                        at: Self.monotonicNanoseconds()
                    )
                )
            }
            if !received.isEmpty {
                inbox.withLock { $0.received += received }
                wake()
            }
        }
        Glibc.close(output)
        fail(ended())
    }

    /// Why the hook's standard output ended: its exit status, or that it closed it, with its last line of
    /// standard error.
    private func ended() -> String {
        let how =
            switch DetachedCommand.wait(for: pid, until: Date().addingTimeInterval(0.5)) {
            case .exited(let status) where status > 128: "was killed by signal \(status - 128)"
            case .exited(let status): "exited with status \(status)"
            case .stillRunning, .lost: "closed its standard output"
            }
        guard let last = lastErrorLine() else { return how }
        return how + "; its last line of standard error: \(last)"
    }

    /// The writer thread: writes queued lines until PayStorm closes its input or the hook stops reading.
    private func writeRequests() {
        // A hook gone makes a write fail with EPIPE; SIGPIPE, blocked on this thread only, must not end PayStorm.
        var pipeSignal = sigset_t()
        sigemptyset(&pipeSignal)
        sigaddset(&pipeSignal, SIGPIPE)
        pthread_sigmask(SIG_BLOCK, &pipeSignal, nil)
        while true {
            let (bytes, closing) = condition.withLock {
                while outbox.isEmpty && !inputClosed { condition.wait() }
                defer { outbox.removeAll(keepingCapacity: true) }
                return (outbox, inputClosed)
            }
            if closing { break }
            guard CapturedCommand.writeAll(bytes, to: input) else {
                fail("stopped reading its standard input (\(String(cString: strerror(errno))))")
                break
            }
        }
        Glibc.close(input)
    }

    /// The last non-empty line the hook wrote to its standard error (at most 300 characters), nil when none.
    private func lastErrorLine() -> String? {
        var size = stat()
        guard fstat(errors, &size) == 0, size.st_size > 0 else { return nil }
        let length = min(Int(size.st_size), 4096)
        var tail = [UInt8](repeating: 0, count: length)
        let count = tail.withUnsafeMutableBytes {
            pread(errors, $0.baseAddress, length, off_t(size.st_size) - off_t(length))
        }
        guard count > 0 else { return nil }
        let lines = String(decoding: tail[..<count], as: UTF8.self).split(whereSeparator: \.isNewline)
        guard let last = lines.last(where: { !$0.allSatisfy(\.isWhitespace) }) else { return nil }
        return String(last.prefix(300))
    }

    /// An open, already unlinked temporary file.
    private static func scratchFile() -> Int32 {
        var template = Array((NSTemporaryDirectory() + "/paystorm-hook-XXXXXX").utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard fd >= 0 else { return -1 }
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        template.withUnsafeBufferPointer { _ = unlink($0.baseAddress!) }
        return fd
    }

    /// The monotonic clock in nanoseconds, the clock answers are stamped with.
    package static func monotonicNanoseconds() -> Int64 {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return Int64(spec.tv_sec) * 1_000_000_000 + Int64(spec.tv_nsec)
    }
}

/// Why the request hook could not be started.
package struct RequestHookStartError: Error, Sendable, CustomStringConvertible {
    package var description: String
}

extension RequestHookProcess {
    /// Sends one request and waits for its answer, for a caller that sends one at a time (`paystorm target check`).
    /// - Parameters:
    ///   - request: the request as rendered.
    ///   - timeout: seconds the hook may take.
    /// - Returns: the request to send.
    /// - Throws: ``RequestHookProtocolError`` saying what the hook did instead, as a phrase that follows its name.
    package func answer(
        _ request: RequestHookRequest,
        timeout: Double
    ) throws(RequestHookProtocolError)
        -> RequestHookRequest
    {
        send(request.line)
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            let (received, failure) = drain()
            if let first = received.first {
                let answer: RequestHookAnswer
                switch first.answer {
                case .success(let decoded): answer = decoded
                case .failure(let error): throw RequestHookProtocolError("answered garbage: \(error)")
                }
                guard answer.id == request.id else {
                    throw RequestHookProtocolError(
                        "answered garbage: id \(answer.id) is not a request awaiting its answer"
                    )
                }
                if let refusal = answer.error {
                    throw RequestHookProtocolError("refused request \(request.id) (\(request.role)): \(refusal)")
                }
                do {
                    return try answer.applied(to: request)
                } catch {
                    throw RequestHookProtocolError("answered garbage: \(error)")
                }
            }
            if let failure { throw RequestHookProtocolError(failure) }
            let left = deadline.timeIntervalSinceNow
            guard left > 0 else {
                throw RequestHookProtocolError(
                    "did not answer request \(request.id) (\(request.role)) within \(String(format: "%g s", timeout))"
                )
            }
            var ready = pollfd(fd: wakeDescriptor, events: Int16(POLLIN), revents: 0)
            _ = poll(&ready, 1, Int32(min(left, 0.1) * 1000) + 1)
            var drained = [UInt8](repeating: 0, count: 512)
            _ = drained.withUnsafeMutableBytes { read(wakeDescriptor, $0.baseAddress, $0.count) }
        }
    }
}
