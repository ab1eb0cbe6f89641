import Foundation
import Synchronization
import Testing

@testable import Load

#if canImport(Glibc)
import Glibc
import Primitives
#endif

/// A loopback HTTP/1.1 server whose behaviour is scripted by the request path:
/// `/status/N` answers N, `/slow` answers after 2 s, `/reset` resets the connection,
/// `/close` closes it without answering, `/close-once` does so the first time and answers 200 after, `/crash` stops the server and then closes it unanswered, `/bye` answers 200 and closes, `/chunked` answers in
/// chunks written apart, `/never` reads the request and never answers (holding the connection until
/// the client closes it or the server stops). Bound to 127.0.0.1:0, one thread per connection.
final class FaultServer: Sendable {
    let port: UInt16
    private let listener: Int32
    private let stopped = Atomic<Bool>(false)
    /// Connections accepted so far.
    let accepted = Atomic<Int>(0)
    /// Whole requests (head and body) read so far.
    let requests = Atomic<Int>(0)
    /// Whether `/close-once` has closed its connection.
    private let closedOnce = Atomic<Bool>(false)

    private init(resetOnAccept: Bool) throws {
        resetsOnAccept = resetOnAccept
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        guard bound == 0, listen(fd, 64) == 0 else { throw POSIXError(.EADDRINUSE) }
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        listener = fd
        port = UInt16(bigEndian: address.sin_port)
    }

    /// Whether every connection is reset as soon as it is accepted, before anything is read.
    private let resetsOnAccept: Bool

    /// Binds a server and starts accepting.
    /// - Parameter resetOnAccept: reset every connection at once, as a target that drops all traffic does.
    static func start(resetOnAccept: Bool = false) throws -> FaultServer {
        let server = try FaultServer(resetOnAccept: resetOnAccept)
        let thread = Thread { server.acceptLoop() }
        thread.start()
        return server
    }

    func stop() {
        stopped.store(true, ordering: .relaxed)
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }

    private func acceptLoop() {
        while !stopped.load(ordering: .relaxed) {
            let connection = accept(listener, nil, nil)
            guard connection >= 0 else { return }
            accepted.add(1, ordering: .relaxed)
            if resetsOnAccept {
                var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
                setsockopt(connection, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
                close(connection)
                continue
            }
            let thread = Thread { self.serve(connection) }
            thread.start()
        }
    }

    private func serve(_ connection: Int32) {
        defer { close(connection) }
        var pending: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        while !stopped.load(ordering: .relaxed) {
            // Read one request head plus its Content-Length body.
            var headEnd: Int?
            while headEnd == nil {
                let count = read(connection, &buffer, buffer.count)
                guard count > 0 else { return }
                pending += buffer[0..<count]
                headEnd = find(pending)
            }
            let head = String(decoding: pending[0..<headEnd!], as: UTF8.self)
            var contentLength = 0
            for line in head.split(separator: "\r\n") where line.lowercased().hasPrefix("content-length:") {
                contentLength = Int(line.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) ?? 0
            }
            while pending.count < headEnd! + 4 + contentLength {
                let count = read(connection, &buffer, buffer.count)
                guard count > 0 else { return }
                pending += buffer[0..<count]
            }
            pending.removeFirst(headEnd! + 4 + contentLength)
            requests.add(1, ordering: .relaxed)
            let path = head.split(separator: " ").dropFirst().first.map(String.init) ?? "/"
            if path == "/reset" {
                var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
                setsockopt(connection, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
                return
            }
            if path == "/close" { return }
            if path == "/close-once" && !closedOnce.exchange(true, ordering: .relaxed) { return }
            if path == "/crash" {
                // The whole server dies after reading the request: the connection closes unanswered and later
                // connections are refused, as when a backend is killed mid-request.
                stop()
                return
            }
            if path == "/never" {
                // Hold the connection unanswered; return once the client hangs up (or the server stops).
                var probe: UInt8 = 0
                while !stopped.load(ordering: .relaxed) {
                    var poller = pollfd(fd: connection, events: Int16(POLLIN), revents: 0)
                    if poll(&poller, 1, 50) > 0 && recv(connection, &probe, 1, Int32(MSG_PEEK)) <= 0 { return }
                }
                return
            }
            if path == "/bye" {
                let response = "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nConnection: close\r\n\r\nbye"
                _ = response.withCString { write(connection, $0, strlen($0)) }
                return
            }
            if path == "/chunked" {
                for part in [
                    "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nchun", "k\r\n3\r\ned!\r\n0\r\n\r\n",
                ] {
                    _ = part.withCString { write(connection, $0, strlen($0)) }
                    usleep(20_000)
                }
                continue
            }
            if path.hasPrefix("/limited/") {
                // A rate limit's answer: 429 with the Retry-After the path names, as delta-seconds.
                let response =
                    "HTTP/1.1 429 Too Many Requests\r\nRetry-After: \(path.dropFirst(9))\r\nContent-Length: 0\r\n\r\n"
                _ = response.withCString { write(connection, $0, strlen($0)) }
                continue
            }
            if path == "/slow" { usleep(2_000_000) }
            var status = 200
            if path.hasPrefix("/status/"), let code = Int(path.dropFirst(8)) { status = code }
            let body = "echo \(contentLength)"
            let response =
                "HTTP/1.1 \(status) X\r\nContent-Length: \(body.utf8.count)\r\nConnection: keep-alive\r\n\r\n\(body)"
            _ = response.withCString { write(connection, $0, strlen($0)) }
        }
    }

    private func find(_ bytes: [UInt8]) -> Int? {
        guard bytes.count >= 4 else { return nil }
        for index in 0...(bytes.count - 4)
        where bytes[index] == 13 && bytes[index + 1] == 10 && bytes[index + 2] == 13 && bytes[index + 3] == 10 {
            return index
        }
        return nil
    }
}

/// A port on 127.0.0.1 with nothing listening.
func closedPort() -> UInt16 {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
    }
    _ = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
    }
    return UInt16(bigEndian: address.sin_port)
}

@Suite(.serialized)
struct TransportTests {
    /// Sends one request per path (at 100/s) and returns the results by id.
    func run(
        _ urls: [String],
        configuration: LoadEngineConfiguration = LoadEngineConfiguration(
            connectionsPerHost: 4,
            connectTimeout: .seconds(2),
            totalTimeout: .milliseconds(500)
        ),
        libcurlTransfers: Bool = false,
        method: String? = nil,
        body: [UInt8] = []
    ) throws -> (results: [Int: LoadResult], stats: LoadEngineStats) {
        var configuration = configuration
        configuration.libcurlTransfers = libcurlTransfers
        let engine = try LoadEngine(configuration)
        var results: [Int: LoadResult] = [:]
        let schedule = RateSchedule.constant(100, for: .milliseconds(10 * urls.count))
        let stats = engine.run(.open(schedule)) { index, _ in
            guard index < urls.count else { return nil }
            return LoadRequest(
                id: index,
                kind: "test",
                method: method ?? (body.isEmpty ? "GET" : "POST"),
                url: urls[index],
                body: body
            )
        } sink: { result in
            results[result.id] = result
        }
        return (results, stats)
    }

    /// Both ways of sending HTTP/1.1: PayStorm's framing (the default) and libcurl's transfers.
    static let paths = [false, true]

    @Test(arguments: [200, 204, 404, 500, 503], paths)
    func capturesStatusesAndBodies(status: Int, libcurlTransfers: Bool) throws {
        let server = try FaultServer.start()
        defer { server.stop() }
        let body = [UInt8](repeating: 65, count: 3000)
        let (results, stats) = try run(
            ["http://127.0.0.1:\(server.port)/status/\(status)"],
            libcurlTransfers: libcurlTransfers,
            body: body
        )
        let result = try #require(results[0])
        #expect(result.status == status)
        #expect(result.error == nil)
        #expect(String(decoding: result.body, as: UTF8.self) == (status == 204 ? "" : "echo 3000"))
        #expect(
            result.received >= result.wireStart && result.wireStart >= result.sent && result.sent >= result.intended
        )
        #expect(stats.sent == 1 && stats.completed == 1)
    }

    @Test(arguments: paths)
    func readsTheRetryAfterOfARateLimitedAnswer(libcurlTransfers: Bool) throws {
        let server = try FaultServer.start()
        defer { server.stop() }
        let (results, _) = try run(
            ["http://127.0.0.1:\(server.port)/limited/7", "http://127.0.0.1:\(server.port)/status/429"],
            libcurlTransfers: libcurlTransfers
        )
        #expect(results[0]?.status == 429 && results[0]?.retryAfter == 7)
        #expect(results[1]?.status == 429 && results[1]?.retryAfter == nil)
    }

    @Test(arguments: paths)
    func readsChunkedAndHeadResponses(libcurlTransfers: Bool) throws {
        let server = try FaultServer.start()
        defer { server.stop() }
        let chunked = try run(["http://127.0.0.1:\(server.port)/chunked"], libcurlTransfers: libcurlTransfers)
        #expect(chunked.results[0]?.status == 200, "\(chunked.results[0]?.detail ?? "")")
        #expect(String(decoding: chunked.results[0]?.body ?? [], as: UTF8.self) == "chunked!")
        let head = try run(
            ["http://127.0.0.1:\(server.port)/status/200"],
            libcurlTransfers: libcurlTransfers,
            method: "HEAD"
        )
        #expect(head.results[0]?.status == 200 && head.results[0]?.bodyBytes == 0)
    }

    @Test(arguments: paths)
    func retriesOnceWhenAReusedConnectionDiesUnanswered(libcurlTransfers: Bool) throws {
        let server = try FaultServer.start()
        defer { server.stop() }
        let base = "http://127.0.0.1:\(server.port)"
        // One connection: the first request leaves it kept alive, the second finds the server
        // closing it unanswered, is retried once on a second connection, and fails there too.
        let (results, _) = try run(
            [base + "/status/200", base + "/close"],
            configuration: LoadEngineConfiguration(connectionsPerHost: 1),
            libcurlTransfers: libcurlTransfers
        )
        #expect(results[0]?.status == 200)
        #expect(results[1]?.error == .reset)
        #expect(results[0]?.resent == false && results[1]?.resent == true)
        #expect(server.accepted.load(ordering: .relaxed) == 2)
    }

    @Test(arguments: paths)
    func aRequestResentAfterAReusedConnectionDiedSaysSo(libcurlTransfers: Bool) throws {
        let server = try FaultServer.start()
        defer { server.stop() }
        let base = "http://127.0.0.1:\(server.port)"
        // The server reads the second request and closes its kept-alive connection unanswered; the copy sent
        // again on a new connection is answered. Both copies reached the server, and the result says so.
        let (results, _) = try run(
            [base + "/status/200", base + "/close-once"],
            configuration: LoadEngineConfiguration(connectionsPerHost: 1),
            libcurlTransfers: libcurlTransfers,
            method: "POST",
            body: Array("grant".utf8)
        )
        #expect(results[1]?.status == 200, "\(results[1]?.detail ?? "")")
        #expect(results[0]?.resent == false && results[1]?.resent == true)
        #expect(server.requests.load(ordering: .relaxed) == 3)
    }

    @Test(arguments: paths)
    func aRetryRefusedAfterTheServerDiedIsIndeterminateNotUnsent(libcurlTransfers: Bool) throws {
        let server = try FaultServer.start()
        defer { server.stop() }
        let base = "http://127.0.0.1:\(server.port)"
        // The second request reached the server, which read it and died: its retry is refused, but the request
        // may have been acted on, so it is a reset (no answer), never "refused" (never sent).
        let (results, _) = try run(
            [base + "/status/200", base + "/crash"],
            configuration: LoadEngineConfiguration(connectionsPerHost: 1),
            libcurlTransfers: libcurlTransfers,
            method: "POST",
            body: Array("grant".utf8)
        )
        #expect(results[0]?.status == 200)
        #expect(server.requests.load(ordering: .relaxed) == 2)
        #expect(results[1]?.error == .reset, "\(results[1]?.detail ?? "")")
        // Its second copy was refused before it went out: the server read one.
        #expect(results[1]?.resent == false)
    }

    @Test(arguments: paths)
    func sendsBodiesLargerThanTheSocketBuffers(libcurlTransfers: Bool) throws {
        let server = try FaultServer.start()
        defer { server.stop() }
        let body = [UInt8](repeating: 7, count: 3 << 20)
        let (results, _) = try run(
            ["http://127.0.0.1:\(server.port)/status/200", "http://127.0.0.1:\(server.port)/status/201"],
            configuration: LoadEngineConfiguration(connectionsPerHost: 1, totalTimeout: .seconds(20)),
            libcurlTransfers: libcurlTransfers,
            body: body
        )
        #expect(results[0]?.status == 200 && results[1]?.status == 201)
        #expect(results.values.allSatisfy { String(decoding: $0.body, as: UTF8.self) == "echo \(3 << 20)" })
    }

    @Test func resetsAConnectionPartwayThroughARequest() throws {
        let server = try FaultServer.start()
        defer { server.stop() }
        let engine = try LoadEngine(LoadEngineConfiguration(connectionsPerHost: 1))
        let url = "http://127.0.0.1:\(server.port)/status/200"
        var cut = LoadRequest(id: 0, method: "POST", url: url, body: Array(repeating: 1, count: 3000))
        cut.resetAfterBytes = 1500
        let whole = LoadRequest(id: 1, method: "POST", url: url, body: Array(repeating: 1, count: 3000))
        let requests = [whole, cut, whole]
        var results: [LoadResult] = []
        _ = engine.run(.open(.constant(50, for: .milliseconds(60)))) { index, _ in
            guard index < requests.count else { return nil }
            var request = requests[index]
            request.id = index
            return request
        } sink: {
            results.append($0)
        }
        results.sort { $0.id < $1.id }
        #expect(results.map(\.status) == [200, 0, 200])
        #expect(results[1].error == .reset && results[1].detail.contains("network-reset"))
        // The server read the two whole requests only, and the cut one cost its connection.
        #expect(server.requests.load(ordering: .relaxed) == 2)
        #expect(server.accepted.load(ordering: .relaxed) == 2)
    }

    @Test(arguments: paths)
    func honoursPerRequestTimeoutsAndHangUps(libcurlTransfers: Bool) throws {
        let server = try FaultServer.start()
        defer { server.stop() }
        let engine = try LoadEngine(LoadEngineConfiguration(libcurlTransfers: libcurlTransfers))
        var slow = LoadRequest(id: 0, url: "http://127.0.0.1:\(server.port)/slow")
        slow.timeout = .milliseconds(50)
        var lost = LoadRequest(id: 1, url: "http://127.0.0.1:\(server.port)/status/200")
        lost.hangUpOnResponse = true
        let normal = LoadRequest(id: 2, url: "http://127.0.0.1:\(server.port)/status/200")
        let requests = [slow, lost, normal]
        var results: [Int: LoadResult] = [:]
        _ = engine.run(.open(.constant(100, for: .milliseconds(30)))) { index, _ in
            index < requests.count ? requests[index] : nil
        } sink: {
            results[$0.id] = $0
        }
        #expect(results[0]?.error == .timeout)
        #expect(results[1]?.error == .hungUp)
        #expect(results[2]?.status == 200)
    }

    /// 40 requests at 20/s to a server that never answers, over 4 connections with a 1 s timeout:
    /// 36 of them queue behind the connection cap. Each must fail as a timeout 1 s after its
    /// intended time (not 1 s after a connection freed up), and the run must end 1 s after the
    /// last intended time, not after ten rounds of four timeouts.
    @Test(arguments: paths)
    func timeoutsRunFromTheIntendedTimeQueueingIncluded(libcurlTransfers: Bool) throws {
        let server = try FaultServer.start()
        defer { server.stop() }
        let engine = try LoadEngine(
            LoadEngineConfiguration(
                connectionsPerHost: 4,
                connectTimeout: .seconds(1),
                totalTimeout: .seconds(1),
                libcurlTransfers: libcurlTransfers
            )
        )
        let url = "http://127.0.0.1:\(server.port)/never"
        var results: [LoadResult] = []
        let clock = ContinuousClock()
        let started = clock.now
        let stats = engine.run(.open(.constant(20, for: .seconds(2)))) { index, _ in
            LoadRequest(id: index, url: url)
        } sink: {
            results.append($0)
        }
        let took = clock.now - started
        #expect(results.count == 40 && stats.completed == 40 && stats.inFlight == 0)
        // Slack for a busy machine: each request times out about a second after its intended time, not seconds later.
        let slack = Duration.milliseconds(400)
        for result in results {
            #expect(result.error == .timeout, "\(result.id): \(result.detail)")
            #expect(result.latency >= .milliseconds(999), "\(result.id) timed out early: \(result.latency)")
            #expect(result.latency <= .seconds(1) + slack, "\(result.id) timed out late: \(result.latency)")
        }
        // Requests that waited for a connection and then started count as late.
        #expect(stats.late > 0)
        // The last intended time is 1.95 s; the engine returns within the timeout after it.
        #expect(took <= .milliseconds(2950) + slack, "the run took \(took)")
    }

    @Test(arguments: paths)
    func requestsTheHarnessReleasesPastTheirTimeoutAreMissedNotTimedOut(libcurlTransfers: Bool) throws {
        let server = try FaultServer.start()
        defer { server.stop() }
        let engine = try LoadEngine(
            LoadEngineConfiguration(totalTimeout: .milliseconds(300), libcurlTransfers: libcurlTransfers)
        )
        let url = "http://127.0.0.1:\(server.port)/status/200"
        var results: [Int: LoadResult] = [:]
        // The source stalls 600 ms on its first request (a harness that cannot keep up, such as a mint
        // pipeline behind its schedule): the ten requests due meanwhile are released past their whole timeout.
        _ = engine.run(.open(.constant(50, for: .milliseconds(400)))) { index, _ in
            if index == 0 { Thread.sleep(forTimeInterval: 0.6) }
            return LoadRequest(id: index, url: url)
        } sink: {
            results[$0.id] = $0
        }
        #expect(results.count == 20)
        let missed = results.values.filter { $0.error == .missed }
        #expect(missed.count >= 10, "\(results.values.map { "\($0.id): \($0.error?.rawValue ?? "ok")" })")
        #expect(missed.allSatisfy { $0.detail.contains("late, past the request timeout") })
        // Nothing released late is blamed on the target (the first request, taken before the stall, may be).
        #expect(!results.values.contains { $0.id > 0 && $0.error == .timeout })
    }

    @Test(arguments: paths)
    func reusedHandlesSendEachRequestsOwnMethodAndBody(libcurlTransfers: Bool) throws {
        let server = try FaultServer.start()
        defer { server.stop() }
        let url = "http://127.0.0.1:\(server.port)/status/200"
        let requests = [
            LoadRequest(id: 0, method: "POST", url: url, body: Array(repeating: 1, count: 3000)),
            LoadRequest(id: 1, method: "GET", url: url),
            LoadRequest(id: 2, method: "PUT", url: url, body: [1, 2, 3]),
            LoadRequest(id: 3, method: "POST", url: url, body: Array(repeating: 2, count: 5000)),
            LoadRequest(id: 4, method: "GET", url: url, headers: [("X-Test", "1")]),
        ]
        let engine = try LoadEngine(
            LoadEngineConfiguration(connectionsPerHost: 1, maxInFlight: 1, libcurlTransfers: libcurlTransfers)
        )
        var echoes: [Int: String] = [:]
        // 20 ms apart, so that each request finds the single handle free and reuses it.
        _ = engine.run(.open(.constant(50, for: .milliseconds(100)))) { index, _ in
            index < requests.count ? requests[index] : nil
        } sink: { result in
            echoes[result.id] = String(decoding: result.body, as: UTF8.self)
        }
        #expect(echoes == [0: "echo 3000", 1: "echo 0", 2: "echo 3", 3: "echo 5000", 4: "echo 0"])
    }

    @Test(arguments: paths)
    func reconnectsWhenTheServerClosesEachConnection(libcurlTransfers: Bool) throws {
        let server = try FaultServer.start()
        defer { server.stop() }
        // Each close frees a descriptor number that the next connection likely reuses.
        let urls = Array(repeating: "http://127.0.0.1:\(server.port)/bye", count: 10)
        let (results, _) = try run(
            urls,
            configuration: LoadEngineConfiguration(connectionsPerHost: 1),
            libcurlTransfers: libcurlTransfers
        )
        #expect(results.count == 10)
        #expect(results.values.allSatisfy { $0.status == 200 })
    }

    @Test(arguments: paths)
    func classifiesTransportFailures(libcurlTransfers: Bool) throws {
        let server = try FaultServer.start()
        defer { server.stop() }
        let base = "http://127.0.0.1:\(server.port)"
        let (results, stats) = try run(
            [
                base + "/slow", base + "/reset", base + "/close", "http://127.0.0.1:\(closedPort())/",
                base + "/status/200",
            ],
            libcurlTransfers: libcurlTransfers
        )
        #expect(results[0]?.error == .timeout)
        #expect(results[1]?.error == .reset)
        #expect(results[2]?.error == .reset)
        #expect(results[3]?.error == .refused)
        #expect(results[4]?.status == 200)
        #expect(results.values.allSatisfy { $0.error == nil ? $0.detail.isEmpty : !$0.detail.isEmpty })
        #expect(stats.completed == 5)
    }

    @Test func countsMissedSendsAtTheInFlightCap() throws {
        let server = try FaultServer.start()
        defer { server.stop() }
        let slow = "http://127.0.0.1:\(server.port)/slow"
        let configuration = LoadEngineConfiguration(
            connectionsPerHost: 1,
            maxInFlight: 1,
            totalTimeout: .milliseconds(300)
        )
        let (results, stats) = try run([slow, slow, slow], configuration: configuration)
        #expect(results.count == 3)
        #expect(stats.missed == 2)
        #expect(results.values.filter { $0.error == .missed }.count == 2)
        #expect(stats.scheduled == 3 && stats.sent == 1)
    }

    /// One connection and a cap of 2: the first request holds the connection 300 ms, the second would hold it
    /// a second more; a probe sent third is over the cap, so only as a priority request does it go out, and
    /// only ahead of the queue is it answered before the second request's second.
    @Test(arguments: paths)
    func priorityRequestGoesPastTheInFlightCapAndAheadOfTheQueue(libcurlTransfers: Bool) throws {
        let server = try FaultServer.start()
        defer { server.stop() }
        let base = "http://127.0.0.1:\(server.port)"
        var first = LoadRequest(id: 0, url: base + "/never")
        first.timeout = .milliseconds(300)
        var second = LoadRequest(id: 1, url: base + "/never")
        second.timeout = .seconds(1)
        var probe = LoadRequest(id: 2, kind: "probe", url: base + "/status/200")
        probe.isPriority = true
        let requests = [first, second, probe]
        let engine = try LoadEngine(
            LoadEngineConfiguration(
                connectionsPerHost: 1,
                maxInFlight: 2,
                totalTimeout: .seconds(3),
                libcurlTransfers: libcurlTransfers
            )
        )
        var results: [Int: LoadResult] = [:]
        let stats = engine.run(.open(.constant(100, for: .milliseconds(30)))) { index, _ in
            index < requests.count ? requests[index] : nil
        } sink: {
            results[$0.id] = $0
        }
        #expect(stats.missed == 0)
        #expect(results[2]?.status == 200)
        #expect((results[2]?.latency ?? .seconds(9)) < .milliseconds(900))
        #expect(results[1]?.error == .timeout)
    }

    @Test func aSendOverTheCapIsMissedUnlessItIsAPriorityRequest() throws {
        let server = try FaultServer.start()
        defer { server.stop() }
        let never = "http://127.0.0.1:\(server.port)/never"
        var results: [Int: LoadResult] = [:]
        let engine = try LoadEngine(
            LoadEngineConfiguration(connectionsPerHost: 1, maxInFlight: 8, totalTimeout: .milliseconds(200))
        )
        // A cap of 8 reserves 1 more for priority requests: of 12 sends, 8 go, then 1 priority, none after.
        let stats = engine.run(.open(.constant(1000, for: .milliseconds(12)))) { index, _ in
            guard index < 12 else { return nil }
            var request = LoadRequest(id: index, url: never)
            request.isPriority = index >= 8
            return request
        } sink: {
            results[$0.id] = $0
        }
        #expect(stats.sent == 9 && stats.missed == 3)
        #expect(results[8]?.error == .timeout)
        #expect(results[9]?.detail == "in-flight cap 9 reached")
        // One connection: the first times out on it, the rest time out waiting for it, never sent.
        let first = results.values.filter { $0.id < 8 }
        #expect(first.allSatisfy { $0.error == .timeout || $0.error == .unsent })
        #expect(first.filter { $0.error == .timeout }.count == 1, "\(first.map(\.error))")
    }

    @Test func closedLoopUsersWaitForTheirAnswers() throws {
        let server = try FaultServer.start()
        defer { server.stop() }
        let engine = try LoadEngine(LoadEngineConfiguration(connectionsPerHost: 2))
        var results: [LoadResult] = []
        let url = "http://127.0.0.1:\(server.port)/status/200"
        let stats = engine.run(.closed(users: 2, thinkTime: .milliseconds(20), duration: .milliseconds(200))) {
            index,
            _ in
            LoadRequest(id: index, url: url)
        } sink: {
            results.append($0)
        }
        #expect(results.count == stats.completed)
        #expect(stats.inFlight == 0)
        // Two users with 20 ms think time cannot exceed 2 × (200 / 20) + 2 sends.
        #expect(stats.sent >= 2 && stats.sent <= 22)
    }

    @Test func runsOnADedicatedThreadFromAsyncCode() async throws {
        let server = try FaultServer.start()
        defer { server.stop() }
        let engine = try LoadEngine()
        let url = "http://127.0.0.1:\(server.port)/status/200"
        let summary = await LoadEngine.onDedicatedThread {
            // A recorder without a directory cannot fail to open files.
            let recorder = try! LoadRecorder(directory: nil)
            let stats = engine.run(.open(.constant(100, for: .milliseconds(100)))) { index, _ in
                LoadRequest(id: index, url: url)
            } sink: {
                recorder.record($0)
            } tick: {
                recorder.tick($0)
            }
            return recorder.finish(stats)
        }
        #expect(summary.totals.ok == 10)
    }

    @Test func probeTellsReachableFromRefused() throws {
        let server = try FaultServer.start()
        defer { server.stop() }
        let engine = try LoadEngine()
        #expect(engine.probe(url: "http://127.0.0.1:\(server.port)/") == nil)
        #expect(engine.probe(url: "http://127.0.0.1:\(closedPort())/")?.error == .refused)
    }

    @Test(arguments: paths)
    func tellsATargetThatResetsEveryConnectionFromARefusingOne(libcurlTransfers: Bool) throws {
        let server = try FaultServer.start(resetOnAccept: true)
        defer { server.stop() }
        let url = "http://127.0.0.1:\(server.port)/status/200"
        let engine = try LoadEngine()
        let probed = engine.probe(url: url)
        #expect(probed == nil || probed?.error == .reset, "\(String(describing: probed))")
        let (results, _) = try run([url, url, url], libcurlTransfers: libcurlTransfers)
        #expect(results.count == 3)
        #expect(results.values.allSatisfy { $0.error == .reset }, "\(results.values.map { ($0.error, $0.detail) })")
    }

    @Test(arguments: [
        (28, 0, LoadErrorClass.timeout), (6, 0, .dns), (7, Int(ECONNREFUSED), .refused), (7, Int(ENETUNREACH), .other),
        (7, Int(ECONNRESET), .reset),
        (35, 0, .tls), (60, 0, .tls), (56, Int(ECONNRESET), .reset), (52, 0, .reset), (3, 0, .other),
    ])
    func classifiesCurlCodes(code: Int, osErrno: Int, expected: LoadErrorClass) {
        #expect(classifyCurlFailure(code: code, osErrno: osErrno) == expected)
    }

    @Test func recorderWritesStreamedFilesAndSummary() throws {
        let server = try FaultServer.start()
        defer { server.stop() }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("load-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let recorder = try LoadRecorder(directory: directory)
        let engine = try LoadEngine(LoadEngineConfiguration(connectionsPerHost: 2, tickInterval: .milliseconds(100)))
        let url = "http://127.0.0.1:\(server.port)/status/200"
        let stats = engine.run(.open(.constant(100, for: .milliseconds(300)))) { index, _ in
            LoadRequest(id: index, kind: index % 2 == 0 ? "webhook" : "device", url: url)
        } sink: {
            recorder.record($0)
        } tick: {
            recorder.tick($0)
        }
        let summary = recorder.finish(stats, thresholds: [try Threshold.parse("missed == 0")])
        #expect(summary.schema == "paystorm.load.summary/1")
        #expect(summary.totals.sent == 30 && summary.totals.ok == 30)
        #expect(summary.kinds["webhook"]?.sent == 15)
        #expect(summary.passed)
        let csv = try String(contentsOfFile: directory + "/timeseries.csv", encoding: .utf8)
        #expect(csv.hasPrefix(TimeseriesRow.csvHeader + "\n"))
        let log = try HistogramLogReader.read(path: directory + "/latency.hlog")
        #expect(log.total(tag: "webhook.latency").totalCount == 15)
        #expect(log.total(tag: "device.service").totalCount == 15)
        #expect(FileManager.default.fileExists(atPath: directory + "/summary.json"))
    }
}

/// TLS against `openssl s_server` on loopback, with a certificate generated for the test.
@Suite(.serialized)
struct TLSTests {
    static let openssl = ["/usr/bin/openssl", "/usr/local/bin/openssl"].first {
        FileManager.default.isExecutableFile(atPath: $0)
    }

    @discardableResult
    func shell(_ arguments: [String], wait: Bool = true) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: TLSTests.openssl!)
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        if wait { process.waitUntilExit() }
        return process
    }

    @Test(.enabled(if: TLSTests.openssl != nil))
    func trustsACustomCAAndRejectsAnUnknownOne() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tls-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try shell([
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
            "-keyout", directory + "/key.pem", "-out", directory + "/cert.pem", "-days", "1",
            "-subj", "/CN=localhost", "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost",
        ])
        let port = closedPort()
        let server = try shell(
            [
                "s_server", "-accept", "127.0.0.1:\(port)", "-cert", directory + "/cert.pem",
                "-key", directory + "/key.pem", "-www", "-naccept", "4", "-quiet",
            ],
            wait: false
        )
        defer { if server.isRunning { server.terminate() } }
        let url = "https://127.0.0.1:\(port)/"
        let trusting = try LoadEngine(LoadEngineConfiguration(caFile: directory + "/cert.pem"))
        var reachable = false
        for _ in 0..<50 where !reachable {
            usleep(100_000)
            reachable = trusting.probe(url: url) == nil
        }
        #expect(reachable)

        var results: [LoadResult] = []
        _ = trusting.run(.open(.constant(10, for: .milliseconds(100)))) { index, _ in
            index == 0 ? LoadRequest(id: index, url: url) : nil
        } sink: {
            results.append($0)
        }
        #expect(results.first?.status == 200)

        let stranger = try LoadEngine(LoadEngineConfiguration(caFile: "/dev/null"))
        results = []
        _ = stranger.run(.open(.constant(10, for: .milliseconds(100)))) { index, _ in
            index == 0 ? LoadRequest(id: index, url: url) : nil
        } sink: {
            results.append($0)
        }
        #expect(results.first?.error == .tls)
    }
}
