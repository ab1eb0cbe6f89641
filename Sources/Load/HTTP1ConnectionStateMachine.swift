/// The life of one fast-path HTTP/1.1 connection as a value: events in, actions out, the way
/// async-http-client writes its connection state machines. It owns the request's write progress and the
/// response parser, so every decision (write more, wait, keep the connection, close it, retry the request
/// once) is made here and tested without sockets; ``HTTP1Path`` only does the I/O the actions name.
struct HTTP1ConnectionStateMachine {
    /// Where the connection is.
    enum State: Equatable {
        case closed
        case connecting
        /// Open with nothing in flight.
        case idle
        /// Writing a request: bytes `sent` of `end` (`end` is short of the request for a reset fault).
        case sending(sent: Int, end: Int)
        /// The whole request is written; reading the response.
        case receiving
    }

    /// What the transport does next.
    enum Action: Equatable {
        /// Nothing until the next event.
        case wait
        /// Write request bytes `from..<to`, then report ``HTTP1ConnectionStateMachine/wrote(_:)``,
        /// ``HTTP1ConnectionStateMachine/writeBlocked()`` or ``HTTP1ConnectionStateMachine/writeFailed(_:retryable:)``.
        case write(from: Int, to: Int)
        /// The socket is full: watch it for writability, then write again.
        case awaitWritable
        /// The request is written: stop watching writability and wait for the response.
        case awaitResponse
        /// The connection is open and idle: start the next waiting request on it.
        case ready
        /// The response is complete: hand it over; the connection is now idle (`keepAlive`) or closed.
        case complete(keepAlive: Bool)
        /// The connection is closed: fail its request, or (`retry`) queue it again once, on another connection.
        case fail(LoadErrorClass, detail: String, retry: Bool)
        /// Close the connection with a TCP reset after `after` request bytes (a network-reset fault), failing
        /// its request.
        case reset(after: Int)
        /// Close the connection; it had no request.
        case close
    }

    private(set) var state = State.closed
    /// Responses completed since it connected: a request that dies unanswered on a reused connection is
    /// retried once, as libcurl does, because the server may have closed it just before.
    private(set) var served = 0
    /// The response parser of the request in flight.
    private(set) var parser = HTTP1ResponseParser()
    /// The request's length in bytes, and whether a lost-response fault hangs up at the first byte.
    private var total = 0
    private var hangUpOnResponse = false

    /// Whether a request is in flight (being written or answered).
    var isBusy: Bool {
        switch state {
        case .sending, .receiving: true
        case .closed, .connecting, .idle: false
        }
    }

    /// The transport starts connecting (a failed connect is ``close()``: no request was on it yet).
    mutating func connect() {
        precondition(state == .closed, "connect on a connection that is \(state)")
        state = .connecting
        served = 0
    }

    /// libcurl connected the socket.
    mutating func connected() -> Action {
        guard state == .connecting else { return .wait }
        state = .idle
        return .ready
    }

    /// A request of `total` bytes starts on this idle connection.
    /// - Parameters:
    ///   - resetAfter: a network-reset fault: cut the connection after this many bytes.
    ///   - hangUpOnResponse: a lost-response fault: hang up when the response starts.
    ///   - expectsBody: false for `HEAD`.
    mutating func start(total: Int, resetAfter: Int?, hangUpOnResponse: Bool, expectsBody: Bool) -> Action {
        precondition(state == .idle, "a request started on a connection that is \(state)")
        self.total = total
        self.hangUpOnResponse = hangUpOnResponse
        parser.reset(expectsBody: expectsBody)
        let end = resetAfter.map { min(max($0, 0), total) } ?? total
        state = .sending(sent: 0, end: end)
        return nextWrite(sent: 0, end: end)
    }

    /// The socket became writable again.
    mutating func writable() -> Action {
        guard case .sending(let sent, let end) = state else { return .wait }
        return nextWrite(sent: sent, end: end)
    }

    /// `count` more bytes (above 0) were written.
    mutating func wrote(_ count: Int) -> Action {
        guard case .sending(let sent, let end) = state else { return .wait }
        state = .sending(sent: sent + count, end: end)
        return nextWrite(sent: sent + count, end: end)
    }

    private mutating func nextWrite(sent: Int, end: Int) -> Action {
        if sent < end { return .write(from: sent, to: end) }
        if end < total {
            state = .closed
            return .reset(after: end)
        }
        state = .receiving
        return .awaitResponse
    }

    /// The socket is full.
    func writeBlocked() -> Action {
        guard case .sending = state else { return .wait }
        return .awaitWritable
    }

    /// Writing failed; `retryable` when the peer had closed or reset the connection.
    mutating func writeFailed(_ detail: String, retryable: Bool) -> Action {
        guard isBusy else { return .wait }
        state = .closed
        return .fail(.reset, detail: detail, retry: retryable && served > 0)
    }

    /// Bytes arrived (never empty: the end of the stream is ``peerClosed()``); body bytes go to `body`.
    mutating func read(_ bytes: UnsafeRawBufferPointer, body: (UnsafeRawBufferPointer) -> Void) -> Action {
        // On an idle connection, bytes nobody asked for: the connection is not usable.
        if let action = closeUnlessBusy() { return action }
        if hangUpOnResponse {
            state = .closed
            return .fail(.hungUp, detail: "hung up when the response started (lost response)", retry: false)
        }
        let complete: Bool
        do {
            complete = try parser.feed(bytes, body: body)
        } catch {
            state = .closed
            return .fail(.other, detail: "malformed HTTP response: \(error.message)", retry: false)
        }
        return complete ? completed() : .wait
    }

    /// What an event that only matters to a request in flight does otherwise: an idle connection that
    /// hears from its peer is closed, a closed or connecting one waits; nil when a request is in flight.
    private mutating func closeUnlessBusy() -> Action? {
        switch state {
        case .idle:
            state = .closed
            return .close
        case .closed, .connecting:
            return .wait
        case .sending, .receiving:
            return nil
        }
    }

    /// The response ended; the connection stays only if both sides agree and the whole request was written
    /// (an answer that came early would take the rest of the request for a new one).
    private mutating func completed() -> Action {
        served += 1
        let keepAlive = parser.keepAlive && state == .receiving
        state = keepAlive ? .idle : .closed
        return .complete(keepAlive: keepAlive)
    }

    /// The server closed the connection (a read of 0 bytes).
    mutating func peerClosed() -> Action {
        if let action = closeUnlessBusy() { return action }
        if parser.finishAtClose() { return completed() }
        state = .closed
        if parser.receivedBytes == 0 {
            return .fail(.reset, detail: "the server closed the connection without answering", retry: served > 0)
        }
        return .fail(.reset, detail: "the server closed the connection in the middle of the response", retry: false)
    }

    /// Reading failed; `resetByPeer` when the peer reset the connection (retryable when nothing was answered).
    mutating func readFailed(_ detail: String, resetByPeer: Bool) -> Action {
        if let action = closeUnlessBusy() { return action }
        let retry = resetByPeer && parser.receivedBytes == 0 && served > 0
        state = .closed
        return .fail(.reset, detail: detail, retry: retry)
    }

    /// The request's deadline came before its response ended.
    mutating func timedOut(_ detail: String) -> Action {
        guard isBusy else { return .wait }
        state = .closed
        return .fail(.timeout, detail: detail, retry: false)
    }

    /// The transport closes the connection (the run stopped, or it ends): a request in flight fails.
    mutating func close() -> Action {
        let busy = isBusy
        guard state != .closed else { return .wait }
        state = .closed
        return busy ? .fail(.other, detail: "run stopped", retry: false) : .close
    }
}
