import Foundation
import Load
import Profile
import Reporting
import RunControl

/// Lets an external target recover before each step of a capacity search. An overloaded step leaves work in
/// the target (requests it accepted and PayStorm gave up on, queued connections), which it goes on serving
/// after the step's run has ended; a step run meanwhile measures that backlog, not its own rate.
///
/// The probe is a webhook `POST` with the body `{}` (the target rejects it, so it changes nothing) at
/// ``rate`` requests a second, through the same URL, headers and queues as the deliveries. Before the first
/// step it measures the target's quiet latency (the median of ``quietProbes`` probes); before each later step
/// it probes until the last ``window`` probes were all answered, with a median latency within twice the quiet
/// one plus ``floorMicros``, or until the time allowed runs out. Its own engine opens its connections and
/// closes them when it ends.
struct RecoveryProbe {
    /// Probes a second: light beside any step.
    static let rate = 5.0
    /// The probes a recovery is judged on: the last ones to end.
    static let window = 5
    /// The probes that measure the quiet latency before the first step.
    static let quietProbes = 10
    /// Added to twice the quiet median, so that a busy machine's scheduling delays beside a loopback target's
    /// sub-millisecond answers do not read as a backlog.
    static let floorMicros: Int64 = 25_000
    /// Answers that say the target is still overloaded, however fast they come.
    static let overloaded: Set<Int> = [429, 502, 503, 504]

    let request: LoadRequest
    let engine: LoadEngine
    let interruption: Interruption

    /// A probe of the profile's target; nil for the embedded ledger (each step starts its own, so none
    /// inherits another's backlog) and for a webhook URL whose host a placeholder fills.
    /// - Throws: `RunError.internalError` when the load engine cannot start.
    init?(profile: Profile, interruption: Interruption) throws(RunError) {
        guard !profile.target.embeddedLedger, let webhook = profile.target.webhook,
            let url = webhook.url.placeholders.isEmpty ? webhook.url.text : webhook.origin
        else { return nil }
        var request = LoadRequest(
            id: 0,
            kind: "recovery",
            method: "POST",
            url: url,
            headers: [("Content-Type", "application/json")]
                + profile.target.headers.sorted { $0.key < $1.key }.map { ($0.key, $0.value) },
            body: Array("{}".utf8)
        )
        request.isPriority = true
        self.request = request
        self.interruption = interruption
        do {
            engine = try LoadEngine(
                LoadEngineConfiguration(
                    connectionsPerHost: 32,
                    maxInFlight: 256,
                    connectTimeout: .seconds(3),
                    totalTimeout: .milliseconds(Int64(profile.target.requestTimeoutSeconds * 1000)),
                    caFile: profile.target.tlsCAFile,
                    captureBodies: false
                )
            )
        } catch {
            throw .internalError("cannot start the recovery probe's load engine: \(error)")
        }
    }

    /// The median latency of ``quietProbes`` probes, in microseconds; nil when fewer than half were answered
    /// (the target is down or overloaded already, and no recovery can be judged against it).
    func quietLatency() -> Int64? {
        let results = probe(seconds: Double(Self.quietProbes) / Self.rate) { _ in false }
        let answered = results.filter(Self.answered).map(\.latency.microseconds)
        guard answered.count * 2 >= Self.quietProbes else { return nil }
        return Self.median(answered)
    }

    /// The latency the median of a window must come under: twice the quiet one plus ``floorMicros``.
    static func bound(quietMicros: Int64) -> Int64 { 2 * quietMicros + floorMicros }

    /// Probes until the target answers at its quiet latency, at most `timeout` seconds.
    /// - Parameter quietMicros: the quiet median latency (``quietLatency()``).
    func awaitRecovery(quietMicros: Int64, timeout: Double) -> CapacityRecovery {
        let bound = Self.bound(quietMicros: quietMicros)
        let startedAt = Date()
        var last: [LoadResult] = []
        var recovered = false
        let results = probe(seconds: timeout) { result in
            last.append(result)
            if last.count > Self.window { last.removeFirst() }
            recovered = Self.isRecovered(last, bound: bound)
            return recovered
        }
        let answered = last.filter(Self.answered).map(\.latency.microseconds)
        return CapacityRecovery(
            recovered: recovered,
            waitedSeconds: Date().timeIntervalSince(startedAt),
            startedAt: startedAt.timeIntervalSince1970,
            probes: results.count,
            medianMicros: answered.isEmpty ? nil : Self.median(answered),
            quietMicros: quietMicros,
            boundMicros: bound
        )
    }

    /// Whether the last probes to end (a full window of them) were all answered within `bound`, by median.
    static func isRecovered(_ last: [LoadResult], bound: Int64) -> Bool {
        guard last.count >= window, last.allSatisfy(answered) else { return false }
        return median(last.map(\.latency.microseconds)) <= bound
    }

    /// Whether a probe was answered, and not with a status that says the target is overloaded.
    static func answered(_ result: LoadResult) -> Bool {
        result.error == nil && result.status > 0 && !overloaded.contains(result.status)
    }

    static func median(_ values: [Int64]) -> Int64 {
        let sorted = values.sorted()
        return sorted[sorted.count / 2]
    }

    /// Sends probes at ``rate`` for at most `seconds`, until `done` says so of a result (or the search is
    /// interrupted); the probes still in flight then are cut and left out.
    /// - Returns: the results that ended before then, in the order they ended.
    private func probe(seconds: Double, until done: (LoadResult) -> Bool) -> [LoadResult] {
        guard !interruption.isInterrupted else { return [] }
        let stopping = interruption.onInterrupt { [engine] in engine.stop() }
        defer { stopping.cancel() }
        var results: [LoadResult] = []
        var decided = false
        let schedule = RateSchedule.constant(Self.rate, for: .milliseconds(Int64(seconds * 1000)))
        _ = engine.run(.open(schedule)) { index, _ in
            var request = request
            request.id = index
            return request
        } sink: { result in
            guard !decided else { return }
            results.append(result)
            if done(result) {
                decided = true
                engine.stop()
            }
        }
        return results
    }
}

/// A target whose quiet latency was measured: what the search waits for before each step.
struct QuietTarget {
    let probe: RecoveryProbe
    /// The median latency of the quiet probes, in microseconds.
    let quietMicros: Int64

    /// The bound a recovered target's probes answer within, by median.
    var boundMicros: Int64 { RecoveryProbe.bound(quietMicros: quietMicros) }

    /// Waits, at most `timeout` seconds, until the target answers at its quiet latency again.
    func awaitRecovery(timeout: Double) -> CapacityRecovery {
        probe.awaitRecovery(quietMicros: quietMicros, timeout: timeout)
    }
}
