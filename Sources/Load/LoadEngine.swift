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
    /// Requests the source booked as missed itself since the last call, without handing them to the engine
    /// (an overloaded run's deliveries shed in bulk, far cheaper than one missed result each); the engine
    /// counts them as scheduled and missed. Asked after every ``take(_:)``.
    func takeBookedMissed() -> Int
    /// A descriptor that turns readable when the source has something to release before ``nextDue()`` said (an
    /// answer from a helper process it waits on), or nil. The engine watches it beside its sockets, so it wakes at
    /// once rather than at its next deadline, reads it to clear it (a non-blocking pipe) and asks ``nextDue()`` again.
    var wakeDescriptor: Int32? { get }
}

extension TimedRequestSource {
    /// Always ready: a source that prepares nothing ahead.
    public var nextIsReady: Bool { true }
    /// None: a source that books nothing itself.
    public func takeBookedMissed() -> Int { 0 }
    /// None: a source whose due times are known in advance.
    public var wakeDescriptor: Int32? { nil }
}

/// Transport and pacing settings (setup values; failures after the start are data).
public struct LoadEngineConfiguration: Sendable, Equatable {
    /// Connections kept open to each host (keep-alive); further transfers wait for one.
    public var connectionsPerHost: Int
    /// Requests in flight at most; a send due while at the cap is recorded as missed.
    public var maxInFlight: Int
    /// How far past ``maxInFlight`` priority requests (``LoadRequest/isPriority``, the probes a verdict
    /// rests on) may go: an eighth of the cap, at least 1.
    public var priorityReserve: Int { max(1, maxInFlight / 8) }
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
    /// Why the run could not start (the transport could not be set up, libcurl's refusal named) or stopped
    /// early on a libcurl failure (the call and libcurl's message named; the requests in flight then end as
    /// `other` failures), or nil.
    public var failure: String?
}

/// Why the engine could not start, or could not go on with a run.
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
    private let cancelled = Atomic<Bool>(false)

    /// Creates an engine, and sets up a transport and its handles once so that an option libcurl refuses
    /// (HTTP/2 from a libcurl built without it, say) is an error now, naming the option, rather than in the run.
    /// - Throws: ``LoadConfigurationError`` for bad settings, ``LoadEngineError`` when libcurl
    ///   cannot start or refuses a setup option.
    public init(_ configuration: LoadEngineConfiguration = LoadEngineConfiguration()) throws {
        try configuration.validate()
        self.configuration = configuration
        guard Self.globalInit == CURLE_OK else {
            throw LoadEngineError(message: "libcurl failed to initialise (code \(Self.globalInit.rawValue))")
        }
        try Transport(configuration).checkSetup()
    }

    private static let globalInit: CURLcode = curl_global_init(Int(CURL_GLOBAL_ALL))

    /// Asks a running ``run(_:source:sink:tick:)`` to stop releasing requests and return soon;
    /// requests still in flight are reported as `other` ("run stopped"). Safe from any thread
    /// or a signal-handling task.
    public func stop() {
        stopRequested.store(true, ordering: .relaxed)
    }

    /// Stops the run in progress as ``stop()`` does, and every later run as soon as it starts (its requests
    /// reported as `other`, "run stopped"): for a command interrupted between two runs, whose next run must not
    /// clear the stop. Safe from any thread.
    public func cancel() {
        cancelled.store(true, ordering: .relaxed)
        stopRequested.store(true, ordering: .relaxed)
    }

    /// Whether ``cancel()`` was called.
    public var isCancelled: Bool { cancelled.load(ordering: .relaxed) }

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
        switch makeLoop(Release(mode)) {
        case .success(var loop): return loop.run(source: source, sink: sink, tick: tick)
        case .failure(let error): return Self.stoppedStats(error)
        }
    }

    /// The counters of a run whose transport could not start.
    private static func stoppedStats(_ error: LoadEngineError) -> LoadEngineStats {
        var stats = LoadEngineStats()
        stats.stopped = true
        stats.failure = error.message
        return stats
    }

    /// A fresh loop on a new transport, with the stop flag cleared.
    private func makeLoop(_ release: Release) -> Result<EngineLoop, LoadEngineError> {
        stopRequested.store(false, ordering: .relaxed)
        let transport: Transport
        do {
            transport = try Transport(configuration)
        } catch {
            return .failure(error)
        }
        return .success(
            EngineLoop(
                configuration: configuration,
                release: release,
                transport: transport,
                stopRequested: {
                    self.stopRequested.load(ordering: .relaxed) || self.cancelled.load(ordering: .relaxed)
                }
            )
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
        switch makeLoop(.timed(source)) {
        case .success(var loop):
            return loop.run(source: { _, intended in source.take(intended) }, sink: sink, tick: tick)
        case .failure(let error): return Self.stoppedStats(error)
        }
    }
}

/// The monotonic clock in nanoseconds.
@inline(__always)
func monotonicNanoseconds() -> Int64 {
    var spec = timespec()
    clock_gettime(CLOCK_MONOTONIC, &spec)
    return Int64(spec.tv_sec) * 1_000_000_000 + Int64(spec.tv_nsec)
}
