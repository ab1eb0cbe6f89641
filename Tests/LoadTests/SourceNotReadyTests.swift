import Foundation
import Synchronization
import Testing

@testable import Load

/// Two slots: a request at 0 ms to a closed loopback port, then one at 10 ms that the source is still
/// preparing (a body being signed) until `readyAfter` has passed.
private final class PreparingSource: TimedRequestSource {
    private var next = 0
    private let start = Date()
    let readyAfter: TimeInterval
    private(set) var readinessAsked = 0
    var missedReason: String?

    init(readyAfter: TimeInterval) { self.readyAfter = readyAfter }

    var isPrepared: Bool { Date().timeIntervalSince(start) >= readyAfter }

    func nextDue() -> Duration? { next < 2 ? .milliseconds(10 * next) : nil }

    var nextIsReady: Bool {
        readinessAsked += 1
        return next == 0 || isPrepared
    }

    func take(_ intended: Duration) -> LoadRequest? {
        defer { next += 1 }
        guard next == 0 else { return nil }
        var request = LoadRequest(id: 0, kind: "webhook", method: "POST", url: "http://127.0.0.1:1/", body: [1])
        request.missedReason = missedReason
        return request
    }

    func intendedRate(at elapsed: Duration) -> Double { 100 }
}

struct SourceNotReadyTests {
    @Test func answersKeepFlowingWhileTheSourcePreparesItsNextRequest() throws {
        let engine = try LoadEngine(LoadEngineConfiguration(tickInterval: .milliseconds(50)))
        let source = PreparingSource(readyAfter: 0.4)
        var resultWhilePreparing = false
        var results: [LoadResult] = []
        let stats = engine.run(timed: source) { result in
            results.append(result)
            if !source.isPrepared { resultWhilePreparing = true }
        }
        #expect(results.count == 1)
        #expect(results.first?.error == .refused)
        // The engine did not block on the source: the first answer came while the second slot was not ready.
        #expect(resultWhilePreparing)
        // It asked again now and then, not in a busy loop (about once a millisecond).
        #expect(source.readinessAsked > 2)
        #expect(source.readinessAsked < 5_000)
        #expect(stats.sent == 1)
    }

    @Test func requestTheSourceShedIsMissedWithItsReasonAndNeverSent() throws {
        let engine = try LoadEngine(LoadEngineConfiguration(tickInterval: .milliseconds(50)))
        let source = PreparingSource(readyAfter: 0)
        source.missedReason = "minting fell behind"
        var results: [LoadResult] = []
        let stats = engine.run(timed: source) { results.append($0) }
        #expect(results.map(\.error) == [.missed])
        #expect(results.first?.detail == "minting fell behind")
        #expect(stats.missed == 1)
        #expect(stats.sent == 0)
    }
}

/// Ten slots due at once, the last sending one request: the first nine are booked by the source as missed in
/// bulk (as an overloaded run's shed deliveries are), three at a take.
private final class BookingSource: TimedRequestSource {
    private var next = 0
    private var booked = 0
    private(set) var takes = 0

    func nextDue() -> Duration? { next < 10 ? .zero : nil }

    func take(_ intended: Duration) -> LoadRequest? {
        takes += 1
        guard next < 9 else {
            next += 1
            return LoadRequest(id: 0, kind: "webhook", method: "POST", url: "http://127.0.0.1:1/", body: [1])
        }
        next += 3
        booked += 3
        return nil
    }

    func takeBookedMissed() -> Int {
        defer { booked = 0 }
        return booked
    }

    func intendedRate(at elapsed: Duration) -> Double { 10 }
}

struct BookedMissedTests {
    @Test func missesTheSourceBookedCountAsScheduledAndMissedWithoutResults() throws {
        let engine = try LoadEngine(LoadEngineConfiguration(tickInterval: .milliseconds(50)))
        let source = BookingSource()
        var results: [LoadResult] = []
        let stats = engine.run(timed: source) { results.append($0) }
        #expect(source.takes == 4)
        #expect(stats.scheduled == 10)
        #expect(stats.missed == 9)
        #expect(stats.sent == 1)
        // Only the request that went out has a result; the booked ones were recorded by the source.
        #expect(results.count == 1)
    }
}

/// A source far behind its schedule: every slot is due at 0, the first sends one request and the others take
/// 0.1 ms each to release nothing, as shedding an overloaded run's deliveries does.
private final class BehindSource: TimedRequestSource {
    let url: String
    let slots: Int
    private(set) var next = 0

    init(url: String, slots: Int) {
        self.url = url
        self.slots = slots
    }

    func nextDue() -> Duration? { next < slots ? .zero : nil }

    func take(_ intended: Duration) -> LoadRequest? {
        defer { next += 1 }
        guard next == 0 else {
            Thread.sleep(forTimeInterval: 0.000_1)
            return nil
        }
        return LoadRequest(id: 0, kind: "webhook", method: "POST", url: url, body: [1])
    }

    func intendedRate(at elapsed: Duration) -> Double { 0 }
}

struct EngineBehindTests {
    @Test func answersAreReadWhileTheEngineIsBehindItsSchedule() throws {
        let server = try FaultServer.start()
        defer { server.stop() }
        let engine = try LoadEngine(LoadEngineConfiguration(tickInterval: .milliseconds(50)))
        let source = BehindSource(url: "http://127.0.0.1:\(server.port)/status/200", slots: 4_000)
        var answeredAt: Int?
        _ = engine.run(timed: source) { result in
            if result.status == 200 { answeredAt = source.next }
        }
        // The answer was read while slots were still overdue, not once the schedule had run dry.
        let at = try #require(answeredAt)
        #expect(at < source.slots, "answered after \(at) of \(source.slots) overdue slots")
    }
}
