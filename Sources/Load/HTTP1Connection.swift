internal import CCurl

/// A request waiting for, or on, a fast-path connection.
///
/// A class: it moves from the submit to its pool's queue, to a connection and to its result, and a reference
/// moves with one retain where the request's strings and arrays would take one each.
final class HTTP1Pending {
    let request: LoadRequest
    let target: HTTP1Target
    let intended: Int64
    let sent: Int64
    /// When it must be answered (monotonic): its intended time plus the request timeout.
    let deadline: Int64
    /// Whether it was already sent once on a kept-alive connection that turned out dead.
    var retried = false

    init(request: consuming LoadRequest, target: HTTP1Target, intended: Int64, sent: Int64, deadline: Int64) {
        self.request = request
        self.target = target
        self.intended = intended
        self.sent = sent
        self.deadline = deadline
    }
}

/// One kept-alive connection of the fast path: libcurl makes it (`CURLOPT_CONNECT_ONLY`: DNS,
/// connect timeout, TLS with the configured CA), PayStorm writes the requests and reads the
/// responses. Confined to the engine's thread.
final class HTTP1Connection {
    unowned let pool: HTTP1Pool
    let easy: UnsafeMutableRawPointer
    /// The protocol's state and decisions; this class holds only the resources they act on.
    var machine = HTTP1ConnectionStateMachine()
    /// Whether the handle is in the multi handle (connecting or connected) and counted open by its pool.
    var isOpen = false
    var socket: Int32 = -1
    var current: HTTP1Pending?
    /// The request head (and, over TLS, the body); a plain socket sends the body from the request.
    var out: [UInt8] = []
    /// The body sent after `out`, kept alive until the request ends.
    var body: [UInt8] = []
    var watchingWrites = false
    var response: [UInt8] = []
    var responseBytes = 0
    /// Monotonic time of the first byte written for the current request.
    var wireStart: Int64 = 0
    var deadline = Int64.max

    /// Makes a handle that connects to the pool's origin.
    /// - Throws: ``CurlSetupError`` when libcurl refuses an option; nil when it cannot make a handle.
    init?(
        pool: HTTP1Pool,
        configuration: LoadEngineConfiguration,
        callbacks: UnsafeMutableRawPointer
    ) throws(CurlSetupError) {
        guard let easy = curl_easy_init() else { return nil }
        self.pool = pool
        self.easy = easy
        let setup = CurlEasySetup(easy: easy)
        try setCommonOptions(
            setup,
            owner: Unmanaged.passUnretained(self).toOpaque(),
            configuration: configuration,
            callbacks: callbacks
        )
        try setup.set(CURLOPT_CONNECT_ONLY, 1)
        try setup.set(CURLOPT_FRESH_CONNECT, 1)
        // libcurl prunes idle cached connections after 118 s; these are ours while open.
        try setup.set(CURLOPT_MAXAGE_CONN, Int(Int32.max))
        // ALPN offers http/1.1 only: this connection speaks nothing else.
        try setup.set(CURLOPT_HTTP_VERSION, CURL_HTTP_VERSION_1_1)
        try setup.set(CURLOPT_URL, string: pool.origin + "/")
    }

    deinit { curl_easy_cleanup(easy) }
}

/// The fast-path connections to one origin, capped at the configured count, and the requests
/// waiting for one of them (FIFO).
final class HTTP1Pool {
    let origin: String
    let isTLS: Bool
    /// Every connection object made for this origin (at most the cap), open or not.
    var all: [HTTP1Connection] = []
    /// Open connections with nothing in flight (most recently used last).
    var idle: [HTTP1Connection] = []
    /// Closed connections whose handles can connect again.
    var spare: [HTTP1Connection] = []
    /// Connections open or connecting.
    var open = 0
    var connecting = 0
    private var waiting = FIFOQueue<HTTP1Pending>()

    init(origin: String, isTLS: Bool) {
        self.origin = origin
        self.isTLS = isTLS
    }

    var waitingCount: Int { waiting.count }

    /// The deadline of the next request to start (the one waiting longest), nil when none waits.
    var firstDeadline: Int64? { waiting.first?.deadline }

    /// Queues a request: last, or first when it is a priority request (a probe the verdict rests on).
    /// Others wait in deadline order (a request released late may come due before those queued ahead of it), so
    /// the head's deadline is the next one and no request expires unnoticed behind it.
    func enqueue(_ pending: HTTP1Pending) {
        if pending.request.isPriority {
            waiting.prepend(pending)
        } else {
            waiting.append(pending) { !$0.request.isPriority && $0.deadline > pending.deadline }
        }
    }

    /// Puts a request back at the head (a retry goes first).
    func requeue(_ pending: HTTP1Pending) { waiting.prepend(pending) }

    func dequeue() -> HTTP1Pending? { waiting.popFirst() }
}
