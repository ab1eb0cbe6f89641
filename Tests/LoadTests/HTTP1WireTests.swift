import Foundation
import PayStormTestKit
import Synchronization
import Testing

@testable import Load

#if canImport(Glibc)
import Glibc
#endif

/// A loopback server on 127.0.0.1:0 that keeps the bytes of every request it reads (head and `Content-Length`
/// body) and answers each `200` with a short body, on one connection at a time.
final class CaptureServer: Sendable {
    let port: UInt16
    private let listener: Int32
    /// Every request read so far, as it came off the wire.
    let requests = Mutex<[[UInt8]]>([])

    init() throws {
        (listener, port) = try listenOnLoopback(backlog: 8)
        Thread { self.serve() }.start()
    }

    func stop() {
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }

    private func serve() {
        while true {
            let connection = accept(listener, nil, nil)
            guard connection >= 0 else { return }
            var timeout = timeval(tv_sec: 5, tv_usec: 0)
            setsockopt(connection, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            var pending: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                while let request = Self.whole(&pending) {
                    requests.withLock { $0.append(request) }
                    let answer = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
                    _ = answer.utf8CString.withUnsafeBufferPointer { send(connection, $0.baseAddress, $0.count - 1, 0) }
                }
                let count = recv(connection, &buffer, buffer.count, 0)
                guard count > 0 else { break }
                pending.append(contentsOf: buffer[0..<count])
            }
            close(connection)
        }
    }

    /// Takes one whole request off the front of `bytes`, nil until one is there.
    private static func whole(_ bytes: inout [UInt8]) -> [UInt8]? {
        let end = Array("\r\n\r\n".utf8)
        guard let headEnd = bytes.indices.first(where: { bytes[$0...].starts(with: end) }) else { return nil }
        let head = String(decoding: bytes[..<headEnd], as: UTF8.self).lowercased()
        let length =
            head.split(separator: "\r\n").first { $0.hasPrefix("content-length:") }
            .flatMap { Int($0.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) } ?? 0
        let total = headEnd + 4 + length
        guard bytes.count >= total else { return nil }
        defer { bytes.removeFirst(total) }
        return Array(bytes[..<total])
    }
}

struct HTTP1WireTests {
    /// The framing writes each request as the bytes of its head and body, on a kept-alive connection, whatever
    /// the path does with the request on its way (queued for a connection, moved onto it, answered).
    @Test func writesEachRequestsExactBytesOnAKeptAliveConnection() throws {
        let server = try CaptureServer()
        defer { server.stop() }
        let url = "http://127.0.0.1:\(server.port)/webhook?x=1"
        let bodies = [Array(#"{"signedPayload":"a.b.c"}"#.utf8), [], Array(repeating: UInt8(ascii: "z"), count: 5000)]
        let headers = [(name: "Content-Type", value: "application/json"), (name: "X-Api-Key", value: "k")]
        let engine = try LoadEngine(
            LoadEngineConfiguration(connectionsPerHost: 1, connectTimeout: .seconds(2), totalTimeout: .seconds(3))
        )
        var results: [Int: LoadResult] = [:]
        // All three due at once: the later two wait for the one connection.
        let schedule = RateSchedule.constant(1000, for: .milliseconds(3))
        _ = engine.run(.open(schedule)) { index, _ in
            guard index < bodies.count else { return nil }
            let method = index == 1 ? "GET" : "POST"
            return LoadRequest(id: index, kind: "wire", method: method, url: url, headers: headers, body: bodies[index])
        } sink: { result in
            results[result.id] = result
        }
        let host = "127.0.0.1:\(server.port)"
        let expected = bodies.indices.map { index in
            let length = index == 1 ? "" : "Content-Length: \(bodies[index].count)\r\n"
            let head =
                "\(index == 1 ? "GET" : "POST") /webhook?x=1 HTTP/1.1\r\nContent-Type: application/json\r\n"
                + "X-Api-Key: k\r\nHost: \(host)\r\n\(length)\r\n"
            return Array(head.utf8) + bodies[index]
        }
        #expect(server.requests.withLock { $0 } == expected)
        for index in bodies.indices {
            #expect(results[index]?.status == 200 && results[index]?.body == Array("ok".utf8))
        }
    }
}
