internal import CCurl
internal import CPayStormShims

#if canImport(Glibc)
internal import Glibc
#endif

/// The engine's I/O loop: one epoll set and the pacing timer, and the request paths it drives; confined
/// to one thread.
///
/// HTTP/1.1 requests take ``HTTP1Path`` (PayStorm frames them on connections libcurl makes) unless
/// ``LoadEngineConfiguration/libcurlTransfers`` is set; HTTP/2, and URLs that path cannot frame, take
/// ``CurlTransfers``. Both share one libcurl multi handle (``CurlMulti``), whose sockets and timeouts sit in
/// the same epoll set as the paths' own sockets and the timerfd that paces releases to the microsecond.
final class Transport {
    let multi: CurlMulti
    let transfers: CurlTransfers
    /// The HTTP/1.1 path, nil when every request goes through libcurl transfers.
    let http1: HTTP1Path?
    private let epoll: Epoll
    private let timer: Int32
    /// The source's wake descriptor (see ``TimedRequestSource/wakeDescriptor``), when it has one.
    private var wake: Int32?
    /// Set when the wake descriptor fired during a ``wait(until:)``; the engine clears it.
    var woken = false
    private var events = [epoll_event](repeating: epoll_event(), count: 256)
    /// The monotonic time the timerfd is set to fire at, nil when it is not set: a wait for the same time (the
    /// same next release, over several passes of the loop) leaves it set instead of setting it again.
    private var timerSetFor: Int64?
    /// Times the timerfd was set.
    private(set) var timerSets = 0
    /// The request timeout in ns, counted from each request's intended time.
    let timeoutNanos: Int64

    /// Makes the epoll set, the timer, the multi handle and the request paths.
    /// - Throws: ``LoadEngineError`` when the system or libcurl cannot make one, or libcurl refuses an
    ///   option (named in the message).
    init(_ configuration: LoadEngineConfiguration, calls: CurlMultiCalls = .libcurl) throws(LoadEngineError) {
        timeoutNanos = configuration.totalTimeout.nanoseconds
        epoll = try Epoll()
        timer = timerfd_create(CLOCK_MONOTONIC, Int32(TFD_NONBLOCK | TFD_CLOEXEC))
        guard timer >= 0 else {
            throw LoadEngineError(message: "cannot create the engine's timer: \(String(cString: strerror(errno)))")
        }
        var timerEvent = epoll_event()
        timerEvent.events = EPOLLIN.rawValue
        timerEvent.data.fd = timer
        epoll_ctl(epoll.descriptor, EPOLL_CTL_ADD, timer, &timerEvent)
        let multi: CurlMulti
        do {
            multi = try CurlMulti(configuration, epoll: epoll, calls: calls)
        } catch {
            close(timer)
            throw error
        }
        self.multi = multi
        transfers = CurlTransfers(configuration, multi: multi)
        let framed = configuration.httpVersion == .http1_1 && !configuration.libcurlTransfers
        http1 = framed ? HTTP1Path(configuration, multi: multi, epoll: epoll) : nil
        multi.adopter = http1
    }

    deinit { close(timer) }

    /// Makes one handle of each kind this configuration uses, so that libcurl refuses an option now
    /// rather than on the first request.
    /// - Throws: ``LoadEngineError`` naming the option.
    func checkSetup() throws(LoadEngineError) {
        do {
            try transfers.checkSetup()
            try http1?.checkSetup()
        } catch {
            throw LoadEngineError(message: "cannot set up the transport: \(error)")
        }
    }

    /// The run's start on the monotonic clock (results are offsets from it); set by the engine.
    var runStart: Int64 {
        get { transfers.runStart }
        set {
            transfers.runStart = newValue
            http1?.runStart = newValue
        }
    }

    /// Requests taken and not yet answered (waiting for a connection or on one).
    var inFlight: Int { transfers.inFlight + (http1?.inFlight ?? 0) }

    /// Requests started (put on a connection, or handed to libcurl) later than `lateAfter` after their
    /// intended time: the engine's `late`.
    var lateStarts: Int { transfers.lateStarts + (http1?.lateStarts ?? 0) }

    /// The libcurl failure that ends the run, nil while there is none.
    var failure: LoadEngineError? { multi.failure }

    /// Watches `descriptor` (a non-blocking pipe's read end) beside the sockets: a ``wait(until:)`` ends
    /// when it turns readable, reads what is in it and sets ``woken``.
    func watch(wake descriptor: Int32) {
        var event = epoll_event()
        event.events = EPOLLIN.rawValue
        event.data.fd = descriptor
        epoll_ctl(epoll.descriptor, EPOLL_CTL_ADD, descriptor, &event)
        wake = descriptor
    }

    /// Takes a request: the HTTP/1.1 path when there is one and it can frame the URL, else libcurl.
    func submit(_ request: consuming LoadRequest, intended: Int64, sent: Int64) {
        if let http1, http1.frames(request.url) {
            _ = http1.submit(request, intended: intended, sent: sent)
        } else {
            _ = transfers.submit(request, intended: intended, sent: sent)
        }
    }

    /// Runs libcurl's due timeouts and the paths' deadlines, and appends the results that finished.
    func perform(into results: inout [LoadResult]) {
        let now = monotonicNanoseconds()
        multi.runTimeouts(now: now)
        multi.readDone { easy, code in
            let owner = Unmanaged<AnyObject>.fromOpaque(owner(of: easy)).takeUnretainedValue()
            if let connection = owner as? HTTP1Connection {
                http1?.connected(connection, code: code)
            } else if let transfer = owner as? Transfer {
                transfers.done(transfer, code: code)
            }
        }
        http1?.perform(now: now, into: &results)
        transfers.perform(now: now, into: &results)
    }

    /// Ends every request in flight or waiting, each reported as an `other` failure with `detail`.
    func cancelAll(detail: String, into results: inout [LoadResult]) {
        http1?.cancelAll(detail: detail, into: &results)
        transfers.cancelAll(detail: detail, into: &results)
    }

    /// Waits until a socket is ready, a deadline comes or the monotonic clock reaches `until` (to the
    /// microsecond, via the timerfd), and hands ready sockets to the path that watches them, or to libcurl.
    func wait(until: Int64) {
        let deadline = min(until, multi.deadline ?? .max, http1?.nextDeadline ?? .max, transfers.nextDeadline)
        let wait = deadline - monotonicNanoseconds()
        var timeoutMilliseconds: Int32 = 0
        if wait >= 5_000_000 {
            // Far enough that waking up to a millisecond early costs nothing: the caller re-checks.
            timeoutMilliseconds = Int32(min(wait / 1_000_000, 1000))
        } else if wait > 0 {
            if timerSetFor != deadline {
                var spec = itimerspec()
                spec.it_value.tv_sec = Int(deadline / 1_000_000_000)
                spec.it_value.tv_nsec = Int(deadline % 1_000_000_000)
                timerfd_settime(timer, Int32(TFD_TIMER_ABSTIME), &spec, nil)
                timerSetFor = deadline
                timerSets += 1
            }
            timeoutMilliseconds = 7  // a backstop; the timerfd fires first
        }
        let ready = events.withUnsafeMutableBufferPointer { buffer in
            epoll_wait(epoll.descriptor, buffer.baseAddress, Int32(buffer.count), timeoutMilliseconds)
        }
        guard ready > 0 else { return }
        for index in 0..<Int(ready) {
            let event = events[index]
            let fd = event.data.fd
            if fd == timer {
                var expirations: UInt64 = 0
                _ = read(timer, &expirations, 8)
                timerSetFor = nil
            } else if fd == wake {
                var drained = [UInt8](repeating: 0, count: 512)
                _ = drained.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                woken = true
            } else if let http1, let connection = http1.connection(on: fd) {
                http1.handle(connection, events: event.events)
            } else {
                multi.socketReady(fd, events: event.events)
            }
        }
    }
}
