import Foundation
import HTTPServer
import PayStormTestKit
import Testing

#if canImport(Glibc)
import Glibc
#endif

struct EchoReply: Codable {
    var method: String
    var path: String
    var query: String?
    var header: String?
    var bodyCount: Int
}

func echoServer(threads: Int = 2, maxBodyBytes: Int = 1 << 20) throws -> HTTPServer {
    try HTTPServer(threads: threads, maxBodyBytes: maxBodyBytes) { request in
        .json(
            200,
            EchoReply(
                method: request.method,
                path: request.path,
                query: request.query,
                header: request.headers["x-test"],
                bodyCount: request.body.count
            )
        )
    }
}

struct HTTPServerTests {
    @Test func bindsAnEphemeralLoopbackPort() throws {
        let server = try echoServer()
        defer { server.shutdown() }
        #expect(server.port != 0)
        #expect(server.address == "127.0.0.1:\(server.port)")
    }

    @Test(arguments: [
        ("GET", "/health", "/health", nil as String?),
        ("GET", "/accounts/abc?x=1&y=%20", "/accounts/abc", "x=1&y=%20"),
        ("DELETE", "/a/b/c", "/a/b/c", nil),
    ])
    func passesMethodPathAndQuery(method: String, target: String, path: String, query: String?) throws {
        let server = try echoServer()
        defer { server.shutdown() }
        let client = try RawHTTPClient(port: server.port)
        let response = try client.request(method, target, headers: ["X-Test: hello"])
        #expect(response.status == 200)
        #expect(response.headers["content-type"] == "application/json")
        let reply = try JSONDecoder().decode(EchoReply.self, from: Data(response.body))
        #expect(reply.method == method)
        #expect(reply.path == path)
        #expect(reply.query == query)
        #expect(reply.header == "hello")
    }

    @Test(arguments: [0, 1, 1000, 300_000, 1 << 20])
    func accumulatesTheWholeBody(size: Int) throws {
        let server = try echoServer()
        defer { server.shutdown() }
        let client = try RawHTTPClient(port: server.port)
        let response = try client.request("POST", "/echo", body: [UInt8](repeating: 65, count: size))
        #expect(response.status == 200)
        let reply = try JSONDecoder().decode(EchoReply.self, from: Data(response.body))
        #expect(reply.bodyCount == size)
    }

    // The per-connection pool holds headers and the read buffer; it shrank from 256 KiB to 64 KiB, which
    // must still leave room for large headers (proxies' cookies) beside a body.
    @Test(arguments: [16 * 1024, 24 * 1024])
    func servesLargeHeadersBesideABody(headerBytes: Int) throws {
        let server = try echoServer()
        defer { server.shutdown() }
        let client = try RawHTTPClient(port: server.port)
        let cookie = "Cookie: " + String(repeating: "c", count: headerBytes)
        let body = [UInt8](repeating: 66, count: 40_000)
        let response = try client.request("POST", "/echo", body: body, headers: ["X-Test: big", cookie])
        #expect(response.status == 200)
        let reply = try JSONDecoder().decode(EchoReply.self, from: Data(response.body))
        #expect(reply.header == "big")
        #expect(reply.bodyCount == body.count)
    }

    @Test func rejectsAnOversizedBodyWith413() throws {
        let server = try echoServer(maxBodyBytes: 1000)
        defer { server.shutdown() }
        let client = try RawHTTPClient(port: server.port)
        let response = try client.request("POST", "/echo", body: [UInt8](repeating: 65, count: 1001))
        #expect(response.status == 413)
        #expect(String(decoding: response.body, as: UTF8.self).contains("exceeds 1000 bytes"))
    }

    @Test func rejectsAnOversizedChunkedBodyWith413() throws {
        let server = try echoServer(maxBodyBytes: 1000)
        defer { server.shutdown() }
        let client = try RawHTTPClient(port: server.port)
        let chunk = String(repeating: "B", count: 600)
        let head = "POST /echo HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n"
        let chunks = "258\r\n\(chunk)\r\n258\r\n\(chunk)\r\n0\r\n\r\n"
        client.send(Array((head + chunks).utf8))
        let response = try client.readResponse()
        #expect(response.status == 413)
    }

    @Test func keepsTheConnectionAlive() throws {
        let server = try echoServer()
        defer { server.shutdown() }
        let client = try RawHTTPClient(port: server.port)
        for index in 0..<20 {
            let response = try client.request("POST", "/n/\(index)", body: Array("body \(index)".utf8))
            #expect(response.status == 200)
            let reply = try JSONDecoder().decode(EchoReply.self, from: Data(response.body))
            #expect(reply.path == "/n/\(index)")
        }
    }

    @Test func servesConcurrentClients() throws {
        let server = try echoServer(threads: 4)
        defer { server.shutdown() }
        let port = server.port
        let failures = ConcurrentCounter()
        DispatchQueue.concurrentPerform(iterations: 8) { worker in
            do {
                let client = try RawHTTPClient(port: port)
                for index in 0..<25 {
                    let body = [UInt8](repeating: UInt8(worker), count: 100 + index)
                    let response = try client.request("POST", "/w/\(worker)", body: body)
                    let reply = try JSONDecoder().decode(EchoReply.self, from: Data(response.body))
                    if response.status != 200 || reply.bodyCount != body.count { failures.add() }
                }
            } catch {
                failures.add()
            }
        }
        #expect(failures.value == 0)
    }

    @Test func refusesConnectionsAfterShutdown() throws {
        let server = try echoServer()
        let port = server.port
        server.shutdown()
        server.shutdown()
        #expect(throws: (any Error).self) { _ = try RawHTTPClient(port: port).request("GET", "/") }
    }

    @Test(arguments: ["localhost", "not an address", "999.1.1.1"])
    func refusesANonNumericHost(host: String) {
        #expect(throws: HTTPServerError.self) {
            _ = try HTTPServer(host: host) { _ in HTTPResponse(status: 200) }
        }
    }

    @Test func answersFromAnotherThreadWithAnAsyncHandler() throws {
        let server = try HTTPServer(threads: 2) { request, respond in
            DispatchQueue.global().async {
                respond(HTTPResponse(status: 201, body: Array("late \(request.path)".utf8)))
            }
        }
        defer { server.shutdown() }
        let client = try RawHTTPClient(port: server.port)
        for index in 0..<10 {
            let response = try client.request("GET", "/a/\(index)")
            #expect(response.status == 201)
            #expect(String(decoding: response.body, as: UTF8.self) == "late /a/\(index)")
        }
    }

    @Test func keepsServingWhileAsyncRequestsWait() throws {
        // One pool thread: if a waiting request held it, the second client could never be answered.
        let gate = DispatchSemaphore(value: 0)
        let server = try HTTPServer(threads: 1) { request, respond in
            if request.path == "/wait" {
                DispatchQueue.global().async {
                    gate.wait()
                    respond(HTTPResponse(status: 200, body: Array("released".utf8)))
                }
            } else {
                respond(HTTPResponse(status: 200, body: Array("quick".utf8)))
                gate.signal()
            }
        }
        defer { server.shutdown() }
        let port = server.port
        let waiting = try RawHTTPClient(port: port)
        waiting.send(Array("GET /wait HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8))
        let quick = try RawHTTPClient(port: port).request("GET", "/quick")
        #expect(String(decoding: quick.body, as: UTF8.self) == "quick")
        let released = try waiting.readResponse()
        #expect(String(decoding: released.body, as: UTF8.self) == "released")
    }

    @Test func shutdownWaitsForAnsweredAsyncRequests() throws {
        let server = try HTTPServer(threads: 2) { _, respond in
            DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(50)) {
                respond(HTTPResponse(status: 200))
            }
        }
        let client = try RawHTTPClient(port: server.port)
        client.send(Array("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8))
        Thread.sleep(forTimeInterval: 0.01)
        server.shutdown()
        #expect(throws: (any Error).self) { _ = try RawHTTPClient(port: server.port).request("GET", "/") }
    }

    @Test func answersAFreshClientWhileAndAfterThousandsOfStalledConnectionsAreHeld() throws {
        // A slowloris burst: each connection sends part of its headers and stalls. The old default limit
        // (about 1,000 connections) left the fresh client in the accept queue behind them.
        try raiseOpenFileLimit(to: 8192)
        let server = try echoServer(threads: 2)
        defer { server.shutdown() }
        var stalled = try openStalledConnections(1500, port: server.port)
        let during = try RawHTTPClient(port: server.port, timeoutSeconds: 5).request("GET", "/health")
        #expect(during.status == 200)
        stalled.removeAll()
        #expect(waitForOpenConnections(of: server, atMost: 0, seconds: 5))
        let after = try RawHTTPClient(port: server.port, timeoutSeconds: 5).request("GET", "/health")
        #expect(after.status == 200)
    }

    @Test func closesConnectionsAtOnceWhenClientsHangUpBeyondTheLimit() throws {
        // Beyond the limit, connections wait in the accept queue; by the time they are accepted their
        // clients have sent part of a request and hung up. Each must be closed when accepted, not held until
        // the request timeout (10 s here), or they fill the limit again and shut out the next client.
        let server = try HTTPServer(threads: 2, limits: HTTPServerLimits(maxConnections: 100)) { _ in
            HTTPResponse(status: 200)
        }
        defer { server.shutdown() }
        var stalled = try openStalledConnections(400, port: server.port)
        stalled.removeAll()
        #expect(waitForOpenConnections(of: server, atMost: 0, seconds: 5))
        let after = try RawHTTPClient(port: server.port, timeoutSeconds: 5).request("GET", "/health")
        #expect(after.status == 200)
    }

    @Test func closesAConnectionWhoseRequestStaysIncomplete() throws {
        let limits = HTTPServerLimits(requestTimeoutSeconds: 1, idleTimeoutSeconds: 60)
        let server = try HTTPServer(threads: 1, limits: limits) { _ in HTTPResponse(status: 200) }
        defer { server.shutdown() }
        let stalled = try RawHTTPClient(port: server.port, timeoutSeconds: 10)
        stalled.send(Array("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ".utf8))
        let started = ContinuousClock.now
        #expect(throws: RawHTTPClient.ClientError.closed) { _ = try stalled.readResponse() }
        // Closed by the request timeout, not by the 10 s receive timeout of the client.
        #expect(ContinuousClock.now - started < .seconds(8))
    }

    @Test func keepsAnIdleKeepAliveConnectionPastTheRequestTimeout() throws {
        // Between complete requests a keep-alive connection has the idle timeout, not the request timeout.
        let limits = HTTPServerLimits(requestTimeoutSeconds: 1, idleTimeoutSeconds: 60)
        let server = try HTTPServer(threads: 1, limits: limits) { _ in HTTPResponse(status: 200) }
        defer { server.shutdown() }
        let client = try RawHTTPClient(port: server.port)
        #expect(try client.request("GET", "/first").status == 200)
        Thread.sleep(forTimeInterval: 2.5)
        #expect(try client.request("GET", "/second").status == 200)
    }

    @Test func encodesJSONWithSortedKeys() {
        let response = HTTPResponse.json(201, ["b": 1, "a": 2])
        #expect(response.status == 201)
        #expect(String(decoding: response.body, as: UTF8.self) == #"{"a":2,"b":1}"#)
    }
}

/// Opens `count` connections that each send part of a request's headers and then wait.
func openStalledConnections(_ count: Int, port: UInt16) throws -> [RawHTTPClient] {
    try (0..<count).map { _ in
        let client = try RawHTTPClient(port: port)
        client.send(Array("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ".utf8))
        return client
    }
}

/// Polls the server's connection count (every 50 ms, at most `seconds`); true once it is at most `limit`.
func waitForOpenConnections(of server: HTTPServer, atMost limit: Int, seconds: Int) -> Bool {
    let deadline = ContinuousClock.now + .seconds(seconds)
    while server.openConnections > limit {
        guard ContinuousClock.now < deadline else { return false }
        Thread.sleep(forTimeInterval: 0.05)
    }
    return true
}

/// Raises this process's soft open-file limit (within the hard limit), so a burst of sockets fits.
func raiseOpenFileLimit(to wanted: Int) throws {
    var limit = rlimit()
    let resource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
    guard getrlimit(resource, &limit) == 0 else { throw RawHTTPClient.ClientError.malformed }
    guard limit.rlim_cur < rlim_t(wanted) else { return }
    limit.rlim_cur = min(rlim_t(wanted), limit.rlim_max)
    _ = setrlimit(resource, &limit)
}

final class ConcurrentCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    func add() { lock.withLock { count += 1 } }
    var value: Int { lock.withLock { count } }
}
