import Foundation

/// How long requests waited between their hand-off to the transport and the wire: for a free connection of
/// the pool, or to connect. An open-loop run keeps sending while the target is slow, so with every connection
/// busy the next requests queue inside PayStorm, and their latency from the intended time grows with a wait
/// that the connection count set, not the target (k6 says "insufficient VUs" for the same thing).
public struct ConnectionWaits: Sendable, Equatable {
    /// A wait this long counts: well above a loopback connect, well below a queue behind busy connections.
    public static let threshold: Duration = .milliseconds(10)
    /// The share of requests that must wait for the run to say so.
    public static let noteShare = 0.01

    /// Requests recorded.
    public private(set) var requests = 0
    /// Requests that waited at least ``threshold``.
    public private(set) var waited = 0
    /// The longest wait seen.
    public private(set) var longest: Duration = .zero
    /// Requests the transport sent a second time after a kept-alive connection closed unanswered
    /// (``LoadResult/resent``).
    public private(set) var resent = 0

    /// Creates an empty tally.
    public init() {}

    /// Counts one result; a request the engine never handed to the transport (missed) is not counted.
    public mutating func record(_ result: LoadResult) {
        guard result.error != .missed else { return }
        requests += 1
        if result.resent { resent += 1 }
        let wait = result.wireStart - result.sent
        guard wait >= Self.threshold else { return }
        waited += 1
        longest = max(longest, wait)
    }

    /// The sentence for the report when the transport resent any request: each may have reached the target twice.
    /// A backend that closes idle kept-alive connections sooner than the run reuses them causes most of these.
    public var resentNote: String? {
        guard resent > 0 else { return nil }
        return "\(resent) of \(requests) requests were sent a second time on a new connection after their "
            + "kept-alive connection closed unanswered, as libcurl does; the target may have read both copies (their "
            + "history result lines say \"resent\": true). Many of these mean the target closes idle connections "
            + "while the run still reuses them"
    }

    /// The sentence for the report when at least ``noteShare`` of the requests waited, naming the pool of
    /// `connections` per host that the run used; nil otherwise.
    public func note(connections: Int) -> String? {
        guard requests > 0, Double(waited) >= Self.noteShare * Double(requests) else { return nil }
        let share = Double(waited) / Double(requests) * 100
        return "\(waited) of \(requests) requests (" + String(format: "%.1f", share) + "%) waited at least "
            + String(
                format: "%.0f ms for a connection (longest %.0f ms): ",
                Self.threshold.seconds * 1000,
                longest.seconds * 1000
            )
            + "all \(connections) per host were busy, or connecting. Their latency from the intended time includes "
            + "that wait, which the run's pool caused, not the target's work (the service time does not): raise "
            + "target.connections to send as the schedule asks"
    }
}
