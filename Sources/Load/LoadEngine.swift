internal import CCurl
internal import CPayStormShims
internal import Foundation
import Synchronization

#if canImport(Glibc)
internal import Glibc
#endif

/// The HTTP version the transport speaks.
public enum HTTPVersion: String, Sendable, Equatable, CaseIterable {
    /// HTTP/1.1 with keep-alive.
    case http1_1 = "1.1"
    /// HTTP/2 (prior knowledge on `http://`, ALPN on `https://`), multiplexed.
    case http2 = "2"
}

/// How the engine releases requests.
public enum LoadMode: Sendable, Equatable {
    /// Open loop: requests are released at the schedule's intended times, whatever the target does.
    case open(RateSchedule)
    /// Closed loop: `users` virtual users, each sending, waiting for its answer, thinking for
    /// `thinkTime`, and sending again, for `duration`.
    case closed(users: Int, thinkTime: Duration, duration: Duration)
}

/// A stream whose requests carry their own intended times (a simulated or replayed run), for
/// ``LoadEngine/run(timed:sink:tick:)``. Confined to the engine's thread: the engine calls it, and
/// the run's `sink` may add follow-up requests to it (a retry, a redelivery) from the same thread.
public protocol TimedRequestSource: AnyObject {
    /// The intended time (from the start of the run) of the next pending request, or nil when
    /// nothing is pending; the run ends when this is nil and nothing is in flight.
    func nextDue() -> Duration?
    /// Takes the request due at `intended`; nil when that slot sends nothing (it is still consumed).
    func take(_ intended: Duration) -> LoadRequest?
    /// The rate the schedule intends at `elapsed`, for the status line (requests per second).
    func intendedRate(at elapsed: Duration) -> Double
    /// Whether the request due at ``nextDue()`` can be taken now. A source still preparing it (a body being
    /// signed) says false rather than block: the engine then keeps its transfers moving and asks again within
    /// a millisecond, so a slow source never stalls the answers of the requests already in flight.
    var nextIsReady: Bool { get }
}

extension TimedRequestSource {
    /// Always ready: a source that prepares nothing ahead.
    public var nextIsReady: Bool { true }
}

/// Transport and pacing settings (setup values; failures after the start are data).
public struct LoadEngineConfiguration: Sendable, Equatable {
    /// Connections kept open to each host (keep-alive); further transfers wait for one.
    public var connectionsPerHost: Int
    /// Requests in flight at most; a send due while at the cap is recorded as missed.
    public var maxInFlight: Int
    /// Time allowed to connect (including TLS).
    public var connectTimeout: Duration
    /// Time allowed for a whole request, counted from its intended send time: a request still
    /// waiting for a connection at that deadline fails as a timeout without being sent, and one that
    /// starts late gets only what is left. So no request outlives its intended time plus this.
    public var totalTimeout: Duration
    /// HTTP/1.1 or HTTP/2.
    public var httpVersion: HTTPVersion
    /// A PEM file of CA certificates to trust for `https://` targets (nil: the system store).
    public var caFile: String?
    /// Whether response bodies are kept in results (their size is always counted).
    public var captureBodies: Bool
    /// Bodies longer than this are truncated in results.
    public var maxCapturedBodyBytes: Int
    /// A request that starts (goes on a connection, or to libcurl) later than this after its
    /// intended time counts as late, whether the engine or a wait for a connection delayed it.
    public var lateAfter: Duration
    /// How often `tick` is called during a run.
    public var tickInterval: Duration
    /// Send HTTP/1.1 as libcurl transfers instead of PayStorm's own framing over connections that
    /// libcurl makes (slower: libcurl 7.88 spends ~10 µs on each transfer; for comparison, or for
    /// a server the framing does not suit). HTTP/2 always uses libcurl transfers.
    public var libcurlTransfers: Bool

    /// Creates a configuration; the defaults suit a loopback or staging target.
    public init(
        connectionsPerHost: Int = 64,
        maxInFlight: Int = 4096,
        connectTimeout: Duration = .seconds(5),
        totalTimeout: Duration = .seconds(30),
        httpVersion: HTTPVersion = .http1_1,
        caFile: String? = nil,
        captureBodies: Bool = true,
        maxCapturedBodyBytes: Int = 1 << 20,
        lateAfter: Duration = .milliseconds(10),
        tickInterval: Duration = .seconds(1),
        libcurlTransfers: Bool = false
    ) {
        self.connectionsPerHost = connectionsPerHost
        self.maxInFlight = maxInFlight
        self.connectTimeout = connectTimeout
        self.totalTimeout = totalTimeout
        self.httpVersion = httpVersion
        self.caFile = caFile
        self.captureBodies = captureBodies
        self.maxCapturedBodyBytes = maxCapturedBodyBytes
        self.lateAfter = lateAfter
        self.tickInterval = tickInterval
        self.libcurlTransfers = libcurlTransfers
    }

    /// Checks the values.
    /// - Throws: ``LoadConfigurationError`` naming the first bad value.
    public func validate() throws(LoadConfigurationError) {
        guard connectionsPerHost >= 1 else { throw LoadConfigurationError("connections must be at least 1") }
        guard maxInFlight >= 1 else { throw LoadConfigurationError("the in-flight cap must be at least 1") }
        guard connectTimeout > .zero, totalTimeout > .zero else {
            throw LoadConfigurationError("timeouts must be above 0")
        }
        if let caFile, !FileManager.default.isReadableFile(atPath: caFile) {
            throw LoadConfigurationError("cannot read the CA file \(caFile)")
        }
    }
}

/// Counters of one run, as of one moment (given to `tick` and returned at the end).
public struct LoadEngineStats: Sendable, Equatable {
    /// Time since the run started.
    public var elapsed: Duration = .zero
    /// The schedule's intended rate now (requests per second; 0 in closed mode).
    public var intendedRate: Double = 0
    /// Requests whose intended time has come (sent plus missed).
    public var scheduled = 0
    /// Requests handed to the transport.
    public var sent = 0
    /// Requests not sent because the in-flight cap was reached.
    public var missed = 0
    /// Requests that started later than `lateAfter` after their intended time.
    public var late = 0
    /// Results delivered (including missed ones).
    public var completed = 0
    /// Requests in flight now.
    public var inFlight = 0
    /// The longest delay, since the previous tick, between a request's intended time and its release by the
    /// engine's thread: how far the engine itself (or a source that made it wait) fell behind the schedule.
    /// Unlike ``late`` it leaves out waits for a connection, which a slow target causes.
    public var releaseLag: Duration = .zero
    /// Whether the request source returned nil (ran dry) before the schedule ended.
    public var sourceEnded = false
    /// Whether ``LoadEngine/stop()`` ended the run early.
    public var stopped = false
    /// Whether nothing more will be released and the run only waits for the requests in flight
    /// (each ends by its intended time plus the request timeout).
    public var draining = false
}

/// Why the engine could not start.
public struct LoadEngineError: Error, Sendable, CustomStringConvertible {
    /// One line naming the problem.
    public var message: String

    public var description: String { message }
}

/// The open-loop load engine: a pacer and a libcurl multi transport on one thread.
///
/// ``run(_:source:sink:tick:)`` blocks the calling thread for the run (call it from a dedicated
/// thread, for example with ``onDedicatedThread(name:_:)``). Requests are pulled from `source` at their
/// intended times, never earlier; every pulled request yields exactly one ``LoadResult`` to `sink`,
/// including failures and missed sends. `sink` and `tick` run on the engine's thread, one at a
/// time, so they can own metrics without locks; keep them short.
///
/// ```swift
/// let engine = try LoadEngine(LoadEngineConfiguration(connectionsPerHost: 32))
/// let stats = engine.run(.open(.constant(500, for: .seconds(10)))) { index, _ in
///     LoadRequest(id: index, kind: "webhook", method: "POST", url: url, body: body)
/// } sink: { result in
///     recorder.record(result)
/// } tick: { stats in
///     recorder.tick(stats)
/// }
/// ```
public final class LoadEngine: Sendable {
    /// The settings of every run.
    public let configuration: LoadEngineConfiguration
    private let stopRequested = Atomic<Bool>(false)

    /// Creates an engine.
    /// - Throws: ``LoadConfigurationError`` for bad settings, ``LoadEngineError`` when libcurl
    ///   cannot start.
    public init(_ configuration: LoadEngineConfiguration = LoadEngineConfiguration()) throws {
        try configuration.validate()
        self.configuration = configuration
        guard Self.globalInit == CURLE_OK else {
            throw LoadEngineError(message: "libcurl failed to initialise (code \(Self.globalInit.rawValue))")
        }
    }

    private static let globalInit: CURLcode = curl_global_init(Int(CURL_GLOBAL_ALL))

    /// Asks a running ``run(_:source:sink:tick:)`` to stop releasing requests and return soon;
    /// requests still in flight are reported as `other` ("run stopped"). Safe from any thread
    /// or a signal-handling task.
    public func stop() {
        stopRequested.store(true, ordering: .relaxed)
    }

    /// Runs `body` on a new thread and returns its value; lets async code run the blocking
    /// ``run(_:source:sink:tick:)`` without holding a cooperative thread, with the recorder
    /// created, fed and finished on that one thread.
    ///
    /// ```swift
    /// let summary = await LoadEngine.onDedicatedThread {
    ///     let recorder = try! LoadRecorder(directory: out)
    ///     let stats = engine.run(mode) { index, _ in source(index) } sink: { recorder.record($0) } tick: { recorder.tick($0) }
    ///     return recorder.finish(stats)
    /// }
    /// ```
    public static func onDedicatedThread<T: Sendable>(
        name: String = "paystorm-load",
        _ body: @escaping @Sendable () -> T
    ) async -> T {
        await withCheckedContinuation { continuation in
            let thread = Thread { continuation.resume(returning: body()) }
            thread.name = name
            thread.stackSize = 1 << 22
            thread.start()
        }
    }

    /// Runs `mode` on the calling thread until the schedule ends, the source returns nil, or
    /// ``stop()`` is called, then waits for the requests in flight: at most the request timeout
    /// (``LoadEngineConfiguration/totalTimeout``) after the last intended time.
    /// - Parameters:
    ///   - mode: open-loop schedule or closed-loop users.
    ///   - source: gives the request for arrival `index` (from 0) due at `intended`; nil ends the run.
    ///   - sink: receives every result, once, on this thread.
    ///   - tick: receives the counters every ``LoadEngineConfiguration/tickInterval`` and once at the end.
    /// - Returns: the final counters.
    public func run(
        _ mode: LoadMode,
        source: (_ index: Int, _ intended: Duration) -> LoadRequest?,
        sink: (LoadResult) -> Void,
        tick: (LoadEngineStats) -> Void = { _ in }
    ) -> LoadEngineStats {
        guard var loop = makeLoop(mode) else { return Self.stoppedStats }
        return loop.run(source: source, sink: sink, tick: tick)
    }

    /// The counters of a run whose transport could not start.
    private static var stoppedStats: LoadEngineStats {
        var stats = LoadEngineStats()
        stats.stopped = true
        return stats
    }

    /// A fresh loop on a new transport (nil when libcurl cannot make one), with the stop flag cleared.
    private func makeLoop(_ mode: LoadMode) -> EngineLoop? {
        stopRequested.store(false, ordering: .relaxed)
        guard let transport = Transport(configuration) else { return nil }
        return EngineLoop(
            configuration: configuration,
            mode: mode,
            transport: transport,
            stopRequested: { self.stopRequested.load(ordering: .relaxed) }
        )
    }

    /// Runs a stream whose requests carry their own intended times, on the calling thread, until
    /// the source has nothing pending and nothing is in flight, or ``stop()`` is called.
    ///
    /// A slow target never delays the stream: sends past their time count as late, sends over the
    /// in-flight cap as missed, exactly as in open-loop mode.
    /// - Parameters:
    ///   - source: the timed stream; the sink may add to it.
    ///   - sink: receives every result, once, on this thread.
    ///   - tick: receives the counters every ``LoadEngineConfiguration/tickInterval`` and once at the end.
    /// - Returns: the final counters.
    public func run(
        timed source: some TimedRequestSource,
        sink: (LoadResult) -> Void,
        tick: (LoadEngineStats) -> Void = { _ in }
    ) -> LoadEngineStats {
        guard var loop = makeLoop(.closed(users: 0, thinkTime: .zero, duration: .zero)) else {
            return Self.stoppedStats
        }
        loop.timed = source
        return loop.run(source: { _, intended in source.take(intended) }, sink: sink, tick: tick)
    }
}

/// The monotonic clock in nanoseconds.
@inline(__always)
func monotonicNanoseconds() -> Int64 {
    var spec = timespec()
    clock_gettime(CLOCK_MONOTONIC, &spec)
    return Int64(spec.tv_sec) * 1_000_000_000 + Int64(spec.tv_nsec)
}

/// The state of one run; lives on the engine's thread.
struct EngineLoop {
    let configuration: LoadEngineConfiguration
    let mode: LoadMode
    let transport: Transport
    let stopRequested: () -> Bool

    var stats = LoadEngineStats()
    var pacer: Pacer?
    /// Timed mode: the stream that gives intended times (no pacer, no users).
    var timed: (any TimedRequestSource)?
    var isClosed: Bool { pacer == nil && timed == nil }
    /// Closed mode: intended times of users ready to send (FIFO; think time is constant).
    var readyUsers = FIFOQueue<Int64>()
    var closedEnd: Int64 = 0
    var nextIndex = 0

    init(
        configuration: LoadEngineConfiguration,
        mode: LoadMode,
        transport: Transport,
        stopRequested: @escaping () -> Bool
    ) {
        self.configuration = configuration
        self.mode = mode
        self.transport = transport
        self.stopRequested = stopRequested
        switch mode {
        case .open(let schedule):
            pacer = Pacer(schedule: schedule)
        case .closed(let users, _, let duration):
            for _ in 0..<max(users, 0) { readyUsers.append(0) }
            closedEnd = duration.nanoseconds
        }
    }

    private var pendingDue: Int64?

    /// The next intended time (ns from start), or nil when nothing more will be released.
    mutating func nextDue() -> Int64? {
        if let pendingDue { return pendingDue }
        if let timed {
            if let next = timed.nextDue() {
                pendingDue = next.nanoseconds
            }
        } else if pacer != nil {
            if let next = pacer!.next() {
                pendingDue = next.nanoseconds
            }
        } else if let due = readyUsers.first, due < closedEnd {
            pendingDue = due
        }
        return pendingDue
    }

    mutating func consumeDue() {
        pendingDue = nil
        if isClosed { _ = readyUsers.popFirst() }
    }

    mutating func run(
        source: (Int, Duration) -> LoadRequest?,
        sink: (LoadResult) -> Void,
        tick: (LoadEngineStats) -> Void
    ) -> LoadEngineStats {
        let start = monotonicNanoseconds()
        transport.runStart = start
        let tickNanos = max(configuration.tickInterval.microseconds * 1000, 1_000_000)
        var nextTick = tickNanos
        var releasing = true
        // Reset at each tick, so each tick reports the worst release of its own second.
        var releaseLag: Int64 = 0
        // Set when a timed source's next request is due but not ready: the wait below is then short.
        var sourceNotReady = false
        let thinkNanos: Int64
        if case .closed(_, let think, _) = mode { thinkNanos = think.microseconds * 1000 } else { thinkNanos = 0 }

        var completions: [LoadResult] = []

        let timeoutNanos = Int64(configuration.totalTimeout.seconds * 1e9)
        while true {
            var now = monotonicNanoseconds() - start
            if stopRequested() && releasing {
                releasing = false
                stats.stopped = true
            }
            // Release every due request (bounded per pass so that I/O keeps flowing).
            var released = 0
            let passStart = now
            sourceNotReady = false
            while releasing, released < 512, let due = nextDue(), due <= now {
                if released > 0 {
                    // Read again for each release: a source that took long over the previous one (or a busy
                    // machine) must show in the lag of the next.
                    now = monotonicNanoseconds() - start
                    // A pass that has worked this long lets the answers in flight through before releasing more:
                    // under overload a source's slow releases (missed ones included) must not starve the transport.
                    if now - passStart > Self.releasePassNanos { break }
                }
                if let timed, !timed.nextIsReady {
                    // Asked again later: what is due then may be something else (a retry that came due).
                    pendingDue = nil
                    sourceNotReady = true
                    break
                }
                consumeDue()
                released += 1
                releaseLag = max(releaseLag, now - due)
                let index = nextIndex
                nextIndex += 1
                let intended = Duration.nanoseconds(due)
                guard let request = source(index, intended) else {
                    // A timed slot may send nothing; only the other modes end on nil.
                    if timed != nil { continue }
                    stats.sourceEnded = true
                    releasing = false
                    break
                }
                stats.scheduled += 1
                // Released after its whole timeout has passed, the request could only time out unsent: the
                // harness fell behind its own schedule, which is not the target's failure, so it is missed.
                let behind = now - due
                let overCap = transport.inFlight >= configuration.maxInFlight
                if overCap || behind >= timeoutNanos || request.missedReason != nil {
                    stats.missed += 1
                    stats.completed += 1
                    sink(
                        LoadResult(
                            id: request.id,
                            kind: request.kind,
                            intended: intended,
                            sent: intended,
                            wireStart: intended,
                            received: intended,
                            status: 0,
                            error: .missed,
                            detail: request.missedReason
                                ?? (overCap
                                    ? "in-flight cap \(configuration.maxInFlight) reached"
                                    : String(
                                        format: "the harness released it %.1f s late, past the request timeout",
                                        Double(behind) / 1e9
                                    ))
                        )
                    )
                    if isClosed { readyUsers.append(due + thinkNanos) }
                    continue
                }
                transport.submit(request, intended: due, sent: now)
                stats.sent += 1
            }
            // Open loop ends with the schedule; closed loop when no user is due and none is waiting.
            if releasing && nextDue() == nil && (pacer != nil || transport.inFlight == 0) { releasing = false }

            transport.perform(into: &completions)
            for result in completions {
                stats.completed += 1
                if isClosed {
                    readyUsers.append(result.received.microseconds * 1000 + thinkNanos)
                }
                sink(result)
            }
            completions.removeAll(keepingCapacity: true)
            stats.inFlight = transport.inFlight
            stats.late = transport.lateStarts
            stats.draining = !releasing

            now = monotonicNanoseconds() - start
            if now >= nextTick {
                stats.elapsed = .nanoseconds(now)
                stats.intendedRate = currentRate(at: now)
                stats.releaseLag = .nanoseconds(releaseLag)
                tick(stats)
                releaseLag = 0
                nextTick = (now / tickNanos + 1) * tickNanos
            }
            if !releasing && transport.inFlight == 0 { break }
            if stopRequested() && !releasing {
                transport.cancelAll(into: &completions)
                for result in completions {
                    stats.completed += 1
                    sink(result)
                }
                completions.removeAll()
                break
            }
            // Wait for I/O, the next due time or the next tick, whichever is first.
            var wait = nextTick - now
            if sourceNotReady {
                // Its due time has passed: waiting for it would spin; a millisecond lets the source catch up.
                wait = min(wait, 1_000_000)
            } else if releasing, let due = nextDue() {
                wait = min(wait, due - now)
            }
            wait = min(wait, 50_000_000)
            // Sockets are read only here, so this runs even with requests overdue (a zero wait only polls):
            // skipping it whenever the engine was behind left every answer unread, the in-flight cap full and
            // every further release missed, a collapse instead of a slowdown.
            transport.wait(nanoseconds: max(wait, 0))
        }
        stats.inFlight = transport.inFlight
        stats.elapsed = .nanoseconds(monotonicNanoseconds() - start)
        stats.intendedRate = 0
        stats.releaseLag = .nanoseconds(releaseLag)
        tick(stats)
        return stats
    }

    /// The longest a release pass runs before the engine serves its transfers (2 ms).
    static let releasePassNanos: Int64 = 2_000_000

    func currentRate(at now: Int64) -> Double {
        if let timed { return timed.intendedRate(at: .nanoseconds(now)) }
        if case .open(let schedule) = mode { return schedule.rate(at: .nanoseconds(now)) }
        return 0
    }
}
