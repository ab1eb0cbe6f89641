internal import CCurl
internal import CPayStormShims

#if canImport(Glibc)
internal import Glibc
#endif

/// One reusable easy handle with the buffers of its current transfer.
///
/// Confined to the engine's thread (curl handles are not thread-safe), hence not Sendable.
final class Transfer {
    let easy: UnsafeMutableRawPointer
    var bodyBuffer: UnsafeMutableRawPointer?
    var bodyCapacity = 0
    var response: [UInt8] = []
    var responseBytes = 0
    var capture = true
    var captureLimit = 1 << 20
    var headerList: UnsafeMutablePointer<curl_slist>?
    var lastHeaders: [(name: String, value: String)] = []
    var lastURL = ""
    var lastShape: (method: String, bodyCount: Int)?
    var id = 0
    var kind = ""
    var intended: Int64 = 0
    var sent: Int64 = 0
    /// Monotonic time when libcurl was about to write the request (0 if it never was).
    var wireStartAbsolute: Int64 = 0
    /// The timeout set on the handle, in ms (set again only when a transfer needs another).
    var timeoutMilliseconds = 0
    /// Hang up when the response starts (a lost-response fault).
    var hangUp = false

    init?(configuration: LoadEngineConfiguration, transport: UnsafeMutableRawPointer) {
        guard let easy = curl_easy_init() else { return nil }
        self.easy = easy
        capture = configuration.captureBodies
        captureLimit = configuration.maxCapturedBodyBytes
        let me = Unmanaged.passUnretained(self).toOpaque()
        setCommonOptions(easy, owner: me, configuration: configuration, transport: transport)
        _ = ps_curl_easy_setopt_pointer(easy, CURLOPT_WRITEDATA, me)
        _ = ps_curl_easy_setopt_write_function(easy, transferWrite)
        _ = ps_curl_easy_setopt_pointer(easy, CURLOPT_PREREQDATA, me)
        _ = ps_curl_easy_setopt_prereq_function(easy, transferPrerequest)
        timeoutMilliseconds = Int(configuration.totalTimeout.microseconds / 1000)
        // No CURLOPT_HEADERDATA: with it set and no header function, libcurl writes headers into the body.
        _ = ps_curl_easy_setopt_long(easy, CURLOPT_TIMEOUT_MS, timeoutMilliseconds)
        switch configuration.httpVersion {
        case .http1_1:
            _ = ps_curl_easy_setopt_long(easy, CURLOPT_HTTP_VERSION, CURL_HTTP_VERSION_1_1)
        case .http2:
            _ = ps_curl_easy_setopt_long(easy, CURLOPT_HTTP_VERSION, CURL_HTTP_VERSION_2TLS)
            _ = ps_curl_easy_setopt_long(easy, CURLOPT_PIPEWAIT, 1)
        }
    }

    /// Sets up the handle for `request`, allowed `timeout` milliseconds from now; the body is copied
    /// into a buffer owned by this transfer, so it outlives the caller's array until the transfer ends.
    func prepare(_ request: LoadRequest, timeout: Int, http2PriorKnowledge: Bool) {
        id = request.id
        kind = request.kind
        response.removeAll(keepingCapacity: response.capacity <= 64 * 1024)
        responseBytes = 0
        wireStartAbsolute = 0
        var timeout = timeout
        // A transfer cannot be cut mid-request: a reset fault becomes the shortest timeout instead.
        if request.resetAfterBytes != nil { timeout = 1 }
        if timeout != timeoutMilliseconds {
            timeoutMilliseconds = timeout
            _ = ps_curl_easy_setopt_long(easy, CURLOPT_TIMEOUT_MS, timeout)
        }
        if request.hangUpOnResponse != hangUp {
            hangUp = request.hangUpOnResponse
            _ = ps_curl_easy_setopt_header_function(easy, hangUp ? transferHangUpOnHeader : nil)
        }
        // libcurl keeps options between transfers on a handle: set only what changed.
        if request.url != lastURL {
            _ = request.url.withCString { ps_curl_easy_setopt_string(easy, CURLOPT_URL, $0) }
            lastURL = request.url
            if http2PriorKnowledge {
                let version =
                    request.url.hasPrefix("http://") ? CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE : CURL_HTTP_VERSION_2TLS
                _ = ps_curl_easy_setopt_long(easy, CURLOPT_HTTP_VERSION, version)
            }
        }
        let method = request.method
        if request.body.count > bodyCapacity {
            bodyBuffer?.deallocate()
            bodyCapacity = max(request.body.count, 256)
            bodyBuffer = .allocate(byteCount: bodyCapacity, alignment: 16)
            lastShape = nil
        }
        if let bodyBuffer, !request.body.isEmpty {
            request.body.withUnsafeBytes { bodyBuffer.copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
        }
        let shape = (method: method, bodyCount: request.body.count)
        if let lastShape, lastShape == shape {
            // Same method and body size as the previous transfer: the options still hold.
        } else {
            setMethod(method, bodyCount: request.body.count)
            lastShape = shape
        }
        if headerList == nil || !request.headers.elementsEqual(lastHeaders, by: { $0 == $1 }) {
            curl_slist_free_all(headerList)
            // An empty Expect stops libcurl's 100-continue wait on bodies above 1 KB.
            var list = curl_slist_append(nil, "Expect:")
            for header in request.headers {
                list = curl_slist_append(list, "\(header.name): \(header.value)")
            }
            headerList = list
            lastHeaders = request.headers
            _ = ps_curl_easy_setopt_pointer(easy, CURLOPT_HTTPHEADER, headerList)
        }
    }

    private func setMethod(_ method: String, bodyCount: Int) {
        _ = ps_curl_easy_setopt_long(easy, CURLOPT_HTTPGET, 1)
        _ = ps_curl_easy_setopt_pointer(easy, CURLOPT_CUSTOMREQUEST, nil)
        if bodyCount > 0 || method == "POST" {
            _ = ps_curl_easy_setopt_long(easy, CURLOPT_POST, 1)
            _ = ps_curl_easy_setopt_off_t(easy, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(bodyCount))
            _ = ps_curl_easy_setopt_pointer(easy, CURLOPT_POSTFIELDS, bodyBuffer)
            if method != "POST" {
                _ = method.withCString { ps_curl_easy_setopt_string(easy, CURLOPT_CUSTOMREQUEST, $0) }
            }
        } else if method == "HEAD" {
            _ = ps_curl_easy_setopt_long(easy, CURLOPT_NOBODY, 1)
        } else if method != "GET" {
            _ = method.withCString { ps_curl_easy_setopt_string(easy, CURLOPT_CUSTOMREQUEST, $0) }
        }
    }

    deinit {
        curl_easy_cleanup(easy)
        curl_slist_free_all(headerList)
        bodyBuffer?.deallocate()
    }
}

/// The options every easy handle of the transport shares: `owner` as its private pointer, the
/// transport's socket callbacks, no signals, no proxy, TCP_NODELAY, the connect timeout, the CA file.
func setCommonOptions(
    _ easy: UnsafeMutableRawPointer,
    owner: UnsafeMutableRawPointer,
    configuration: LoadEngineConfiguration,
    transport: UnsafeMutableRawPointer
) {
    _ = ps_curl_easy_setopt_long(easy, CURLOPT_NOSIGNAL, 1)
    _ = ps_curl_easy_setopt_pointer(easy, CURLOPT_PRIVATE, owner)
    _ = ps_curl_easy_setopt_pointer(easy, CURLOPT_SOCKOPTDATA, transport)
    _ = ps_curl_easy_setopt_sockopt_function(easy, transportNewSocket)
    _ = ps_curl_easy_setopt_pointer(easy, CURLOPT_CLOSESOCKETDATA, transport)
    _ = ps_curl_easy_setopt_closesocket_function(easy, transportCloseSocket)
    _ = ps_curl_easy_setopt_long(easy, CURLOPT_TCP_NODELAY, 1)
    // Never through a proxy: traffic goes only where the URL says (and libcurl stops reading
    // the proxy environment variables on every transfer).
    _ = ps_curl_easy_setopt_string(easy, CURLOPT_PROXY, "")
    _ = ps_curl_easy_setopt_long(easy, CURLOPT_CONNECTTIMEOUT_MS, Int(configuration.connectTimeout.microseconds / 1000))
    if let caFile = configuration.caFile {
        _ = caFile.withCString { ps_curl_easy_setopt_string(easy, CURLOPT_CAINFO, $0) }
    }
}

/// libcurl's header callback for a lost-response fault: aborts the transfer at the first response
/// header, so the request reached the target but the answer is lost.
private let transferHangUpOnHeader:
    @convention(c) (UnsafeMutablePointer<CChar>?, Int, Int, UnsafeMutableRawPointer?) -> Int = {
        _,
        _,
        _,
        _ in
        0
    }

/// libcurl's write callback: appends to the transfer's response (or only counts it).
private let transferWrite: @convention(c) (UnsafeMutablePointer<CChar>?, Int, Int, UnsafeMutableRawPointer?) -> Int = {
    data,
    size,
    count,
    user in
    let length = size * count
    guard let user else { return length }
    let transfer = Unmanaged<Transfer>.fromOpaque(user).takeUnretainedValue()
    transfer.responseBytes += length
    if transfer.capture, let data, transfer.response.count < transfer.captureLimit {
        let kept = min(length, transfer.captureLimit - transfer.response.count)
        transfer.response.append(contentsOf: UnsafeRawBufferPointer(start: data, count: kept))
    }
    return length
}

/// libcurl's pre-request callback: stamps the moment the request goes on a connection, after any
/// wait for a free one, so that service time excludes queueing in the transport.
private let transferPrerequest:
    @convention(c) (UnsafeMutableRawPointer?, UnsafeMutablePointer<CChar>?, UnsafeMutablePointer<CChar>?, Int32, Int32)
        -> Int32 = {
            user,
            _,
            _,
            _,
            _ in
            if let user {
                Unmanaged<Transfer>.fromOpaque(user).takeUnretainedValue().wireStartAbsolute = monotonicNanoseconds()
            }
            return 0  // CURL_PREREQFUNC_OK
        }

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
    fileprivate var curlDeadline: Int64?
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

    init?(_ configuration: LoadEngineConfiguration) {
        guard let multi = curl_multi_init() else { return nil }
        self.multi = multi
        self.configuration = configuration
        timeoutNanos = configuration.totalTimeout.nanoseconds
        lateNanos = configuration.lateAfter.nanoseconds
        epoll = epoll_create1(Int32(EPOLL_CLOEXEC))
        timer = timerfd_create(CLOCK_MONOTONIC, Int32(TFD_NONBLOCK | TFD_CLOEXEC))
        guard epoll >= 0, timer >= 0 else {
            curl_multi_cleanup(multi)
            if epoll >= 0 { close(epoll) }
            if timer >= 0 { close(timer) }
            return nil
        }
        var timerEvent = epoll_event()
        timerEvent.events = EPOLLIN.rawValue
        timerEvent.data.fd = timer
        epoll_ctl(epoll, EPOLL_CTL_ADD, timer, &timerEvent)
        framed = configuration.httpVersion == .http1_1 && !configuration.libcurlTransfers
        let connections = configuration.connectionsPerHost
        if !framed {
            // The fast path keeps its own per-origin cap (libcurl would count its connections too).
            _ = ps_curl_multi_setopt_long(multi, CURLMOPT_MAX_HOST_CONNECTIONS, connections)
        }
        _ = ps_curl_multi_setopt_long(multi, CURLMOPT_MAXCONNECTS, connections * 2)
        if configuration.httpVersion == .http2 {
            _ = ps_curl_multi_setopt_long(multi, CURLMOPT_PIPELINING, Int(CURLPIPE_MULTIPLEX))
        }
        let me = Unmanaged.passUnretained(self).toOpaque()
        _ = ps_curl_multi_setopt_pointer(multi, CURLMOPT_SOCKETDATA, me)
        _ = ps_curl_multi_setopt_socket_function(multi, transportSocket)
        _ = ps_curl_multi_setopt_pointer(multi, CURLMOPT_TIMERDATA, me)
        _ = ps_curl_multi_setopt_timer_function(multi, transportTimer)
    }

    deinit {
        closeHTTP1()
        readBuffer.deallocate()
        for transfer in active.values { curl_multi_remove_handle(multi, transfer.easy) }
        active.removeAll()
        free.removeAll()
        curl_multi_cleanup(multi)
        close(timer)
        close(epoll)
    }

    /// epoll interest per socket as registered with the kernel.
    private var registered: [Int32: UInt32] = [:]
    /// Registered sockets libcurl no longer watches (idle keep-alive connections).
    private var idle: Set<Int32> = []

    /// Called when libcurl opens a socket: its number may have been used by a closed one.
    fileprivate func forget(socket: Int32) {
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
    fileprivate func watch(socket: Int32, what: Int32) {
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
        } else {
            waiting.append((request, intended, sent))
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
            error: .timeout,
            detail: "still waiting for a connection when the \(timeoutNanos / 1_000_000) ms request timeout, "
                + "counted from its intended time, ran out; never sent"
        )
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
        if let reused = free.popLast() {
            transfer = reused
        } else if let created = Transfer(
            configuration: configuration,
            transport: Unmanaged.passUnretained(self).toOpaque()
        ) {
            transfer = created
        } else {
            // Out of memory for a curl handle: retry when a transfer ends.
            waiting.prepend((request, intended, sent))
            return
        }
        transfer.prepare(request, timeout: timeout, http2PriorKnowledge: configuration.httpVersion == .http2)
        noteStart(intended: intended, at: now)
        transfer.intended = intended
        transfer.sent = sent
        active[ObjectIdentifier(transfer)] = transfer
        curl_multi_add_handle(multi, transfer.easy)
    }

    private func beginWaiting() {
        while active.count < activeCap, let next = waiting.popFirst() {
            begin(next.request, intended: next.intended, sent: next.sent)
        }
    }

    /// Fails the waiting requests whose deadline has come. The queue is in intended order, so
    /// deadlines only grow along it and the expired ones are at its head.
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
            var pointer: UnsafeMutableRawPointer?
            _ = ps_curl_easy_getinfo_pointer(easy, CURLINFO_PRIVATE, &pointer)
            if let connection = Unmanaged<AnyObject>.fromOpaque(pointer!).takeUnretainedValue() as? HTTP1Connection {
                connected(connection, code: code)
                continue
            }
            results.append(finish(easy: easy, code: code, received: monotonicNanoseconds() - runStart))
        }
        while let connection = orphans.popLast() {
            guard connection.state != .closed else { continue }
            failConnection(connection, error: .reset, detail: "libcurl closed the connection", retryable: true)
        }
        expireHTTP1(now: now)
        expireWaiting(now: now)
        beginWaiting()
        drainFinished(into: &results)
    }

    private func finish(easy: UnsafeMutableRawPointer, code: CURLcode, received: Int64) -> LoadResult {
        var pointer: UnsafeMutableRawPointer?
        _ = ps_curl_easy_getinfo_pointer(easy, CURLINFO_PRIVATE, &pointer)
        let transfer = Unmanaged<Transfer>.fromOpaque(pointer!).takeUnretainedValue()
        var status = 0
        _ = ps_curl_easy_getinfo_long(easy, CURLINFO_RESPONSE_CODE, &status)
        var osErrno = 0
        _ = ps_curl_easy_getinfo_long(easy, CURLINFO_OS_ERRNO, &osErrno)
        let wireStart =
            transfer.wireStartAbsolute == 0
            ? received : min(max(transfer.wireStartAbsolute - runStart, transfer.sent), received)
        var error: LoadErrorClass?
        var detail = ""
        if code != CURLE_OK {
            error = classifyCurlFailure(code: Int(code.rawValue), osErrno: osErrno)
            if transfer.hangUp && code == CURLE_WRITE_ERROR { error = .hungUp }
            detail = curlFailureDetail(code, osErrno: osErrno)
            status = 0
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
            detail: detail
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

/// libcurl's socket callback: forwards interest changes to the transport's epoll set.
private let transportSocket:
    @convention(c) (UnsafeMutableRawPointer?, curl_socket_t, Int32, UnsafeMutableRawPointer?, UnsafeMutableRawPointer?)
        -> Int32 = {
            _,
            socket,
            what,
            user,
            _ in
            guard let user else { return 0 }
            Unmanaged<Transport>.fromOpaque(user).takeUnretainedValue().watch(socket: socket, what: what)
            return 0
        }

/// libcurl's new-socket callback: a descriptor number may be reused after a close, so forget
/// what was registered under it.
let transportNewSocket: @convention(c) (UnsafeMutableRawPointer?, curl_socket_t, curlsocktype) -> Int32 = {
    user,
    socket,
    _ in
    if let user { Unmanaged<Transport>.fromOpaque(user).takeUnretainedValue().forget(socket: socket) }
    return 0  // CURL_SOCKOPT_OK
}

/// libcurl's timer callback: remembers when libcurl next needs `CURL_SOCKET_TIMEOUT`.
private let transportTimer: @convention(c) (UnsafeMutableRawPointer?, Int, UnsafeMutableRawPointer?) -> Int32 = {
    _,
    milliseconds,
    user in
    guard let user else { return 0 }
    let transport = Unmanaged<Transport>.fromOpaque(user).takeUnretainedValue()
    transport.curlDeadline = milliseconds < 0 ? nil : monotonicNanoseconds() + Int64(milliseconds) * 1_000_000
    return 0
}

/// libcurl's message for a failure, with the system's when there is an errno: what results show.
func curlFailureDetail(_ code: CURLcode, osErrno: Int = 0) -> String {
    var detail = "curl \(code.rawValue): \(String(cString: curl_easy_strerror(code)))"
    if osErrno != 0 { detail += " (\(String(cString: strerror(Int32(osErrno)))))" }
    return detail
}

/// Maps a libcurl failure to a PayStorm error class (pure, tested by table).
func classifyCurlFailure(code: Int, osErrno: Int) -> LoadErrorClass {
    switch code {
    case 28:  // CURLE_OPERATION_TIMEDOUT
        return .timeout
    case 5, 6:  // COULDNT_RESOLVE_PROXY, COULDNT_RESOLVE_HOST
        return .dns
    case 7:  // COULDNT_CONNECT
        return osErrno == Int(ECONNREFUSED) || osErrno == 0 ? .refused : .other
    case 35, 51, 53, 54, 58, 59, 60, 64, 66, 77, 80, 82, 83, 90, 91, 98:  // SSL_* and PEER_FAILED_VERIFICATION
        return .tls
    case 52, 55, 56, 18, 16, 92:  // GOT_NOTHING, SEND_ERROR, RECV_ERROR, PARTIAL_FILE, HTTP2, HTTP2_STREAM
        return .reset
    default:
        return .other
    }
}

extension LoadEngine {
    /// Checks that `url`'s host accepts a connection (and a TLS handshake for `https://`),
    /// without sending a request.
    /// - Returns: nil when it does, else the failure's class and libcurl's message.
    public func probe(url: String) -> (error: LoadErrorClass, detail: String)? {
        guard let easy = curl_easy_init() else { return (.other, "libcurl could not create a handle") }
        defer { curl_easy_cleanup(easy) }
        _ = ps_curl_easy_setopt_long(easy, CURLOPT_NOSIGNAL, 1)
        _ = ps_curl_easy_setopt_long(easy, CURLOPT_CONNECT_ONLY, 1)
        _ = ps_curl_easy_setopt_long(
            easy,
            CURLOPT_CONNECTTIMEOUT_MS,
            Int(configuration.connectTimeout.microseconds / 1000)
        )
        if let caFile = configuration.caFile {
            _ = caFile.withCString { ps_curl_easy_setopt_string(easy, CURLOPT_CAINFO, $0) }
        }
        _ = url.withCString { ps_curl_easy_setopt_string(easy, CURLOPT_URL, $0) }
        let code = curl_easy_perform(easy)
        guard code != CURLE_OK else { return nil }
        var osErrno = 0
        _ = ps_curl_easy_getinfo_long(easy, CURLINFO_OS_ERRNO, &osErrno)
        return (
            classifyCurlFailure(code: Int(code.rawValue), osErrno: osErrno), String(cString: curl_easy_strerror(code))
        )
    }
}
