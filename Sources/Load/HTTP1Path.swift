internal import CCurl
internal import CPayStormShims

#if canImport(Glibc)
internal import Glibc
#endif

/// The HTTP/1.1 request path: libcurl makes each connection (`CURLOPT_CONNECT_ONLY`: DNS, the connect
/// timeout, TLS with the configured CA) and PayStorm writes the requests and reads the responses on it
/// (HTTP1Path+IO.swift), one `sendmsg` and one `recv` a request. Per-origin pools of connections, the
/// requests waiting for one, and the sockets it watches itself. Confined to the engine's thread.
final class HTTP1Path: RequestPath {
    let multi: CurlMulti
    let epoll: Epoll
    let configuration: LoadEngineConfiguration
    var clock: RequestClock
    /// Connection pools by origin, and the last one used (most runs have one origin).
    private var pools: [String: HTTP1Pool] = [:]
    private var lastPool: HTTP1Pool?
    private var lastURL = ""
    private var lastTarget: HTTP1Target?
    /// The connection owning each socket number, if any.
    private var owners: [HTTP1Connection?] = []
    /// Connections whose socket libcurl closed on its own, to fail in `perform`.
    private var orphans: [HTTP1Connection] = []
    /// Results not yet handed back (still counted in flight until they are).
    private var finished: [LoadResult] = []
    private(set) var inFlight = 0
    var lateStarts = 0
    /// The earliest deadline of a request in flight (or later: it is recomputed lazily).
    var nextDeadline = Int64.max
    /// One receive buffer for every connection (they are read one at a time).
    let readBuffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 16)

    init(_ configuration: LoadEngineConfiguration, multi: CurlMulti, epoll: Epoll) {
        self.multi = multi
        self.epoll = epoll
        self.configuration = configuration
        clock = RequestClock(configuration)
    }

    deinit {
        closeAll()
        readBuffer.deallocate()
    }

    var runStart: Int64 {
        get { clock.runStart }
        set { clock.runStart = newValue }
    }

    /// Makes one connection handle, so that libcurl refuses an option now rather than on the first request.
    /// - Throws: ``CurlSetupError`` naming the option.
    func checkSetup() throws(CurlSetupError) {
        let pool = HTTP1Pool(origin: "http://127.0.0.1", isTLS: false)
        _ = try HTTP1Connection(pool: pool, configuration: configuration, callbacks: multi.callbackTarget)
    }

    /// Whether this path can frame a request to `url` (then `submit` takes it).
    func frames(_ url: String) -> Bool { target(of: url) != nil }

    /// The parts of `url` the framing needs, nil when this path cannot frame it.
    private func target(of url: String) -> HTTP1Target? {
        // Runs send to few URLs: split each once.
        if url != lastURL {
            lastURL = url
            lastTarget = HTTP1Target(url)
        }
        return lastTarget
    }

    /// Takes a request unless its URL is not one this path can frame (then the request is gone: callers that
    /// would hand it to another path ask `frames` first).
    func submit(_ request: consuming LoadRequest, intended: Int64, sent: Int64) -> Bool {
        guard let target = target(of: request.url) else { return false }
        inFlight += 1
        let pool: HTTP1Pool
        if let last = lastPool, last.origin == target.origin {
            pool = last
        } else if let known = pools[String(target.origin)] {
            pool = known
        } else {
            pool = HTTP1Pool(origin: String(target.origin), isTLS: target.isTLS)
            pools[pool.origin] = pool
        }
        lastPool = pool
        let deadline = clock.deadline(intended: intended)
        pool.enqueue(HTTP1Pending(request: request, target: target, intended: intended, sent: sent, deadline: deadline))
        pump(pool)
        // Still waiting for a connection: its deadline must wake the loop even if no connection frees.
        if let deadline = pool.firstDeadline, deadline < nextDeadline { nextDeadline = deadline }
        return true
    }

    /// Fails the connections libcurl closed and the requests past their deadline, and hands over what finished.
    func perform(now: Int64, into results: inout [LoadResult]) {
        while let connection = orphans.popLast() {
            guard connection.isOpen else { continue }
            apply(connection.machine.readFailed("libcurl closed the connection", resetByPeer: true), to: connection)
        }
        expire(now: now)
        guard !finished.isEmpty else { return }
        // Only now do they stop counting in flight, so the engine never sees nothing in flight while a
        // result is on its way.
        inFlight -= finished.count
        if results.isEmpty {
            // Handed over whole, each result moved rather than copied.
            swap(&results, &finished)
        } else {
            results.append(contentsOf: finished)
            finished.removeAll(keepingCapacity: true)
        }
    }

    // MARK: - Sockets

    /// The connection whose socket is `socket`, if this path watches it.
    @inline(__always)
    func connection(on socket: Int32) -> HTTP1Connection? {
        Int(socket) < owners.count ? owners[Int(socket)] : nil
    }

    /// Reacts to epoll events on one of this path's sockets.
    func handle(socket: Int32, events: UInt32) -> Bool {
        guard let connection = connection(on: socket) else { return false }
        handle(connection, events: events)
        return true
    }

    /// Called when libcurl opens a socket: a number it reuses is no longer a connection's.
    func forget(socket: Int32) {
        if Int(socket) < owners.count { owners[Int(socket)] = nil }
    }

    /// Called when libcurl closes a socket: a connection still on it fails in the next `perform`.
    func socketClosing(_ socket: Int32) {
        guard let connection = connection(on: socket) else { return }
        owners[Int(socket)] = nil
        connection.socket = -1
        orphans.append(connection)
    }

    /// Takes over a socket libcurl connected: from now on this path watches it.
    private func adopt(socket: Int32, for connection: HTTP1Connection) {
        let index = Int(socket)
        if index >= owners.count { owners.append(contentsOf: repeatElement(nil, count: index + 1 - owners.count)) }
        owners[index] = connection
        let known = multi.release(socket: socket)
        epoll.setInterest(socket, EPOLLIN.rawValue | EPOLLRDHUP.rawValue, known: known)
    }

    /// Adds or removes writability from what is watched on a connection's socket.
    func watchWrites(_ connection: HTTP1Connection, _ on: Bool) {
        let events = EPOLLIN.rawValue | EPOLLRDHUP.rawValue | (on ? EPOLLOUT.rawValue : 0)
        epoll.setInterest(connection.socket, events, known: true)
        connection.watchingWrites = on
    }

    // MARK: - Connections and requests

    /// Starts waiting requests on idle connections, and connects more while under the cap; a
    /// request whose deadline came while it waited fails as a timeout, unsent.
    func pump(_ pool: HTTP1Pool) {
        let now = monotonicNanoseconds()
        while let deadline = pool.firstDeadline {
            if deadline <= now {
                let head = pool.dequeue()!
                finished.append(clock.timedOutWaiting(head.request, intended: head.intended, sent: head.sent))
            } else if let connection = pool.idle.popLast() {
                start(pool.dequeue()!, on: connection)
            } else if pool.open < configuration.connectionsPerHost && pool.connecting < pool.waitingCount {
                openConnection(pool)
            } else {
                return
            }
        }
    }

    private func openConnection(_ pool: HTTP1Pool) {
        let connection: HTTP1Connection
        if let spare = pool.spare.popLast() {
            connection = spare
        } else {
            let made: HTTP1Connection?
            do {
                made = try HTTP1Connection(
                    pool: pool,
                    configuration: configuration,
                    callbacks: multi.callbackTarget
                )
            } catch {
                failFirstWaiting(pool, detail: error.description)
                return
            }
            guard let made else {
                failFirstWaiting(pool, detail: "libcurl could not create a handle")
                return
            }
            connection = made
            pool.all.append(made)
        }
        let added = multi.add(connection.easy)
        guard added == CURLM_OK else {
            pool.spare.append(connection)
            failFirstWaiting(
                pool,
                detail: "libcurl refused the connection: \(String(cString: curl_multi_strerror(added)))"
            )
            return
        }
        connection.machine.connect()
        connection.isOpen = true
        pool.open += 1
        pool.connecting += 1
    }

    /// Fails the request waiting longest in `pool`: a connection for it could not even be started.
    private func failFirstWaiting(_ pool: HTTP1Pool, detail: String) {
        if let pending = pool.dequeue() { fail(pending, error: .other, detail: detail + "; never sent") }
    }

    /// libcurl finished connecting `connection` (or failed to).
    func connected(_ connection: HTTP1Connection, code: CURLcode) {
        let pool = connection.pool
        pool.connecting -= 1
        var socket: curl_socket_t = -1
        var code = code
        if code == CURLE_OK {
            // CURLE_OK and no socket is not a connection either: the socket's code is the failure.
            code = ps_curl_easy_getinfo_socket(connection.easy, CURLINFO_ACTIVESOCKET, &socket)
        }
        guard code == CURLE_OK, socket >= 0 else {
            let osErrno = osErrno(of: connection.easy)
            closeConnection(connection)
            if let pending = pool.dequeue() {
                let error = classifyCurlFailure(code: Int(code.rawValue), osErrno: osErrno)
                let detail =
                    code == CURLE_OK ? "libcurl connected without a socket" : curlFailureDetail(code, osErrno: osErrno)
                fail(pending, error: error, detail: detail)
            }
            pump(pool)
            return
        }
        connection.socket = socket
        adopt(socket: socket, for: connection)
        apply(connection.machine.connected(), to: connection)
    }

    /// Hands over the response of the request on `connection`; the connection goes back to the idle
    /// list (`keepAlive`) or is closed.
    func complete(_ connection: HTTP1Connection, keepAlive: Bool) {
        let pending = connection.current!
        var result = self.result(of: pending, wireStart: connection.wireStart)
        result.status = connection.machine.parser.status
        result.retryAfter = connection.machine.parser.retryAfter
        // Moved, not shared: the next response then starts in a buffer of its own instead of copying this one.
        result.body = connection.response
        connection.response = []
        result.bodyBytes = connection.responseBytes
        finished.append(result)
        connection.current = nil
        connection.deadline = .max
        let pool = connection.pool
        if keepAlive {
            pool.idle.append(connection)
        } else {
            closeConnection(connection)
        }
        pump(pool)
    }

    /// Closes `connection` and fails its request, or (`retry`, and not retried before) queues it again
    /// at the head, for another connection.
    func failConnection(_ connection: HTTP1Connection, error: LoadErrorClass, detail: String, retry: Bool) {
        let pool = connection.pool
        let pending = connection.current
        connection.current = nil
        closeConnection(connection)
        if let pending {
            if retry && !pending.retried {
                pending.retried = true
                pool.requeue(pending)
            } else {
                fail(pending, error: error, detail: detail, wireStart: connection.wireStart)
            }
        }
        pump(pool)
    }

    /// Records a failed request.
    private func fail(_ pending: HTTP1Pending, error: LoadErrorClass, detail: String, wireStart: Int64? = nil) {
        var result = self.result(of: pending, wireStart: wireStart)
        // A copy refused before it went out was not sent again.
        result.resent = pending.retried && !error.neverSent
        let (error, detail) = pending.retried ? failureAfterDeadConnection(error, detail: detail) : (error, detail)
        // Without a wire start (and no earlier copy out) the request was never written: its connect timed out.
        result.error = error.unlessNeverOnTheWire(wireStart != nil || pending.retried)
        result.detail = detail
        finished.append(result)
    }

    /// A result for `pending` received now, with no status yet; `wireStart` is when it went on a
    /// connection (monotonic), nil when it never did.
    private func result(of pending: HTTP1Pending, wireStart: Int64?) -> LoadResult {
        let received = monotonicNanoseconds() - clock.runStart
        return LoadResult(
            id: pending.request.id,
            kind: pending.request.kind,
            intended: .nanoseconds(pending.intended),
            sent: .nanoseconds(pending.sent),
            wireStart: .nanoseconds(
                wireStart.map { min(max($0 - clock.runStart, pending.sent), received) } ?? received
            ),
            received: .nanoseconds(received),
            status: 0,
            resent: pending.retried
        )
    }

    /// Closes a connection (libcurl closes the socket when its handle leaves the multi handle) and
    /// keeps its handle for a later connect, unless libcurl would not take it back (the run ends on that).
    func closeConnection(_ connection: HTTP1Connection) {
        guard connection.isOpen else { return }
        _ = connection.machine.close()
        if let index = connection.pool.idle.firstIndex(where: { $0 === connection }) {
            connection.pool.idle.remove(at: index)
        }
        if connection.socket >= 0 && Int(connection.socket) < owners.count { owners[Int(connection.socket)] = nil }
        connection.socket = -1
        connection.isOpen = false
        connection.watchingWrites = false
        connection.deadline = .max
        connection.pool.open -= 1
        if multi.remove(connection.easy) { connection.pool.spare.append(connection) }
    }

    /// Fails requests past their deadline, on a connection or still waiting for one.
    private func expire(now: Int64) {
        guard now >= nextDeadline else { return }
        nextDeadline = .max
        for pool in pools.values {
            for connection in pool.all where connection.machine.isBusy {
                if connection.deadline <= now, let pending = connection.current {
                    let detail =
                        connection.deadline < pending.deadline
                        ? "no complete response within its own \((pending.request.timeout ?? .zero).microseconds / 1000) ms timeout"
                        : "no complete response within the \(clock.timeoutNanos / 1_000_000) ms request timeout, "
                            + "counted from its intended time"
                    apply(connection.machine.timedOut(detail), to: connection)
                } else if connection.deadline < nextDeadline {
                    nextDeadline = connection.deadline
                }
            }
            // Waiting requests are in intended order: their deadlines grow along the queue.
            pump(pool)
            if let deadline = pool.firstDeadline, deadline < nextDeadline { nextDeadline = deadline }
        }
    }

    /// Ends every request in flight or waiting, reporting each as an `other` failure with `detail`.
    func cancelAll(detail: String, into results: inout [LoadResult]) {
        for pool in pools.values {
            for connection in pool.all {
                guard let pending = connection.current else { continue }
                connection.current = nil
                closeConnection(connection)
                fail(pending, error: .other, detail: detail, wireStart: connection.wireStart)
            }
            while let pending = pool.dequeue() { fail(pending, error: .other, detail: detail) }
        }
        inFlight -= finished.count
        results.append(contentsOf: finished)
        finished.removeAll()
    }

    /// Closes every connection (the end of the run).
    private func closeAll() {
        for pool in pools.values {
            for connection in pool.all { closeConnection(connection) }
        }
        pools.removeAll()
        lastPool = nil
    }
}
