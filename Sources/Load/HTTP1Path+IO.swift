internal import CCurl
internal import CPayStormShims

#if canImport(Glibc)
internal import Glibc
#endif

// The I/O of the HTTP/1.1 path: what each connection's state machine asks for (write, watch, read, hand
// over, fail, close), on the socket directly or through `curl_easy_send`/`curl_easy_recv` over TLS.

extension HTTP1Path {
    /// Puts `pending` on `connection` and starts writing it.
    func start(_ pending: HTTP1Pending, on connection: HTTP1Connection) {
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
        if !pending.retried && clock.isLate(intended: pending.intended, at: now) { lateStarts += 1 }
        if connection.deadline < nextDeadline { nextDeadline = connection.deadline }
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
