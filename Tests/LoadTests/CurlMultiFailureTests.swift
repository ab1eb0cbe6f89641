import CCurl
import Synchronization
import Testing

@testable import Load

/// Counts the calls a failing libcurl stand-in has seen.
private final class CallCount: Sendable {
    let value = Atomic<Int>(0)

    /// Counts one call; true for the first.
    func first() -> Bool { value.add(1, ordering: .relaxed).oldValue == 0 }
}

/// libcurl calls on the engine's hot path that fail (made to, through ``CurlMultiCalls``) stop the run with the
/// call and libcurl's message in ``LoadEngineStats/failure``, and every request still in flight ends as a
/// counted failure saying so: none is lost, none waits for an answer libcurl can no longer give.
@Suite(.serialized)
struct CurlMultiFailureTests {
    /// Runs `count` requests to `path` on a transport making `calls`; every request released yields a result.
    func run(
        _ calls: CurlMultiCalls,
        path: String = "/status/200",
        libcurlTransfers: Bool,
        count: Int = 5
    ) throws -> (results: [LoadResult], stats: LoadEngineStats) {
        let server = try FaultServer.start()
        defer { server.stop() }
        let configuration = LoadEngineConfiguration(
            connectionsPerHost: 2,
            connectTimeout: .seconds(2),
            totalTimeout: .seconds(2),
            libcurlTransfers: libcurlTransfers
        )
        _ = try LoadEngine(configuration)  // libcurl's global set-up
        let transport = try Transport(configuration, calls: calls)
        var loop = EngineLoop(
            configuration: configuration,
            release: .open(.constant(100, for: .milliseconds(10 * count))),
            transport: transport,
            stopRequested: { false }
        )
        let url = "http://127.0.0.1:\(server.port)\(path)"
        var results: [LoadResult] = []
        let stats = loop.run(
            source: { index, _ in index < count ? LoadRequest(id: index, url: url) : nil },
            sink: { results.append($0) },
            tick: { _ in }
        )
        return (results, stats)
    }

    /// A stand-in for `curl_multi_socket_action` that fails its first call for a timeout (`timeouts`) or for
    /// a socket, and calls libcurl otherwise.
    static func failingSocketAction(timeouts: Bool) -> CurlMultiCalls {
        let count = CallCount()
        var calls = CurlMultiCalls.libcurl
        calls.socketAction = { multi, socket, mask in
            if (socket == CURL_SOCKET_TIMEOUT) == timeouts && count.first() { return CURLM_OUT_OF_MEMORY }
            return CurlMultiCalls.libcurl.socketAction(multi, socket, mask)
        }
        return calls
    }

    @Test(arguments: [true, false])
    func aFailedSocketActionStopsTheRunAndSaysWhy(timeouts: Bool) throws {
        let (results, stats) = try run(Self.failingSocketAction(timeouts: timeouts), libcurlTransfers: true)
        let failure = try #require(stats.failure)
        #expect(failure.hasPrefix("libcurl failed in curl_multi_socket_action"))
        #expect(failure.contains("Out of memory"))
        #expect(stats.stopped)
        #expect(results.count == stats.scheduled)
        let stopped = results.filter { $0.detail.contains("the run stopped: libcurl failed") }
        #expect(!stopped.isEmpty)
        #expect(stopped.allSatisfy { $0.error == .other })
    }

    @Test(arguments: TransportTests.paths)
    func aHandleLibcurlWillNotTakeBackStopsTheRun(libcurlTransfers: Bool) throws {
        var calls = CurlMultiCalls.libcurl
        calls.removeHandle = { _, _ in CURLM_BAD_EASY_HANDLE }
        // `/bye` closes each connection after its answer: the HTTP/1.1 path then takes its handle out.
        let (results, stats) = try run(calls, path: "/bye", libcurlTransfers: libcurlTransfers)
        let failure = try #require(stats.failure)
        #expect(failure.hasPrefix("libcurl failed in curl_multi_remove_handle"))
        #expect(stats.stopped)
        #expect(results.count == stats.scheduled)
        // The answer that came before the failure is kept.
        #expect(results.contains { $0.status == 200 })
    }
}
