import Testing

@testable import Load

/// A timed stream of three requests 20 ms apart whose sink queues one follow-up for each answer to the first
/// request, due 30 ms after that answer: the stream is empty while the follow-up's trigger is in flight.
private final class FollowUpSource: TimedRequestSource {
    let url: String
    var due: [(at: Duration, id: Int)] = [(.zero, 0), (.milliseconds(20), 1), (.milliseconds(40), 2)]

    init(url: String) { self.url = url }

    func nextDue() -> Duration? { due.map(\.at).min() }

    func take(_ intended: Duration) -> LoadRequest? {
        guard let index = due.firstIndex(where: { $0.at == intended }) else { return nil }
        let id = due.remove(at: index).id
        // Slot 2 sends nothing (a planned delivery the chaos dropped): the run must go on.
        return id == 2 ? nil : LoadRequest(id: id, url: url)
    }

    func intendedRate(at elapsed: Duration) -> Double { 50 }
}

struct TimedModeTests {
    @Test func aTimedRunWaitsForFollowUpsItsSinkAddsAndSkipsEmptySlots() throws {
        let server = try FaultServer.start()
        defer { server.stop() }
        let engine = try LoadEngine(LoadEngineConfiguration(connectionsPerHost: 2, tickInterval: .milliseconds(10)))
        let source = FollowUpSource(url: "http://127.0.0.1:\(server.port)/status/200")
        var results: [LoadResult] = []
        var rates: [Double] = []
        let stats = engine.run(timed: source) { result in
            results.append(result)
            if result.id == 0 { source.due.append((result.received + .milliseconds(30), 10)) }
        } tick: { stats in
            rates.append(stats.intendedRate)
        }
        #expect(results.map(\.id).sorted() == [0, 1, 10])
        #expect(results.allSatisfy { $0.status == 200 })
        #expect(stats.scheduled == 3 && stats.sent == 3 && stats.completed == 3)
        #expect(!stats.sourceEnded && !stats.stopped && stats.failure == nil)
        // The status line's rate comes from the source while the run goes, and is 0 in the final report.
        #expect(rates.dropLast().contains(50))
        #expect(rates.last == 0)
    }
}
