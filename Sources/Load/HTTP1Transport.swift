internal import CCurl
internal import CPayStormShims

#if canImport(Glibc)
internal import Glibc
#endif

extension Transport {
    /// Hands the fast path's results to the engine; only now do they stop counting in flight, so
    /// the engine never sees nothing in flight while a result is on its way.
    func drainFinished(into results: inout [LoadResult]) {
        guard !finished.isEmpty else { return }
        inFlight -= finished.count
        results.append(contentsOf: finished)
        finished.removeAll(keepingCapacity: true)
    }

    /// Takes a request for the fast path.
    func submitHTTP1(_ request: LoadRequest, target: HTTP1Target, intended: Int64, sent: Int64) {
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
        pool.enqueue(
            HTTP1Pending(
                request: request,
                target: target,
                intended: intended,
                sent: sent,
                deadline: deadline(intended: intended)
            )
        )
        pump(pool)
        // Still waiting for a connection: its deadline must wake the loop even if no connection frees.
        if let head = pool.firstWaiting, head.deadline < nextHTTP1Deadline { nextHTTP1Deadline = head.deadline }
    }

    /// Starts waiting requests on idle connections, and connects more while under the cap; a
    /// request whose deadline came while it waited fails as a timeout, unsent.
    func pump(_ pool: HTTP1Pool) {
        let now = monotonicNanoseconds()
        while let head = pool.firstWaiting {
            if head.deadline <= now {
                _ = pool.dequeue()
                finished.append(timedOutWaiting(head.request, intended: head.intended, sent: head.sent))
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
                    transport: Unmanaged.passUnretained(self).toOpaque()
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
        let added = curl_multi_add_handle(multi, connection.easy)
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

    private func start(_ pending: HTTP1Pending, on connection: HTTP1Connection) {
        let now = monotonicNanoseconds()
        let isTLS = connection.pool.isTLS
        HTTP1RequestWriter.write(pending.request, target: pending.target, into: &connection.out, body: isTLS)
        connection.body = isTLS ? [] : pending.request.body
        connection.current = pending
        connection.response.removeAll(keepingCapacity: connection.response.capacity <= 64 * 1024)
        connection.responseBytes = 0
        connection.wireStart = now
        // The request timeout runs from the intended time, so a late start gets only what is left;
        // a request's own timeout (a network-timeout fault) runs from the wire and can only shorten it.
        connection.deadline = pending.deadline
        if let own = pending.request.timeout {
            connection.deadline = min(connection.deadline, now + max(own.nanoseconds, 1_000_000))
        }
        if !pending.retried { noteStart(intended: pending.intended, at: now) }
        if connection.deadline < nextHTTP1Deadline { nextHTTP1Deadline = connection.deadline }
        let action = connection.machine.start(
            total: connection.out.count + connection.body.count,
            resetAfter: pending.request.resetAfterBytes,
            hangUpOnResponse: pending.request.hangUpOnResponse,
            expectsBody: pending.request.method != "HEAD"
        )
        apply(action, to: connection)
    }

    /// Does what the connection's state machine asks: writes, watches, hands over or fails the request,
    /// closes the connection, starts the next request.
    func apply(_ action: HTTP1ConnectionStateMachine.Action, to connection: HTTP1Connection) {
        var action = action
        while case .write(let from, let to) = action {
            action = write(connection, from: from, to: to)
        }
        switch action {
        case .wait, .write:
            break
        case .awaitWritable:
            watchWrites(connection, true)
        case .awaitResponse:
            if connection.watchingWrites { watchWrites(connection, false) }
        case .ready:
            connection.pool.idle.append(connection)
            pump(connection.pool)
        case .complete(let keepAlive):
            complete(connection, keepAlive: keepAlive)
        case .fail(let error, let detail, let retry):
            failConnection(connection, error: error, detail: detail, retry: retry)
        case .reset(let bytes):
            resetConnection(connection, after: bytes)
        case .close:
            closeConnection(connection)
            pump(connection.pool)
        }
    }

    /// Writes request bytes `from..<to` once and reports the outcome to the state machine.
    private func write(_ connection: HTTP1Connection, from: Int, to end: Int) -> HTTP1ConnectionStateMachine.Action {
        var written = 0
        if connection.pool.isTLS {
            let code = connection.out.withUnsafeBytes { buffer in
                curl_easy_send(connection.easy, buffer.baseAddress! + from, end - from, &written)
            }
            if code != CURLE_OK && code != CURLE_AGAIN {
                return connection.machine.writeFailed(curlFailureDetail(code), retryable: true)
            }
        } else {
            // Head and body in one call, the body straight from the request (no copy).
            let result = connection.out.withUnsafeBytes { head in
                connection.body.withUnsafeBytes { body in
                    sendHeadAndBody(connection.socket, head: head, body: body, from: from, to: end)
                }
            }
            if result < 0 && errno != EAGAIN && errno != EINTR {
                let retryable = errno == ECONNRESET || errno == EPIPE
                return connection.machine.writeFailed(String(cString: strerror(errno)), retryable: retryable)
            }
            written = max(result, 0)
        }
        return written == 0 ? connection.machine.writeBlocked() : connection.machine.wrote(written)
    }

    /// Ends a network-reset fault: the connection is closed with a TCP RST (SO_LINGER 0) after
    /// `bytes` bytes of the request, so the target sees it cut.
    private func resetConnection(_ connection: HTTP1Connection, after bytes: Int) {
        var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
        setsockopt(connection.socket, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
        let total = connection.out.count + connection.body.count
        failConnection(
            connection,
            error: .reset,
            detail: "reset after \(bytes) of \(total) request bytes (network-reset fault)",
            retry: false
        )
    }

    /// Handles epoll events on a fast-path socket.
    func handle(_ connection: HTTP1Connection, events: UInt32) {
        switch connection.machine.state {
        case .sending:
            apply(connection.machine.writable(), to: connection)
            // A server may answer before reading the whole body (a 413, say): read that answer.
            let readable = EPOLLIN.rawValue | EPOLLHUP.rawValue | EPOLLERR.rawValue
            if connection.machine.isBusy && events & readable != 0 { readResponse(connection) }
        case .receiving:
            readResponse(connection)
        case .idle:
            checkIdle(connection)
        case .closed, .connecting:
            break
        }
    }

    /// Reads what arrived and hands it to the state machine until the socket is drained or the machine
    /// acts on it (the response ended, or the connection failed).
    private func readResponse(_ connection: HTTP1Connection) {
        let buffer = readBuffer
        while true {
            var count = 0
            if connection.pool.isTLS {
                let code = curl_easy_recv(connection.easy, buffer.baseAddress, buffer.count, &count)
                if code == CURLE_AGAIN { return }
                if code != CURLE_OK {
                    apply(connection.machine.readFailed(curlFailureDetail(code), resetByPeer: true), to: connection)
                    return
                }
            } else {
                count = recv(connection.socket, buffer.baseAddress, buffer.count, 0)
                if count < 0 {
                    if errno == EAGAIN || errno == EINTR { return }
                    let detail = String(cString: strerror(errno))
                    apply(connection.machine.readFailed(detail, resetByPeer: errno == ECONNRESET), to: connection)
                    return
                }
            }
            let action: HTTP1ConnectionStateMachine.Action
            if count == 0 {
                action = connection.machine.peerClosed()
            } else {
                action = connection.machine.read(UnsafeRawBufferPointer(rebasing: buffer[0..<count])) { chunk in
                    capture(chunk, into: connection)
                }
            }
            guard action == .wait else { return apply(action, to: connection) }
            // A plain socket that did not fill the buffer is drained (level-triggered epoll says when
            // more comes); TLS may hold decrypted bytes, so it is read until it would block.
            if !connection.pool.isTLS && count < buffer.count { return }
        }
    }

    /// Counts response body bytes, keeping them up to the configured limit.
    private func capture(_ chunk: UnsafeRawBufferPointer, into connection: HTTP1Connection) {
        connection.responseBytes += chunk.count
        if configuration.captureBodies && connection.response.count < configuration.maxCapturedBodyBytes {
            let kept = min(chunk.count, configuration.maxCapturedBodyBytes - connection.response.count)
            connection.response.append(contentsOf: UnsafeRawBufferPointer(rebasing: chunk[0..<kept]))
        }
    }

    /// An idle connection became readable: usually the server closing it (or a TLS session ticket).
    private func checkIdle(_ connection: HTTP1Connection) {
        var count = 0
        if connection.pool.isTLS {
            let code = curl_easy_recv(connection.easy, readBuffer.baseAddress, readBuffer.count, &count)
            if code == CURLE_AGAIN { return }
        } else {
            count = recv(connection.socket, readBuffer.baseAddress, readBuffer.count, Int32(MSG_DONTWAIT))
            if count < 0 && (errno == EAGAIN || errno == EINTR) { return }
        }
        // Closed, failed, or bytes nobody asked for: the connection is not usable.
        apply(connection.machine.peerClosed(), to: connection)
    }

    /// Hands over the response of the request on `connection`; the connection goes back to the idle
    /// list (`keepAlive`) or is closed.
    private func complete(_ connection: HTTP1Connection, keepAlive: Bool) {
        var result = self.result(of: connection.current!, wireStart: connection.wireStart)
        result.status = connection.machine.parser.status
        result.retryAfter = connection.machine.parser.retryAfter
        result.body = connection.response
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
        if var pending {
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
        let received = monotonicNanoseconds() - runStart
        return LoadResult(
            id: pending.request.id,
            kind: pending.request.kind,
            intended: .nanoseconds(pending.intended),
            sent: .nanoseconds(pending.sent),
            wireStart: .nanoseconds(wireStart.map { min(max($0 - runStart, pending.sent), received) } ?? received),
            received: .nanoseconds(received),
            status: 0,
            resent: pending.retried
        )
    }

    /// Closes a connection (libcurl closes the socket when its handle leaves the multi handle) and
    /// keeps its handle for a later connect.
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
        curl_multi_remove_handle(multi, connection.easy)
        connection.pool.open -= 1
        connection.pool.spare.append(connection)
    }

    /// Fails requests past their deadline, on a connection or still waiting for one.
    func expireHTTP1(now: Int64) {
        guard now >= nextHTTP1Deadline else { return }
        nextHTTP1Deadline = .max
        for pool in pools.values {
            for connection in pool.all where connection.machine.isBusy {
                if connection.deadline <= now, let pending = connection.current {
                    let detail =
                        connection.deadline < pending.deadline
                        ? "no complete response within its own \((pending.request.timeout ?? .zero).microseconds / 1000) ms timeout"
                        : "no complete response within the \(timeoutNanos / 1_000_000) ms request timeout, "
                            + "counted from its intended time"
                    apply(connection.machine.timedOut(detail), to: connection)
                } else if connection.deadline < nextHTTP1Deadline {
                    nextHTTP1Deadline = connection.deadline
                }
            }
            // Waiting requests are in intended order: their deadlines grow along the queue.
            pump(pool)
            if let head = pool.firstWaiting, head.deadline < nextHTTP1Deadline { nextHTTP1Deadline = head.deadline }
        }
    }

    /// Ends every fast-path request in flight or waiting, reporting each as stopped.
    func cancelHTTP1() {
        for pool in pools.values {
            for connection in pool.all {
                guard let pending = connection.current else { continue }
                connection.current = nil
                closeConnection(connection)
                fail(pending, error: .other, detail: "run stopped", wireStart: connection.wireStart)
            }
            while let pending = pool.dequeue() { fail(pending, error: .other, detail: "run stopped") }
        }
    }

    /// Closes every fast-path connection (the end of the run).
    func closeHTTP1() {
        for pool in pools.values {
            for connection in pool.all { closeConnection(connection) }
        }
        pools.removeAll()
        lastPool = nil
    }
}

/// Sends bytes `offset..<end` of `head` followed by `body` in one `sendmsg`.
private func sendHeadAndBody(
    _ socket: Int32,
    head: UnsafeRawBufferPointer,
    body: UnsafeRawBufferPointer,
    from offset: Int,
    to end: Int
) -> Int {
    var vectors = (iovec(), iovec())
    var count = 0
    withUnsafeMutableBytes(of: &vectors) { raw in
        let vector = raw.baseAddress!.assumingMemoryBound(to: iovec.self)
        if offset < head.count {
            vector[0] = iovec(
                iov_base: UnsafeMutableRawPointer(mutating: head.baseAddress! + offset),
                iov_len: min(end, head.count) - offset
            )
            count = 1
            if end > head.count {
                vector[1] = iovec(
                    iov_base: UnsafeMutableRawPointer(mutating: body.baseAddress!),
                    iov_len: end - head.count
                )
                count = 2
            }
        } else {
            let skip = offset - head.count
            vector[0] = iovec(
                iov_base: UnsafeMutableRawPointer(mutating: body.baseAddress! + skip),
                iov_len: end - offset
            )
            count = 1
        }
    }
    var message = msghdr()
    return withUnsafeMutablePointer(to: &vectors) { pointer in
        pointer.withMemoryRebound(to: iovec.self, capacity: 2) { vector in
            message.msg_iov = vector
            message.msg_iovlen = count
            return sendmsg(socket, &message, Int32(MSG_NOSIGNAL))
        }
    }
}

/// libcurl's close-socket callback: a socket libcurl closes on its own while PayStorm holds it
/// (it should not happen) fails that connection first, so the descriptor number is never
/// mistaken for the next socket that reuses it.
let transportCloseSocket: @convention(c) (UnsafeMutableRawPointer?, curl_socket_t) -> Int32 = { user, socket in
    if let user { Unmanaged<Transport>.fromOpaque(user).takeUnretainedValue().socketClosing(socket) }
    return close(socket)
}
