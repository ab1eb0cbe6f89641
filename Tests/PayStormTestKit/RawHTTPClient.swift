import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A blocking HTTP/1.1 client on one loopback socket, for tests that must see keep-alive, send raw or partial
/// bytes, or talk to a server without going through the transport under test.
///
/// ```swift
/// let client = try RawHTTPClient(port: server.port)
/// let response = try client.request("GET", "/health")
/// ```
public final class RawHTTPClient {
    private let fd: Int32
    private var buffer: [UInt8] = []

    /// Why a connection or an answer failed.
    public enum ClientError: Error, Equatable {
        /// `connect(2)` failed with this `errno`.
        case connectFailed(Int32)
        /// The server closed the connection (or the receive timeout passed) before a whole answer.
        case closed
        /// The status line is not `HTTP/1.x NNN ...`.
        case malformed
    }

    /// One answer: the status, the headers with lower-cased names, and the body (by `Content-Length`).
    public typealias Response = (status: Int, headers: [String: String], body: [UInt8])

    /// Connects to 127.0.0.1:`port`; each receive waits at most `timeoutSeconds`, so no test can hang on it.
    /// - Throws: ``ClientError/connectFailed(_:)`` when nothing accepts the connection.
    public init(port: UInt16, timeoutSeconds: Int = 10) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var timeout = timeval(tv_sec: timeoutSeconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        // No close here: deinit runs for a class whose throwing init had set every property, and a second
        // close could hit a descriptor another test's server has just been given.
        if result != 0 { throw ClientError.connectFailed(errno) }
    }

    deinit { close(fd) }

    /// One request on a fresh connection that asks the server to close it (`Connection: close`).
    /// - Throws: ``ClientError`` when it cannot connect or the answer is incomplete.
    public static func exchange(
        port: UInt16,
        _ method: String,
        _ target: String,
        body: [UInt8] = [],
        timeoutSeconds: Int = 10
    ) throws -> (status: Int, body: [UInt8]) {
        let client = try RawHTTPClient(port: port, timeoutSeconds: timeoutSeconds)
        let response = try client.request(method, target, body: body, headers: ["Connection: close"])
        return (response.status, response.body)
    }

    /// Writes `bytes` as they are (stops quietly when the peer has gone: the read that follows says so).
    public func send(_ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes {
                Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            if written <= 0 { return }
            offset += written
        }
    }

    /// Sends one request (with `Content-Length` for a POST or a body) and reads its answer.
    /// - Throws: ``ClientError`` when the answer is incomplete or malformed.
    public func request(
        _ method: String,
        _ target: String,
        body: [UInt8] = [],
        headers: [String] = []
    ) throws -> Response {
        var head = "\(method) \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        for header in headers { head += header + "\r\n" }
        if !body.isEmpty || method == "POST" { head += "Content-Length: \(body.count)\r\n" }
        head += "\r\n"
        send(Array(head.utf8) + body)
        return try readResponse()
    }

    /// Reads the next answer on the connection.
    /// - Throws: ``ClientError`` when the answer is incomplete or malformed.
    public func readResponse() throws -> Response {
        let separator: [UInt8] = [13, 10, 13, 10]
        var headerEnd: Int?
        while headerEnd == nil {
            if let range = findSeparator(separator) { headerEnd = range } else { try fill() }
        }
        let headText = String(decoding: buffer[..<headerEnd!], as: UTF8.self)
        buffer.removeFirst(headerEnd! + 4)
        var lines = headText.components(separatedBy: "\r\n")
        let statusLine = lines.removeFirst().split(separator: " ")
        guard statusLine.count >= 2, let status = Int(statusLine[1]) else { throw ClientError.malformed }
        var headers: [String: String] = [:]
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(
                in: .whitespaces
            )
        }
        let length = Int(headers["content-length"] ?? "0") ?? 0
        while buffer.count < length { try fill() }
        let body = Array(buffer[..<length])
        buffer.removeFirst(length)
        return (status, headers, body)
    }

    private func findSeparator(_ separator: [UInt8]) -> Int? {
        guard buffer.count >= 4 else { return nil }
        for index in 0...(buffer.count - 4) where Array(buffer[index..<index + 4]) == separator { return index }
        return nil
    }

    private func fill() throws {
        var chunk = [UInt8](repeating: 0, count: 65536)
        let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { throw ClientError.closed }
        buffer.append(contentsOf: chunk[..<count])
    }
}
