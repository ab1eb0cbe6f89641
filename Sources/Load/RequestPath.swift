/// One way of carrying requests to the target: libcurl transfers (``CurlTransfers``) or PayStorm's own
/// HTTP/1.1 framing on connections libcurl makes (``HTTP1Path``). The ``Transport`` owns the epoll loop and
/// the pacing timer and drives its paths through this protocol; a path owns its requests from `submit` until
/// their result leaves through `perform` or `cancelAll`, and counts them in flight until then.
protocol RequestPath: AnyObject {
    /// Takes a request (it counts in flight from now on).
    /// - Returns: false when this path cannot carry it (the request is not taken), so another path must.
    func submit(_ request: consuming LoadRequest, intended: Int64, sent: Int64) -> Bool

    /// Reacts to epoll `events` on `socket`.
    /// - Returns: false when the socket is not one this path watches itself.
    func handle(socket: Int32, events: UInt32) -> Bool

    /// Fails what is past its deadline, starts what can start, and appends the results that finished.
    func perform(now: Int64, into results: inout [LoadResult])

    /// Ends every request in flight or waiting, each reported as an `other` failure with `detail`.
    func cancelAll(detail: String, into results: inout [LoadResult])

    /// The earliest monotonic time the loop must wake for this path's deadlines (`Int64.max` for none).
    var nextDeadline: Int64 { get }

    /// Requests taken and not yet handed back.
    var inFlight: Int { get }

    /// Requests started later than `lateAfter` after their intended time.
    var lateStarts: Int { get }

    /// The run's start on the monotonic clock (results are offsets from it).
    var runStart: Int64 { get set }
}

/// The times both paths count a request by: its deadline runs from its intended time, queueing included.
struct RequestClock {
    /// The run's start on the monotonic clock (results are offsets from it); set when the run starts.
    var runStart: Int64 = 0
    /// The request timeout in ns, counted from each request's intended time.
    let timeoutNanos: Int64
    /// `lateAfter` in ns.
    let lateNanos: Int64

    init(_ configuration: LoadEngineConfiguration) {
        timeoutNanos = configuration.totalTimeout.nanoseconds
        lateNanos = configuration.lateAfter.nanoseconds
    }

    /// The monotonic time by which a request intended at `intended` (ns from the run's start) must
    /// be answered.
    @inline(__always)
    func deadline(intended: Int64) -> Int64 { runStart + intended + timeoutNanos }

    /// Whether a start at `now` comes more than `lateAfter` after the intended time.
    @inline(__always)
    func isLate(intended: Int64, at now: Int64) -> Bool { now - runStart - intended > lateNanos }

    /// A result for a request that ends now without being sent: `error` with `detail`.
    func unsent(
        _ request: LoadRequest,
        intended: Int64,
        sent: Int64,
        error: LoadErrorClass,
        detail: String
    ) -> LoadResult {
        let received = monotonicNanoseconds() - runStart
        return LoadResult(
            id: request.id,
            kind: request.kind,
            intended: .nanoseconds(intended),
            sent: .nanoseconds(sent),
            wireStart: .nanoseconds(received),
            received: .nanoseconds(received),
            status: 0,
            error: error,
            detail: detail
        )
    }

    /// The result of a request whose deadline came while it still waited for a connection: a
    /// timeout, never sent.
    func timedOutWaiting(_ request: LoadRequest, intended: Int64, sent: Int64) -> LoadResult {
        unsent(
            request,
            intended: intended,
            sent: sent,
            error: .unsent,
            detail: "still waiting for a connection when the \(timeoutNanos / 1_000_000) ms request timeout, "
                + "counted from its intended time, ran out; never sent"
        )
    }
}
