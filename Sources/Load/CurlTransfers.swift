internal import CCurl
internal import CPayStormShims

/// The request path of libcurl transfers (HTTP/2, and HTTP/1.1 with
/// ``LoadEngineConfiguration/libcurlTransfers``): a pool of reusable easy handles on the shared multi
/// handle, and the requests waiting for one. Confined to the engine's thread.
final class CurlTransfers: RequestPath {
    private let multi: CurlMulti
    private let configuration: LoadEngineConfiguration
    var clock: RequestClock
    private var free: [Transfer] = []
    private var active: [ObjectIdentifier: Transfer] = [:]
    /// Requests waiting for a free connection, in arrival order.
    private var waiting = FIFOQueue<(request: LoadRequest, intended: Int64, sent: Int64)>()
    /// Transfers handed to libcurl at most: one per connection for HTTP/1.1 (100 streams per
    /// connection for HTTP/2). Further requests wait in `waiting`, an O(1) queue, because
    /// libcurl re-examines its own pending transfers on every connection change, which collapses
    /// under thousands of them.
    private let activeCap: Int
    /// Results not yet handed back (still counted in flight until they are).
    private var finished: [LoadResult] = []
    private(set) var inFlight = 0
    private(set) var lateStarts = 0

    init(_ configuration: LoadEngineConfiguration, multi: CurlMulti) {
        self.multi = multi
        self.configuration = configuration
        clock = RequestClock(configuration)
        let connections = configuration.connectionsPerHost
        activeCap = configuration.httpVersion == .http2 ? connections * 100 : connections
    }

    deinit {
        for transfer in active.values { _ = multi.remove(transfer.easy) }
    }

    var runStart: Int64 {
        get { clock.runStart }
        set { clock.runStart = newValue }
    }

    /// Makes one handle, so that libcurl refuses an option now rather than on the first request.
    /// - Throws: ``CurlSetupError`` naming the option.
    func checkSetup() throws(CurlSetupError) {
        _ = try Transfer(configuration: configuration, callbacks: multi.callbackTarget)
    }

    /// Takes a request: starts it when a connection is free, else queues it.
    func submit(_ request: consuming LoadRequest, intended: Int64, sent: Int64) -> Bool {
        inFlight += 1
        if active.count < activeCap && waiting.isEmpty {
            begin(request, intended: intended, sent: sent)
        } else if request.isPriority {
            waiting.prepend((request, intended, sent))
        } else {
            // In deadline order (intended order): one released late must not expire unnoticed behind the head.
            waiting.append((request, intended, sent)) { !$0.request.isPriority && $0.intended > intended }
        }
        return true
    }

    /// libcurl's sockets are driven through ``CurlMulti``; this path watches none itself.
    func handle(socket: Int32, events: UInt32) -> Bool { false }

    /// The deadline of the request waiting longest (its queue is in deadline order).
    var nextDeadline: Int64 { waiting.first.map { clock.deadline(intended: $0.intended) } ?? .max }

    private func begin(_ request: LoadRequest, intended: Int64, sent: Int64) {
        let now = monotonicNanoseconds()
        let remaining = clock.deadline(intended: intended) - now
        guard remaining > 0 else {
            finished.append(clock.timedOutWaiting(request, intended: intended, sent: sent))
            return
        }
        // What is left of the request timeout (rounded up), or the request's own timeout if shorter.
        var timeout = Int((remaining + 999_999) / 1_000_000)
        if let own = request.timeout { timeout = min(timeout, max(1, Int(own.microseconds / 1000))) }
        let transfer: Transfer
        do {
            if let reused = free.popLast() {
                transfer = reused
            } else if let created = try Transfer(configuration: configuration, callbacks: multi.callbackTarget) {
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
        if clock.isLate(intended: intended, at: now) { lateStarts += 1 }
        transfer.intended = intended
        transfer.sent = sent
        let added = multi.add(transfer.easy)
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

    /// The result of a request that failed before it was sent (a setup call libcurl refused, named in
    /// `detail`): an `other` failure, received now.
    private func notSent(_ request: LoadRequest, intended: Int64, sent: Int64, detail: String) -> LoadResult {
        clock.unsent(request, intended: intended, sent: sent, error: .other, detail: detail + "; never sent")
    }

    /// Fails the waiting requests whose deadline has come, starts waiting ones on free connections, and
    /// hands over what finished. The queue is in intended order, so deadlines only grow along it and the
    /// expired ones are at its head (a priority request put ahead holds the rest until it starts, at the
    /// next free connection).
    func perform(now: Int64, into results: inout [LoadResult]) {
        while let head = waiting.first, clock.deadline(intended: head.intended) <= now {
            _ = waiting.popFirst()
            finished.append(clock.timedOutWaiting(head.request, intended: head.intended, sent: head.sent))
        }
        while active.count < activeCap, let next = waiting.popFirst() {
            begin(next.request, intended: next.intended, sent: next.sent)
        }
        drainFinished(into: &results)
    }

    private func drainFinished(into results: inout [LoadResult]) {
        guard !finished.isEmpty else { return }
        inFlight -= finished.count
        results.append(contentsOf: finished)
        finished.removeAll(keepingCapacity: true)
    }

    /// Ends every transfer in flight or waiting, reporting each as an `other` failure with `detail`.
    func cancelAll(detail: String, into results: inout [LoadResult]) {
        drainFinished(into: &results)
        let now = monotonicNanoseconds() - clock.runStart
        for transfer in Array(active.values) {
            finish(transfer, code: CURLE_ABORTED_BY_CALLBACK, received: now)
            finished[finished.count - 1].error = .other
            finished[finished.count - 1].detail = detail
        }
        while let next = waiting.popFirst() {
            finished.append(
                clock.unsent(next.request, intended: next.intended, sent: next.sent, error: .other, detail: detail)
            )
        }
        drainFinished(into: &results)
    }

    /// libcurl finished the transfer on `easy` with `code`: its result goes out with the next ``perform``.
    func done(_ transfer: Transfer, code: CURLcode) {
        finish(transfer, code: code, received: monotonicNanoseconds() - clock.runStart)
    }

    private func finish(_ transfer: Transfer, code: CURLcode, received: Int64) {
        finished.append(result(of: transfer, code: code, received: received))
        active[ObjectIdentifier(transfer)] = nil
        // A handle libcurl would not take back is still in the multi handle: it is never reused (the run
        // ends on the failure) and is cleaned up with the transfer.
        if multi.remove(transfer.easy) { free.append(transfer) }
    }

    private func result(of transfer: Transfer, code: CURLcode, received: Int64) -> LoadResult {
        let easy = transfer.easy
        var status = 0
        let statusCode = ps_curl_easy_getinfo_long(easy, CURLINFO_RESPONSE_CODE, &status)
        let wireStart =
            transfer.wireStartAbsolute == 0
            ? received : min(max(transfer.wireStartAbsolute - clock.runStart, transfer.sent), received)
        var error: LoadErrorClass?
        var detail = ""
        if code != CURLE_OK {
            let osErrno = osErrno(of: easy)
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
        return LoadResult(
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
    }
}
