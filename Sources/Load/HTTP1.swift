#if canImport(Glibc)
internal import Glibc
#endif

/// HTTP/1.1 framing for the transport's fast path: libcurl makes the connections (DNS, connect
/// timeout, TLS with the configured CA), PayStorm writes requests and parses responses on them.
///
/// libcurl 7.88 spends about 10 µs of setup and bookkeeping on every transfer, more than the
/// kernel's loopback TCP costs; over a kept-alive connection a request is one `send` and a response
/// one `recv`, so the framing is done here, small and tested, and libcurl does what it is best at.

/// The parts of an absolute `http://` or `https://` URL that the framing needs.
struct HTTP1Target: Equatable {
    /// `scheme://authority`, the key of a connection pool.
    var origin: Substring
    /// `host[:port]` as written, for the `Host` header.
    var authority: Substring
    /// The path and query (`/` when the URL has none).
    var path: Substring
    /// Whether the scheme is `https`.
    var isTLS: Bool

    /// Splits `url`; nil for anything the fast path leaves to libcurl (another scheme, user info,
    /// a fragment, an empty host).
    init?(_ url: String) {
        let utf8 = url.utf8
        let isTLS: Bool
        let schemeLength: Int
        if utf8.starts(with: "http://".utf8) {
            (isTLS, schemeLength) = (false, 7)
        } else if utf8.starts(with: "https://".utf8) {
            (isTLS, schemeLength) = (true, 8)
        } else {
            return nil
        }
        let authorityStart = utf8.index(utf8.startIndex, offsetBy: schemeLength)
        var authorityEnd = authorityStart
        while authorityEnd != utf8.endIndex {
            let byte = utf8[authorityEnd]
            if byte == UInt8(ascii: "/") || byte == UInt8(ascii: "?") { break }
            if byte == UInt8(ascii: "@") || byte == UInt8(ascii: "#") { return nil }
            authorityEnd = utf8.index(after: authorityEnd)
        }
        guard authorityEnd != authorityStart else { return nil }
        if utf8[authorityEnd...].contains(UInt8(ascii: "#")) { return nil }
        self.isTLS = isTLS
        origin = url[url.startIndex..<authorityEnd]
        authority = url[authorityStart..<authorityEnd]
        path = authorityEnd == url.endIndex ? "/" : url[authorityEnd...]
        if path.first == "?" { return nil }
    }
}

/// Writes HTTP/1.1 requests into a reusable byte buffer.
enum HTTP1RequestWriter {
    /// Writes the request line, `Host` (unless given), the caller's headers and a `Content-Length`
    /// of our own (a given one is dropped: two would be a protocol error), then the body if `body`.
    static func write(_ request: LoadRequest, target: HTTP1Target, into out: inout [UInt8], body: Bool = true) {
        out.removeAll(keepingCapacity: true)
        out.reserveCapacity((body ? request.body.count : 0) + 256)
        out.append(contentsOf: request.method.utf8)
        out.append(UInt8(ascii: " "))
        out.append(contentsOf: target.path.utf8)
        out.append(contentsOf: " HTTP/1.1\r\n".utf8)
        var hasHost = false
        for header in request.headers {
            let name = header.name.utf8
            if equalsIgnoringCase(name, "content-length") || equalsIgnoringCase(name, "expect") {
                continue
            }
            if !hasHost && equalsIgnoringCase(name, "host") { hasHost = true }
            out.append(contentsOf: header.name.utf8)
            out.append(contentsOf: ": ".utf8)
            out.append(contentsOf: header.value.utf8)
            out.append(contentsOf: "\r\n".utf8)
        }
        if !hasHost {
            out.append(contentsOf: "Host: ".utf8)
            out.append(contentsOf: target.authority.utf8)
            out.append(contentsOf: "\r\n".utf8)
        }
        if !request.body.isEmpty || request.method == "POST" || request.method == "PUT" || request.method == "PATCH" {
            out.append(contentsOf: "Content-Length: ".utf8)
            appendDecimal(request.body.count, to: &out)
            out.append(contentsOf: "\r\n".utf8)
        }
        out.append(contentsOf: "\r\n".utf8)
        if body { out.append(contentsOf: request.body) }
    }

    private static func appendDecimal(_ value: Int, to out: inout [UInt8]) {
        var divisor = 1
        while divisor <= value / 10 { divisor *= 10 }
        repeat {
            out.append(UInt8(ascii: "0") + UInt8((value / divisor) % 10))
            divisor /= 10
        } while divisor > 0
    }
}

/// Whether `bytes` spell `lowercase` in any case (header names and tokens are ASCII).
func equalsIgnoringCase(_ bytes: some Collection<UInt8>, _ lowercase: StaticString) -> Bool {
    let expected = UnsafeRawBufferPointer(start: lowercase.utf8Start, count: lowercase.utf8CodeUnitCount)
    guard bytes.count == expected.count else { return false }
    return zip(bytes, expected).allSatisfy { lowercased($0) == $1 }
}

@inline(__always)
func lowercased(_ byte: UInt8) -> UInt8 {
    byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte
}
