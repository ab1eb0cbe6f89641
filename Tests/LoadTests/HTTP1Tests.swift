import Testing

@testable import Load

/// Feeds `text` to a fresh parser in pieces of `piece` bytes; returns the parser, the body and
/// whether the response completed (nil when it threw).
func parse(
    _ text: String,
    piece: Int = .max,
    expectsBody: Bool = true,
    closeAtEnd: Bool = false
) -> (parser: HTTP1ResponseParser, body: String, complete: Bool)? {
    var parser = HTTP1ResponseParser()
    parser.reset(expectsBody: expectsBody)
    var body: [UInt8] = []
    var complete = false
    let bytes = Array(text.utf8)
    var offset = 0
    while offset < bytes.count && !complete {
        let end = min(bytes.count, offset + min(piece, bytes.count))
        do {
            complete = try bytes[offset..<end].withUnsafeBytes { chunk throws(HTTP1ParseError) in
                try parser.feed(chunk) { body.append(contentsOf: $0) }
            }
        } catch {
            return nil
        }
        offset = end
    }
    if closeAtEnd && !complete { complete = parser.finishAtClose() }
    return (parser, String(decoding: body, as: UTF8.self), complete)
}

struct HTTP1ResponseParserTests {
    static let responses: [(name: String, text: String, status: Int, body: String, keepAlive: Bool)] = [
        ("content-length", "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello", 200, "hello", true),
        ("no reason", "HTTP/1.1 204\r\n\r\n", 204, "", true),
        ("header case", "HTTP/1.1 201 Created\r\ncOnTeNt-LeNgTh:  2 \r\n\r\nok", 201, "ok", true),
        (
            "chunked with extension and trailer",
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;x=1\r\nhello\r\nA\r\n, world!!!\r\n0\r\nX-T: 1\r\n\r\n",
            200, "hello, world!!!", true
        ),
        ("connection close", "HTTP/1.1 500 X\r\nConnection: close\r\nContent-Length: 1\r\n\r\n!", 500, "!", false),
        ("http/1.0 closes", "HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nhi", 200, "hi", false),
        (
            "http/1.0 keep-alive", "HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\nContent-Length: 2\r\n\r\nhi", 200,
            "hi",
            true
        ),
        (
            "interim 100", "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n", 202, "",
            true
        ),
        ("bare LF", "HTTP/1.1 404 Not Found\nContent-Length: 3\n\nnah", 404, "nah", true),
        ("304 ignores length", "HTTP/1.1 304 Not Modified\r\nContent-Length: 99\r\n\r\n", 304, "", true),
    ]

    @Test(arguments: responses.indices)
    func parsesWholeResponses(index: Int) throws {
        let expected = Self.responses[index]
        let result = try #require(parse(expected.text), "\(expected.name)")
        #expect(result.complete, "\(expected.name)")
        #expect(result.parser.status == expected.status, "\(expected.name)")
        #expect(result.body == expected.body, "\(expected.name)")
        #expect(result.parser.keepAlive == expected.keepAlive, "\(expected.name)")
    }

    @Test(arguments: responses.indices)
    func parsesResponsesSplitAtEveryByte(index: Int) throws {
        let expected = Self.responses[index]
        for piece in [1, 2, 3, 7] {
            let result = try #require(parse(expected.text, piece: piece), "\(expected.name) in \(piece)-byte pieces")
            #expect(result.complete && result.body == expected.body, "\(expected.name) in \(piece)-byte pieces")
            #expect(result.parser.status == expected.status)
        }
    }

    @Test func endsABodyWithoutLengthAtTheClose() throws {
        let open = try #require(parse("HTTP/1.1 200 OK\r\n\r\nstream", piece: 4))
        #expect(!open.complete)
        let closed = try #require(parse("HTTP/1.1 200 OK\r\n\r\nstream", piece: 4, closeAtEnd: true))
        #expect(closed.complete && closed.body == "stream" && !closed.parser.keepAlive)
    }

    @Test func knowsACutResponseIsIncomplete() throws {
        let cut = try #require(parse("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort", closeAtEnd: true))
        #expect(!cut.complete)
        #expect(cut.parser.receivedBytes > 0)
    }

    @Test func readsNoBodyForHead() throws {
        let head = try #require(parse("HTTP/1.1 200 OK\r\nContent-Length: 42\r\n\r\n", expectsBody: false))
        #expect(head.complete && head.body.isEmpty && head.parser.keepAlive)
    }

    @Test func doesNotKeepAConnectionThatSentMoreThanOneAnswer() throws {
        let extra = try #require(parse("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokHTTP/1.1 200 OK\r\n"))
        #expect(extra.complete && extra.body == "ok" && !extra.parser.keepAlive)
    }

    @Test(arguments: [
        "SSH-2.0-OpenSSH\r\n\r\n",
        "HTTP/2 200\r\n\r\n",
        "HTTP/1.1 2x0 OK\r\n\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: 12a\r\n\r\n",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabc\r\n",
        "HTTP/1.1 101 Switching Protocols\r\n\r\n",
    ])
    func rejectsMalformedResponses(text: String) {
        #expect(parse(text) == nil)
    }

    @Test func readsRetryAfterAsSecondsAndForgetsItAtTheNextResponse() throws {
        let limited = try #require(parse("HTTP/1.1 429 Too Many\r\nretry-after:  120 \r\nContent-Length: 0\r\n\r\n"))
        #expect(limited.parser.status == 429 && limited.parser.retryAfter == 120)
        var parser = limited.parser
        parser.reset(expectsBody: true)
        #expect(parser.retryAfter == nil)
        #expect(parse("HTTP/1.1 503 X\r\nRetry-After: soon\r\nContent-Length: 0\r\n\r\n")?.parser.retryAfter == nil)
    }

    @Test(arguments: [
        ("Wed, 21 Oct 2015 07:28:00 GMT", 1_445_412_480 - 30, 30),
        ("Sun, 06 Nov 1994 08:49:37 GMT", 784_111_777, 0),
        ("sun, 06 nov 1994 08:49:37 gmt", 784_111_777 - 1, 1),
        ("Thu, 29 Feb 2024 23:59:59 GMT", 1_709_251_199 - 90, 90),
        ("Sun, 06 Nov 1994 08:49:37 GMT", 784_111_777 + 5, 0),
    ])
    func readsRetryAfterAsAnHTTPDate(date: String, now: Int, seconds: Int) {
        let value = Array(date.utf8)
        #expect(value.withUnsafeBytes { retryAfterSeconds($0, now: now) } == seconds)
    }

    @Test(arguments: ["Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994", "Sun, 06 Nov 1994 08:49:37 UTC"])
    func leavesRetryAfterItCannotReadUnread(value: String) {
        #expect(Array(value.utf8).withUnsafeBytes { retryAfterSeconds($0, now: 0) } == nil)
    }

    @Test func resetsBetweenResponses() throws {
        var parser = HTTP1ResponseParser()
        for status in [200, 503] {
            parser.reset(expectsBody: true)
            let text = Array("HTTP/1.1 \(status) X\r\nContent-Length: 0\r\n\r\n".utf8)
            let complete = try text.withUnsafeBytes { chunk throws(HTTP1ParseError) in
                try parser.feed(chunk) { _ in }
            }
            #expect(complete && parser.status == status)
        }
    }
}

struct HTTP1RequestWriterTests {
    func written(_ request: LoadRequest) throws -> String {
        let target = try #require(HTTP1Target(request.url))
        var out: [UInt8] = []
        HTTP1RequestWriter.write(request, target: target, into: &out)
        return String(decoding: out, as: UTF8.self)
    }

    @Test func writesAGetWithHost() throws {
        let request = LoadRequest(id: 1, url: "http://127.0.0.1:8080/a/b?c=d")
        #expect(try written(request) == "GET /a/b?c=d HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n\r\n")
    }

    @Test func writesAPostWithItsOwnContentLength() throws {
        var request = LoadRequest(
            id: 1,
            method: "POST",
            url: "https://example.test",
            headers: [("Content-Type", "application/json"), ("content-length", "999"), ("Expect", "")],
            body: Array("{}".utf8)
        )
        #expect(
            try written(request)
                == "POST / HTTP/1.1\r\nContent-Type: application/json\r\nHost: example.test\r\nContent-Length: 2\r\n\r\n{}"
        )
        request.body = []
        #expect(try written(request).hasSuffix("Content-Length: 0\r\n\r\n"))
    }

    @Test func keepsTheCallersHost() throws {
        let request = LoadRequest(id: 1, url: "http://[::1]:9/", headers: [("host", "staging.test")])
        #expect(try written(request) == "GET / HTTP/1.1\r\nhost: staging.test\r\n\r\n")
    }

    @Test(arguments: [
        ("http://h/x", "http://h", "h", "/x", false),
        ("https://h:8443", "https://h:8443", "h:8443", "/", true),
        ("http://[::1]:80/p?q", "http://[::1]:80", "[::1]:80", "/p?q", false),
    ])
    func splitsURLs(url: String, origin: String, authority: String, path: String, isTLS: Bool) throws {
        let target = try #require(HTTP1Target(url))
        #expect(target.origin == origin && target.authority == authority)
        #expect(target.path == path && target.isTLS == isTLS)
    }

    @Test(arguments: ["ftp://h/", "http://user:pw@h/", "http://h/#frag", "http:///x", "http://h?q", "h/x"])
    func leavesOtherURLsToLibcurl(url: String) {
        #expect(HTTP1Target(url) == nil)
    }
}
