import Foundation
import Testing

@testable import Load

/// Requests released out of intended order: `A` at 0 takes the one connection and hangs, `C` (intended 100 ms)
/// is released on time, and `B` (intended 50 ms) only after `C`, as a retry the run adds late is.
private final class LateReleaseSource: TimedRequestSource {
    let url: String
    private var slots: [(at: Duration, id: Int)] = [(.zero, 0), (.milliseconds(100), 2)]
    private var lateSlot: (at: Duration, id: Int)? = (.milliseconds(50), 1)

    init(url: String) { self.url = url }

    func nextDue() -> Duration? {
        if slots.isEmpty, let late = lateSlot { return late.at }
        return slots.first?.at
    }

    func take(_ intended: Duration) -> LoadRequest? {
        if slots.isEmpty, let late = lateSlot {
            lateSlot = nil
            return LoadRequest(id: late.id, url: url)
        }
        return LoadRequest(id: slots.removeFirst().id, url: url)
    }

    func intendedRate(at elapsed: Duration) -> Double { 20 }
}

/// The request timeout is honoured from the intended time, within milliseconds, also for a request queued behind
/// one with a later deadline.
struct TimeoutPrecisionTests {
    @Test(arguments: TransportTests.paths)
    func aRequestReleasedLateExpiresAtItsOwnDeadline(libcurlTransfers: Bool) throws {
        let server = try FaultServer.start()
        defer { server.stop() }
        let timeout = Duration.milliseconds(600)
        let engine = try LoadEngine(
            LoadEngineConfiguration(connectionsPerHost: 1, totalTimeout: timeout, libcurlTransfers: libcurlTransfers)
        )
        var results: [Int: LoadResult] = [:]
        _ = engine.run(timed: LateReleaseSource(url: "http://127.0.0.1:\(server.port)/never")) { results[$0.id] = $0 }
        #expect(results.count == 3)
        for (id, result) in results.sorted(by: { $0.key < $1.key }) {
            #expect(result.latency >= timeout, "request \(id): \(result.latency)")
            // Behind C (deadline 700 ms), B (deadline 650 ms) expired only when C left the queue: 50 ms late.
            #expect(
                result.latency < timeout + .milliseconds(30),
                "request \(id): \(result.latency), \(String(describing: result.error))"
            )
        }
    }

    @Test func aQueueKeepsDeadlineOrderBehindItsPriorityHead() {
        var queue = FIFOQueue<(deadline: Int, priority: Bool)>()
        let later: ((deadline: Int, priority: Bool)) -> ((deadline: Int, priority: Bool)) -> Bool = { new in
            { !$0.priority && $0.deadline > new.deadline }
        }
        for item in [(5, true), (10, false), (30, false), (20, false), (40, false), (15, false)] {
            let element = (deadline: item.0, priority: item.1)
            if element.priority { queue.prepend(element) } else { queue.append(element, movingAheadOf: later(element)) }
        }
        var order: [Int] = []
        while let next = queue.popFirst() { order.append(next.deadline) }
        #expect(order == [5, 10, 15, 20, 30, 40])
    }
}
