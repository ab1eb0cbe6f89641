internal import CCurl
internal import CPayStormShims

#if canImport(Glibc)
internal import Glibc
#endif

/// The libcurl multi handle, its transfer pool, an epoll set and the pacing timer; confined to
/// one thread.
///
/// libcurl is driven with `curl_multi_socket_action` from our own epoll loop (as wrk drives its
/// sockets): it tells us which sockets to watch and when its next timeout is, so no call polls
/// every connection, and the pacing timerfd sits in the same epoll set for microsecond waits.
final class Transport {
    let multi: UnsafeMutableRawPointer
    let configuration: LoadEngineConfiguration
    private var free: [Transfer] = []
    private var active: [ObjectIdentifier: Transfer] = [:]
    private let timer: Int32
    private let epoll: Int32
    /// Requests taken and not yet answered (waiting for a connection or on one).
    var inFlight = 0
    /// libcurl's next timeout (monotonic ns), or nil when it has none.
    var curlDeadline: Int64?
    private var events = [epoll_event](repeating: epoll_event(), count: 256)

    /// Whether HTTP/1.1 requests take the fast path (HTTP1Transport.swift) instead of libcurl transfers.
    let framed: Bool
    /// Fast-path connection pools by origin, and the last one used (most runs have one origin).
    var pools: [String: HTTP1Pool] = [:]
    var lastPool: HTTP1Pool?
    private var lastURL = ""
    private var lastTarget: HTTP1Target?
    /// The fast-path connection owning each socket number, if any.
    var owners: [HTTP1Connection?] = []
    /// Fast-path connections whose socket libcurl closed on its own, to fail in `perform`.
    var orphans: [HTTP1Connection] = []
    /// Results not yet handed to the engine (still counted in flight until they are): the fast
    /// path's, and requests of either path that timed out before they were started.
    var finished: [LoadResult] = []
    /// Requests started (put on a connection, or handed to libcurl) later than `lateAfter` after
    /// their intended time: the engine's `late`.
    var lateStarts = 0
    /// The request timeout in ns, counted from each request's intended time.
    let timeoutNanos: Int64
    /// `lateAfter` in ns.
    let lateNanos: Int64
    /// The earliest deadline of a fast-path request in flight (or later: it is recomputed lazily).
    var nextHTTP1Deadline = Int64.max
    /// One receive buffer for every fast-path connection (they are read one at a time).
    let readBuffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 16)
    /// The run's start on the monotonic clock (results are offsets from it); set by the engine.
    var runStart: Int64 = 0

    /// Makes the multi handle, the epoll set and the timer.
    /// - Throws: ``LoadEngineError`` when the system or libcurl cannot make one, or libcurl refuses an
    ///   option (named in the message).
    init(_ configuration: LoadEngineConfiguration) throws(LoadEngineError) {
        guard let multi = curl_multi_init() else {
            throw LoadEngineError(message: "libcurl could not create a multi handle")
        }
        self.multi = multi
        self.configuration = configuration
        timeoutNanos = configuration.totalTimeout.nanoseconds
        lateNanos = configuration.lateAfter.nanoseconds
        epoll = epoll_create1(Int32(EPOLL_CLOEXEC))
        timer = timerfd_create(CLOCK_MONOTONIC, Int32(TFD_NONBLOCK | TFD_CLOEXEC))
        framed = configuration.httpVersion == .http1_1 && !configuration.libcurlTransfers
        // From here deinit frees what was made, also when setup throws.
        guard epoll >= 0, timer >= 0 else {
            throw LoadEngineError(
                message: "cannot create the engine's epoll set or timer: \(String(cString: strerror(errno)))"
            )
        }
        var timerEvent = epoll_event()
        timerEvent.events = EPOLLIN.rawValue
        timerEvent.data.fd = timer
        epoll_ctl(epoll, EPOLL_CTL_ADD, timer, &timerEvent)
        do {
            try setMultiOptions()
        } catch {
            throw LoadEngineError(message: "cannot set up the transport: \(error)")
        }
    }

    /// Makes one handle of each kind this configuration uses, so that libcurl refuses an option now
    /// rather than on the first request.
    /// - Throws: ``LoadEngineError`` naming the option.
    func checkSetup() throws(LoadEngineError) {
        let me = Unmanaged.passUnretained(self).toOpaque()
        do {
            _ = try Transfer(configuration: configuration, transport: me)
            if framed {
                let pool = HTTP1Pool(origin: "http://127.0.0.1", isTLS: false)
                _ = try HTTP1Connection(pool: pool, configuration: configuration, transport: me)
            }
        } catch {
            throw LoadEngineError(message: "cannot set up the transport: \(error)")
        }
    }

    private func setMultiOptions() throws(CurlSetupError) {
        let setup = CurlMultiSetup(multi: multi)
        let connections = configuration.connectionsPerHost
        if !framed {
            // The fast path keeps its own per-origin cap (libcurl would count its connections too).
            try setup.set(CURLMOPT_MAX_HOST_CONNECTIONS, "CURLMOPT_MAX_HOST_CONNECTIONS", connections)
        }
        try setup.set(CURLMOPT_MAXCONNECTS, "CURLMOPT_MAXCONNECTS", connections * 2)
        if configuration.httpVersion == .http2 {
            try setup.set(CURLMOPT_PIPELINING, "CURLMOPT_PIPELINING", Int(CURLPIPE_MULTIPLEX))
        }
        let me = Unmanaged.passUnretained(self).toOpaque()
        try setup.set(CURLMOPT_SOCKETDATA, "CURLMOPT_SOCKETDATA", pointer: me)
        try setup.check(
            ps_curl_multi_setopt_socket_function(multi, transportSocket),
            "CURLMOPT_SOCKETFUNCTION",
            "a callback"
        )
        try setup.set(CURLMOPT_TIMERDATA, "CURLMOPT_TIMERDATA", pointer: me)
        try setup.check(
            ps_curl_multi_setopt_timer_function(multi, transportTimer),
            "CURLMOPT_TIMERFUNCTION",
            "a callback"
        )
    }

    deinit {
        closeHTTP1()
        readBuffer.deallocate()
        for transfer in active.values { curl_multi_remove_handle(multi, transfer.easy) }
        active.removeAll()
        free.removeAll()
        curl_multi_cleanup(multi)
        if timer >= 0 { close(timer) }
        if epoll >= 0 { close(epoll) }
    }

    /// epoll interest per socket as registered with the kernel.
    private var registered: [Int32: UInt32] = [:]
    /// Registered sockets libcurl no longer watches (idle keep-alive connections).
    private var idle: Set<Int32> = []

    /// Called when libcurl opens a socket: its number may have been used by a closed one.
    func forget(socket: Int32) {
        registered[socket] = nil
        idle.remove(socket)
        if Int(socket) < owners.count { owners[Int(socket)] = nil }
    }

    /// Called when libcurl closes a socket of a fast-path handle.
    func socketClosing(_ socket: Int32) {
        registered[socket] = nil
        idle.remove(socket)
        guard Int(socket) < owners.count, let connection = owners[Int(socket)] else { return }
        owners[Int(socket)] = nil
        connection.socket = -1
        orphans.append(connection)
    }

    /// Takes over a socket libcurl connected for the fast path: from now on PayStorm watches it.
    func adopt(socket: Int32, for connection: HTTP1Connection) {
        let index = Int(socket)
        if index >= owners.count { owners.append(contentsOf: repeatElement(nil, count: index + 1 - owners.count)) }
        owners[index] = connection
        idle.remove(socket)
        let known = registered.removeValue(forKey: socket) != nil
        setInterest(socket, EPOLLIN.rawValue | EPOLLRDHUP.rawValue, known: known)
    }

    /// Adds or removes writability from what is watched on a fast-path socket.
    func watchWrites(_ connection: HTTP1Connection, _ on: Bool) {
        let events = EPOLLIN.rawValue | EPOLLRDHUP.rawValue | (on ? EPOLLOUT.rawValue : 0)
        setInterest(connection.socket, events, known: true)
        connection.watchingWrites = on
    }

    /// Called by libcurl: watch `socket` for `what` (CURL_POLL_IN/OUT/INOUT/REMOVE).
    ///
    /// A removed socket stays registered, marked idle, because libcurl removes and re-adds a
    /// keep-alive socket around every request (usually with the same interest, so no system
    /// call is needed); an event on an idle socket unregisters it.
    func watch(socket: Int32, what: Int32) {
        if what == CURL_POLL_REMOVE {
            if registered[socket] != nil { idle.insert(socket) }
            return
        }
        var wanted: UInt32 = 0
        if what & CURL_POLL_IN != 0 { wanted |= EPOLLIN.rawValue }
        if what & CURL_POLL_OUT != 0 { wanted |= EPOLLOUT.rawValue }
        if !idle.isEmpty { idle.remove(socket) }
        let current = registered[socket]
        guard current != wanted else { return }
        setInterest(socket, wanted, known: current != nil)
        registered[socket] = wanted
    }

    /// Sets the epoll events watched on `socket`: a change when `known`, else (or when the kernel
    /// has forgotten a closed and reused descriptor) a registration.
    private func setInterest(_ socket: Int32, _ events: UInt32, known: Bool) {
        var event = epoll_event()
        event.events = events
        event.data.fd = socket
        if !known || epoll_ctl(epoll, EPOLL_CTL_MOD, socket, &event) != 0 {
            if epoll_ctl(epoll, EPOLL_CTL_ADD, socket, &event) != 0 && errno == EEXIST {
                epoll_ctl(epoll, EPOLL_CTL_MOD, socket, &event)
            }
        }
    }

    /// Requests waiting for a free connection, in arrival order (nil once started).
    private var waiting = FIFOQueue<(request: LoadRequest, intended: Int64, sent: Int64)>()
    /// Transfers handed to libcurl at most: one per connection for HTTP/1.1 (100 streams per
    /// connection for HTTP/2). Further requests wait in `waiting`, an O(1) queue, because
    /// libcurl re-examines its own pending transfers on every connection change, which collapses
    /// under thousands of them.
    private lazy var activeCap =
        configuration.httpVersion == .http2 ? configuration.connectionsPerHost * 100 : configuration.connectionsPerHost

    /// Takes a request: starts it when a connection is free, else queues it (both count in flight).
    func submit(_ request: LoadRequest, intended: Int64, sent: Int64) {
        inFlight += 1
        if framed {
            // Runs send to few URLs: split each once.
            if request.url != lastURL {
                lastURL = request.url
                lastTarget = HTTP1Target(request.url)
            }
            if let target = lastTarget {
                submitHTTP1(request, target: target, intended: intended, sent: sent)
                return
            }
        }
        if active.count < activeCap && waiting.isEmpty {
            begin(request, intended: intended, sent: sent)
        } else if request.isPriority {
            waiting.prepend((request, intended, sent))
        } else {
            // In deadline order (intended order): one released late must not expire unnoticed behind the head.
            waiting.append((request, intended, sent)) { !$0.request.isPriority && $0.intended > intended }
        }
    }

    /// The monotonic time by which a request intended at `intended` (ns from the run's start) must
    /// be answered: the request timeout bounds it from its intended time, queueing included.
    @inline(__always)
    func deadline(intended: Int64) -> Int64 { runStart + intended + timeoutNanos }

    /// Counts a start as late when it comes more than `lateAfter` after the intended time.
    @inline(__always)
    func noteStart(intended: Int64, at now: Int64) {
        if now - runStart - intended > lateNanos { lateStarts += 1 }
    }

    /// The result of a request whose deadline came while it still waited for a connection: a
    /// timeout, never sent.
    func timedOutWaiting(_ request: LoadRequest, intended: Int64, sent: Int64) -> LoadResult {
        let received = monotonicNanoseconds() - runStart
        return LoadResult(
            id: request.id,
            kind: request.kind,
            intended: .nanoseconds(intended),
            sent: .nanoseconds(sent),
            wireStart: .nanoseconds(received),
            received: .nanoseconds(received),
            status: 0,
            error: .unsent,
            detail: "still waiting for a connection when the \(timeoutNanos / 1_000_000) ms request timeout, "
                + "counted from its intended time, ran out; never sent"
        )
    }

    /// The result of a request that failed before it was sent (a setup call libcurl refused, named in
    /// `detail`): an `other` failure, received now.
    func notSent(_ request: LoadRequest, intended: Int64, sent: Int64, detail: String) -> LoadResult {
        var result = timedOutWaiting(request, intended: intended, sent: sent)
        result.error = .other
        result.detail = detail + "; never sent"
        return result
    }

    private func begin(_ request: LoadRequest, intended: Int64, sent: Int64) {
        let now = monotonicNanoseconds()
        let remaining = deadline(intended: intended) - now
        guard remaining > 0 else {
            finished.append(timedOutWaiting(request, intended: intended, sent: sent))
            return
        }
        // What is left of the request timeout (rounded up), or the request's own timeout if shorter.
        var timeout = Int((remaining + 999_999) / 1_000_000)
        if let own = request.timeout { timeout = min(timeout, max(1, Int(own.microseconds / 1000))) }
        let transfer: Transfer
        do {
            if let reused = free.popLast() {
                transfer = reused
            } else if let created = try Transfer(
                configuration: configuration,
                transport: Unmanaged.passUnretained(self).toOpaque()
            ) {
                transfer = created
            } else {
                // Out of memory for a curl handle: retry when a transfer ends.
                waiting.prepend((request, intended, sent))
                return
            }
            try transfer.prepare(request, timeout: timeout, http2PriorKnowledge: configuration.httpVersion == .http2)
        } catch {
            finished.append(notSent(request, intended: intended, sent: sent, detail: error.description))
            return
        }
        noteStart(intended: intended, at: now)
        transfer.intended = intended
        transfer.sent = sent
        let added = curl_multi_add_handle(multi, transfer.easy)
        guard added == CURLM_OK else {
            free.append(transfer)
            let reason = String(cString: curl_multi_strerror(added))
            finished.append(
                notSent(request, intended: intended, sent: sent, detail: "libcurl refused the transfer: \(reason)")
            )
            return
        }
        active[ObjectIdentifier(transfer)] = transfer
    }

    private func beginWaiting() {
        while active.count < activeCap, let next = waiting.popFirst() {
            begin(next.request, intended: next.intended, sent: next.sent)
        }
    }

    /// Fails the waiting requests whose deadline has come. The queue is in intended order, so
    /// deadlines only grow along it and the expired ones are at its head (a priority request put ahead
    /// holds the rest until it starts, at the next free connection).
    private func expireWaiting(now: Int64) {
        while let head = waiting.first, deadline(intended: head.intended) <= now {
            _ = waiting.popFirst()
            finished.append(timedOutWaiting(head.request, intended: head.intended, sent: head.sent))
        }
    }

    /// Ends every request in flight or waiting, reporting each as stopped.
    func cancelAll(into results: inout [LoadResult]) {
        cancelHTTP1()
        drainFinished(into: &results)
        let now = monotonicNanoseconds() - runStart
        for transfer in Array(active.values) {
            var result = finish(easy: transfer.easy, code: CURLE_ABORTED_BY_CALLBACK, received: now)
            result.error = .other
            result.detail = "run stopped"
            results.append(result)
        }
        while let next = waiting.popFirst() {
            inFlight -= 1
            results.append(
                LoadResult(
                    id: next.request.id,
                    kind: next.request.kind,
                    intended: .nanoseconds(next.intended),
                    sent: .nanoseconds(next.sent),
                    wireStart: .nanoseconds(now),
                    received: .nanoseconds(now),
                    status: 0,
                    error: .other,
                    detail: "run stopped"
                )
            )
        }
    }

    /// Runs libcurl's due timeouts and appends the results of finished transfers.
    func perform(into results: inout [LoadResult]) {
        var running: Int32 = 0
        let now = monotonicNanoseconds()
        if let deadline = curlDeadline, deadline <= now {
            curlDeadline = nil
            curl_multi_socket_action(multi, CURL_SOCKET_TIMEOUT, 0, &running)
        }
        var remaining: Int32 = 0
        while let message = curl_multi_info_read(multi, &remaining) {
            guard message.pointee.msg == CURLMSG_DONE, let easy = message.pointee.easy_handle else { continue }
            let code = message.pointee.data.result
            if let connection = Unmanaged<AnyObject>.fromOpaque(owner(of: easy)).takeUnretainedValue()
                as? HTTP1Connection
            {
                connected(connection, code: code)
                continue
            }
            results.append(finish(easy: easy, code: code, received: monotonicNanoseconds() - runStart))
        }
        while let connection = orphans.popLast() {
            guard connection.isOpen else { continue }
            apply(connection.machine.readFailed("libcurl closed the connection", resetByPeer: true), to: connection)
        }
        expireHTTP1(now: now)
        expireWaiting(now: now)
        beginWaiting()
        drainFinished(into: &results)
    }

    private func finish(easy: UnsafeMutableRawPointer, code: CURLcode, received: Int64) -> LoadResult {
        let transfer = Unmanaged<Transfer>.fromOpaque(owner(of: easy)).takeUnretainedValue()
        var status = 0
        let statusCode = ps_curl_easy_getinfo_long(easy, CURLINFO_RESPONSE_CODE, &status)
        let osErrno = osErrno(of: easy)
        let wireStart =
            transfer.wireStartAbsolute == 0
            ? received : min(max(transfer.wireStartAbsolute - runStart, transfer.sent), received)
        var error: LoadErrorClass?
        var detail = ""
        if code != CURLE_OK {
            // libcurl calls the pre-request callback once the connection is up, before the request's first byte.
            error = classifyCurlFailure(code: Int(code.rawValue), osErrno: osErrno)
                .unlessNeverOnTheWire(transfer.wireStartAbsolute != 0)
            if transfer.hangUp && code == CURLE_WRITE_ERROR { error = .hungUp }
            detail = curlFailureDetail(code, osErrno: osErrno)
            if transfer.wireStartAbsolute != 0, let failed = error {
                // It went on a connection before this failure: libcurl found that one dead and retried.
                (error, detail) = failureAfterDeadConnection(failed, detail: detail)
            }
            status = 0
        } else if statusCode != CURLE_OK {
            (error, detail) = (.other, "libcurl could not report the status: \(curlFailureDetail(statusCode))")
        }
        let result = LoadResult(
            id: transfer.id,
            kind: transfer.kind,
            intended: .nanoseconds(transfer.intended),
            sent: .nanoseconds(transfer.sent),
            wireStart: .nanoseconds(wireStart),
            received: .nanoseconds(received),
            status: status,
            body: transfer.response,
            bodyBytes: transfer.responseBytes,
            error: error,
            detail: detail,
            resent: transfer.wireAttempts > 1,
            retryAfter: status >= 300 ? retryAfter(of: easy) : nil
        )
        curl_multi_remove_handle(multi, easy)
        active[ObjectIdentifier(transfer)] = nil
        inFlight -= 1
        free.append(transfer)
        return result
    }

    /// Waits until a socket is ready, libcurl's timeout or `nanoseconds` pass (to the microsecond,
    /// via the timerfd), and hands ready sockets to libcurl.
    func wait(nanoseconds: Int64) {
        var wait = nanoseconds
        let queued = waiting.first.map { deadline(intended: $0.intended) } ?? .max
        let wake = min(curlDeadline ?? .max, nextHTTP1Deadline, queued)
        if wake != .max { wait = min(wait, max(wake - monotonicNanoseconds(), 0)) }
        var timeoutMilliseconds: Int32 = 0
        if wait >= 5_000_000 {
            // Far enough that waking up to a millisecond early costs nothing: the caller re-checks.
            timeoutMilliseconds = Int32(min(wait / 1_000_000, 1000))
        } else if wait > 0 {
            var spec = itimerspec()
            spec.it_value.tv_nsec = Int(wait)
            timerfd_settime(timer, 0, &spec, nil)
            timeoutMilliseconds = 7  // a backstop; the timerfd fires first
        }
        let ready = events.withUnsafeMutableBufferPointer { buffer in
            epoll_wait(epoll, buffer.baseAddress, Int32(buffer.count), timeoutMilliseconds)
        }
        guard ready > 0 else { return }
        var running: Int32 = 0
        for index in 0..<Int(ready) {
            let event = events[index]
            let fd = event.data.fd
            if fd == timer {
                var expirations: UInt64 = 0
                _ = read(timer, &expirations, 8)
                continue
            }
            if Int(fd) < owners.count, let connection = owners[Int(fd)] {
                handle(connection, events: event.events)
                continue
            }
            if idle.contains(fd) {
                // Idle keep-alive socket with news (usually the server closing it): let libcurl
                // find out on its next use, and stop watching it.
                epoll_ctl(epoll, EPOLL_CTL_DEL, fd, nil)
                registered[fd] = nil
                idle.remove(fd)
                continue
            }
            var action: Int32 = 0
            if event.events & EPOLLIN.rawValue != 0 { action |= CURL_CSELECT_IN }
            if event.events & EPOLLOUT.rawValue != 0 { action |= CURL_CSELECT_OUT }
            if event.events & (EPOLLERR.rawValue | EPOLLHUP.rawValue) != 0 { action |= CURL_CSELECT_ERR }
            curl_multi_socket_action(multi, fd, action, &running)
        }
    }
}
