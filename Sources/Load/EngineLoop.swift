internal import Foundation

/// What releases a run's requests: the two public modes, and a stream that carries its own intended times.
enum Release {
    /// Open loop: the pacer's intended times.
    case open(RateSchedule)
    /// Closed loop: each user sends again `thinkTime` after its answer, until `duration`.
    case closed(users: Int, thinkTime: Duration, duration: Duration)
    /// Timed: the source's intended times; the run ends when it has nothing pending and nothing is in flight
    /// (its sink may add follow-ups while requests are in flight).
    case timed(any TimedRequestSource)

    init(_ mode: LoadMode) {
        switch mode {
        case .open(let schedule): self = .open(schedule)
        case .closed(let users, let thinkTime, let duration):
            self = .closed(users: users, thinkTime: thinkTime, duration: duration)
        }
    }
}

/// The state of one run; lives on the engine's thread.
struct EngineLoop {
    let configuration: LoadEngineConfiguration
    let release: Release
    let transport: Transport
    let stopRequested: () -> Bool

    var stats = LoadEngineStats()
    /// Open mode: the intended times.
    var pacer: Pacer?
    /// Closed mode: intended times of users ready to send (FIFO; think time is constant).
    var readyUsers = FIFOQueue<Int64>()
    var closedEnd: Int64 = 0
    var thinkNanos: Int64 = 0
    var nextIndex = 0
    /// Whether requests are still released (false once the schedule or source ends, or a stop).
    var releasing = true
    /// The worst delay between an intended time and its release since the last tick.
    var releaseLag: Int64 = 0
    /// Set when a timed source's next request is due but not ready: the wait for I/O is then short.
    var sourceNotReady = false
    private var pendingDue: Int64?

    init(
        configuration: LoadEngineConfiguration,
        release: Release,
        transport: Transport,
        stopRequested: @escaping () -> Bool
    ) {
        self.configuration = configuration
        self.release = release
        self.transport = transport
        self.stopRequested = stopRequested
        switch release {
        case .open(let schedule):
            pacer = Pacer(schedule: schedule)
        case .closed(let users, let thinkTime, let duration):
            for _ in 0..<max(users, 0) { readyUsers.append(0) }
            closedEnd = duration.nanoseconds
            thinkNanos = thinkTime.nanoseconds
        case .timed:
            break
        }
    }

    var isClosed: Bool {
        if case .closed = release { return true }
        return false
    }

    /// The next intended time (ns from start), or nil when nothing more will be released.
    mutating func nextDue() -> Int64? {
        if let pendingDue { return pendingDue }
        switch release {
        case .open: pendingDue = pacer!.next()?.nanoseconds
        case .closed: pendingDue = readyUsers.first.flatMap { $0 < closedEnd ? $0 : nil }
        case .timed(let source): pendingDue = source.nextDue()?.nanoseconds
        }
        return pendingDue
    }

    mutating func consumeDue() {
        pendingDue = nil
        if isClosed { _ = readyUsers.popFirst() }
    }

    /// Whether nothing more will be released: the schedule ended (open), or nothing is due and nothing
    /// is in flight that could make more due (a closed user's answer, a timed follow-up).
    mutating func releaseEnded() -> Bool {
        guard nextDue() == nil else { return false }
        if case .open = release { return true }
        return transport.inFlight == 0
    }

    mutating func run(
        source: (Int, Duration) -> LoadRequest?,
        sink: (LoadResult) -> Void,
        tick: (LoadEngineStats) -> Void
    ) -> LoadEngineStats {
        let start = monotonicNanoseconds()
        transport.runStart = start
        if case .timed(let source) = release, let wake = source.wakeDescriptor { transport.watch(wake: wake) }
        let tickNanos = max(configuration.tickInterval.microseconds * 1000, 1_000_000)
        var nextTick = tickNanos
        var completions: [LoadResult] = []
        while true {
            var now = monotonicNanoseconds() - start
            if stopRequested() && releasing {
                releasing = false
                stats.stopped = true
            }
            releaseDue(now: now, start: start, source: source, sink: sink)
            if releasing && releaseEnded() { releasing = false }

            transport.perform(into: &completions)
            for result in completions {
                stats.completed += 1
                if isClosed { readyUsers.append(result.received.nanoseconds + thinkNanos) }
                sink(result)
            }
            completions.removeAll(keepingCapacity: true)
            stats.inFlight = transport.inFlight
            stats.late = transport.lateStarts
            stats.draining = !releasing

            now = monotonicNanoseconds() - start
            if now >= nextTick {
                report(at: now, to: tick)
                nextTick = (now / tickNanos + 1) * tickNanos
            }
            if ends(sink: sink) { break }
            // Sockets are read only here, so this runs even with requests overdue (a zero wait only polls):
            // skipping it whenever the engine was behind left every answer unread, the in-flight cap full and
            // every further release missed, a collapse instead of a slowdown.
            transport.wait(until: start + now + waitTime(now: now, nextTick: nextTick))
            if transport.woken {
                // The source has something due earlier than it said: ask again.
                transport.woken = false
                pendingDue = nil
            }
        }
        stats.inFlight = transport.inFlight
        report(at: monotonicNanoseconds() - start, to: tick, final: true)
        return stats
    }

    /// Whether the run ends now: libcurl failed (what is in flight ends as failed, and the stats say why),
    /// nothing more is released and nothing is in flight, or a stop was asked for (what is in flight ends).
    private mutating func ends(sink: (LoadResult) -> Void) -> Bool {
        if let failure = transport.failure {
            stats.stopped = true
            stats.failure = failure.message
            cancelAll(detail: "the run stopped: \(failure.message)", sink: sink)
            return true
        }
        if !releasing && transport.inFlight == 0 { return true }
        if stopRequested() && !releasing {
            cancelAll(detail: "run stopped", sink: sink)
            return true
        }
        return false
    }

    /// How long to wait for I/O: until the next due time or the next tick, whichever is first, 50 ms at most.
    private mutating func waitTime(now: Int64, nextTick: Int64) -> Int64 {
        var wait = nextTick - now
        if sourceNotReady {
            // Its due time has passed: waiting for it would spin; a millisecond lets the source catch up.
            wait = min(wait, 1_000_000)
        } else if releasing, let due = nextDue() {
            wait = min(wait, due - now)
        }
        return max(min(wait, 50_000_000), 0)
    }

    /// Ends every request in flight or waiting and hands each result to `sink`.
    private mutating func cancelAll(detail: String, sink: (LoadResult) -> Void) {
        var results: [LoadResult] = []
        transport.cancelAll(detail: detail, into: &results)
        for result in results {
            stats.completed += 1
            sink(result)
        }
    }

    /// Hands the counters to `tick` (the intended rate is 0 in the final report) and starts the next
    /// tick's release lag.
    private mutating func report(at now: Int64, to tick: (LoadEngineStats) -> Void, final: Bool = false) {
        stats.elapsed = .nanoseconds(now)
        stats.intendedRate = final ? 0 : currentRate(at: now)
        stats.releaseLag = .nanoseconds(releaseLag)
        tick(stats)
        releaseLag = 0
    }

    /// Releases every request due by `now`, at most 512 and ``releasePassNanos`` per pass so that I/O keeps
    /// flowing: each goes to the transport, or is missed (over the in-flight cap, released after its whole
    /// timeout, or dropped by its source).
    private mutating func releaseDue(
        now releaseStart: Int64,
        start runStart: Int64,
        source: (Int, Duration) -> LoadRequest?,
        sink: (LoadResult) -> Void
    ) {
        var now = releaseStart
        var released = 0
        sourceNotReady = false
        while releasing, released < 512, let due = nextDue(), due <= now {
            if released > 0 {
                // Read again for each release: a source that took long over the previous one (or a busy
                // machine) must show in the lag of the next.
                now = monotonicNanoseconds() - runStart
                // A pass that has worked this long lets the answers in flight through before releasing more:
                // under overload a source's slow releases (missed ones included) must not starve the transport.
                if now - releaseStart > Self.releasePassNanos { break }
            }
            if case .timed(let source) = release, !source.nextIsReady {
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
            let taken = source(index, intended)
            if case .timed(let source) = release {
                let booked = source.takeBookedMissed()
                stats.scheduled += booked
                stats.missed += booked
                stats.completed += booked
            }
            // Consumed: bound by copy, the request would be destroyed twice, once here and once as `taken`.
            guard let request = consume taken else {
                // A timed slot may send nothing; only the other modes end on nil.
                if case .timed = release { continue }
                stats.sourceEnded = true
                releasing = false
                return
            }
            stats.scheduled += 1
            if let missed = missedResult(request, due: due, now: now) {
                stats.missed += 1
                stats.completed += 1
                sink(missed)
                if isClosed { readyUsers.append(due + thinkNanos) }
                continue
            }
            transport.submit(request, intended: due, sent: now)
            stats.sent += 1
        }
    }

    /// The result of a request that cannot be sent: its source dropped it, the in-flight cap is reached, or it
    /// is released after its whole timeout has passed, when it could only time out unsent (the harness fell
    /// behind its own schedule, which is not the target's failure); nil when it can be sent.
    private func missedResult(_ request: LoadRequest, due: Int64, now: Int64) -> LoadResult? {
        let behind = now - due
        let cap = configuration.maxInFlight + (request.isPriority ? configuration.priorityReserve : 0)
        let overCap = transport.inFlight >= cap
        guard overCap || behind >= transport.timeoutNanos || request.missedReason != nil else { return nil }
        let intended = Duration.nanoseconds(due)
        return LoadResult(
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
                    ? "in-flight cap \(cap) reached"
                    : String(
                        format: "the harness released it %.1f s late, past the request timeout",
                        Double(behind) / 1e9
                    ))
        )
    }

    /// The longest a release pass runs before the engine serves its transfers (2 ms).
    static let releasePassNanos: Int64 = 2_000_000

    func currentRate(at now: Int64) -> Double {
        switch release {
        case .open(let schedule): schedule.rate(at: .nanoseconds(now))
        case .closed: 0
        case .timed(let source): source.intendedRate(at: .nanoseconds(now))
        }
    }
}
