/// One HTTP request for the engine to send at its intended time.
///
/// The engine never looks inside: any source (a simulation, a file, a fixed body) can feed it.
public struct LoadRequest: Sendable, Equatable {
    /// The caller's identifier, echoed in the ``LoadResult``.
    public var id: Int
    /// A label such as `webhook` or `device`; metrics are kept per kind.
    public var kind: String
    /// `GET`, `POST`, `PUT`, `DELETE`, `HEAD`, … (sent as given; HTTP methods are case-sensitive)
    public var method: String
    /// The absolute `http://` or `https://` URL.
    public var url: String
    /// Header lines as name/value pairs (sent in order).
    public var headers: [(name: String, value: String)]
    /// The body; kept alive by the engine until its transfer ends.
    public var body: [UInt8]
    /// A total timeout for this request alone (a network-timeout fault); nil uses the engine's.
    public var timeout: Duration?
    /// Hang up as soon as the response starts: the target has processed the request, but the caller
    /// never sees its answer (a lost response). The result's error is ``LoadErrorClass/hungUp``.
    public var hangUpOnResponse = false
    /// Reset the connection (a TCP RST) after writing this many bytes of the request, head and body
    /// together: the target sees a cut request, never a whole one (a network-reset fault). The
    /// result's error is ``LoadErrorClass/reset``. libcurl transfers (HTTP/2, `libcurlTransfers`)
    /// cannot cut a request, so there the request times out after 200 µs instead.
    public var resetAfterBytes: Int?
    /// Set when the source already knows the request cannot go out in time (it shed it rather than fall
    /// further behind): the engine records it as missed with this detail and sends nothing.
    public var missedReason: String?
    /// A read the caller's verdict rests on (a probe of the target's state), not load: it may go past the
    /// in-flight cap by ``LoadEngineConfiguration/priorityReserve`` and waits for a connection ahead of the
    /// other requests, so an overloaded harness sheds its own sends before its measurements.
    public var isPriority = false

    /// Creates a request.
    public init(
        id: Int,
        kind: String = "default",
        method: String = "GET",
        url: String,
        headers: [(name: String, value: String)] = [],
        body: [UInt8] = []
    ) {
        self.id = id
        self.kind = kind
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
    }

    public static func == (lhs: LoadRequest, rhs: LoadRequest) -> Bool {
        lhs.id == rhs.id && lhs.kind == rhs.kind && lhs.method == rhs.method && lhs.url == rhs.url
            && lhs.body == rhs.body && lhs.headers.elementsEqual(rhs.headers, by: { $0 == $1 })
            && lhs.timeout == rhs.timeout && lhs.hangUpOnResponse == rhs.hangUpOnResponse
            && lhs.resetAfterBytes == rhs.resetAfterBytes && lhs.missedReason == rhs.missedReason
            && lhs.isPriority == rhs.isPriority
    }
}

/// Why a request got no HTTP response. An open set; the raw value is what reports print.
public struct LoadErrorClass: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible {
    public var rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    /// The connect or total timeout expired.
    public static let timeout = LoadErrorClass(rawValue: "timeout")
    /// The connection was reset or closed before a full response.
    public static let reset = LoadErrorClass(rawValue: "reset")
    /// The target refused the connection.
    public static let refused = LoadErrorClass(rawValue: "refused")
    /// The host name did not resolve.
    public static let dns = LoadErrorClass(rawValue: "dns")
    /// The TLS handshake or certificate verification failed.
    public static let tls = LoadErrorClass(rawValue: "tls")
    /// Handed to the transport, but its timeout ran out before it went on a connection (every connection
    /// busy, or the connect itself): it never reached the target, so it is not counted as sent.
    public static let unsent = LoadErrorClass(rawValue: "unsent")
    /// Never sent: the in-flight cap was reached at the intended time (an open-loop "missed" send).
    public static let missed = LoadErrorClass(rawValue: "missed")
    /// The caller hung up when the response started (``LoadRequest/hangUpOnResponse``).
    public static let hungUp = LoadErrorClass(rawValue: "hung-up")
    /// Any other transport failure (see ``LoadResult/detail``).
    public static let other = LoadErrorClass(rawValue: "other")

    /// Every class PayStorm produces, in report order.
    public static let all: [LoadErrorClass] = [
        .timeout, .reset, .refused, .dns, .tls, .missed, .hungUp, .other, .unsent,
    ]

    /// Whether a request failing so never reached the server: refused, unresolved, timed out before it went on
    /// a connection, or missed by the harness. Any other failure may come after the server read the request.
    public var neverSent: Bool { self == .refused || self == .dns || self == .missed || self == .unsent }

    /// A timeout of a request that never went on a connection is `unsent`; any other class is kept.
    func unlessNeverOnTheWire(_ wentOnTheWire: Bool) -> LoadErrorClass {
        self == .timeout && !wentOnTheWire ? .unsent : self
    }

    public var description: String { rawValue }
}

/// The outcome of one ``LoadRequest``; failures are data, never thrown.
///
/// Times are offsets from the start of the run on the monotonic clock.
public struct LoadResult: Sendable, Equatable {
    /// The request's ``LoadRequest/id``.
    public var id: Int
    /// The request's ``LoadRequest/kind``.
    public var kind: String
    /// When the schedule wanted the request sent.
    public var intended: Duration
    /// When the engine handed it to the transport (equal to `intended` for a missed send).
    public var sent: Duration
    /// When the request went on a connection: `sent` plus any wait for a free connection, DNS,
    /// connect and TLS (`received` when it never did).
    public var wireStart: Duration
    /// When the response ended or the failure was seen.
    public var received: Duration
    /// The HTTP status, or 0 when there was no response.
    public var status: Int
    /// The response body (empty unless bodies are captured).
    public var body: [UInt8]
    /// Response body size in bytes (counted even when not captured).
    public var bodyBytes: Int
    /// Why there was no response; nil when a status was received.
    public var error: LoadErrorClass?
    /// The transport's own message for a failure (e.g. libcurl's), empty otherwise.
    public var detail: String
    /// Whether the transport sent the request a second time, on a new connection, because the kept-alive
    /// connection it first went on closed without answering (libcurl does the same). The server may have read
    /// both copies: the answer, or the failure, is the second copy's.
    public var resent: Bool
    /// Seconds the response's `Retry-After` header asked the client to wait (an HTTP date is counted from
    /// when it arrived), nil without one: a backend that limits its rate says when to come back.
    public var retryAfter: Int?

    /// Creates a result.
    public init(
        id: Int,
        kind: String,
        intended: Duration,
        sent: Duration,
        wireStart: Duration,
        received: Duration,
        status: Int,
        body: [UInt8] = [],
        bodyBytes: Int = 0,
        error: LoadErrorClass? = nil,
        detail: String = "",
        resent: Bool = false,
        retryAfter: Int? = nil
    ) {
        self.id = id
        self.kind = kind
        self.intended = intended
        self.sent = sent
        self.wireStart = wireStart
        self.received = received
        self.status = status
        self.body = body
        self.bodyBytes = bodyBytes
        self.error = error
        self.detail = detail
        self.resent = resent
        self.retryAfter = retryAfter
    }

    /// Latency from the intended send time: what a user of the schedule waited (no coordinated
    /// omission).
    public var latency: Duration { received - intended }

    /// Service time: from the first byte on the wire to the end of the response, what a closed-loop
    /// tool would report.
    public var serviceTime: Duration { received - wireStart }

    /// Whether a response with a 2xx status arrived.
    public var isSuccess: Bool { error == nil && (200..<300).contains(status) }
}

extension Duration {
    /// Whole microseconds (truncated), for histograms.
    public var microseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1_000_000 + attoseconds / 1_000_000_000_000
    }

    /// Whole nanoseconds (truncated), for the engine's monotonic arithmetic.
    var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }

    /// Seconds as a `Double`.
    public var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) * 1e-18
    }
}
