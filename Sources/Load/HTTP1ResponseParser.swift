#if canImport(Glibc)
internal import Glibc
#endif

// Parsing HTTP/1.x responses for the transport's fast path (see HTTP1.swift).

/// Why a response could not be parsed (the connection is closed and the request fails).
struct HTTP1ParseError: Error, Equatable {
    var message: String
    init(_ message: String) { self.message = message }
}

/// An incremental HTTP/1.x response parser: status line and headers, then a body framed by
/// `Content-Length`, chunked encoding or the end of the connection. Interim 1xx responses are
/// skipped; `HEAD` answers and 204/304 have no body.
struct HTTP1ResponseParser {
    private enum State: Equatable {
        case head
        case fixed(remaining: Int)
        case chunkSize
        case chunkData(remaining: Int)
        case chunkDataEnd
        case trailers
        case untilClose
        case done
    }

    private var state = State.head
    /// Head (or chunk-size line) bytes not complete yet.
    private var pending: [UInt8] = []
    private var expectsBody = true
    /// The final status, once the head is parsed.
    private(set) var status = 0
    /// Whether the connection may carry another request after this response.
    private(set) var keepAlive = true
    /// Bytes received for this response (head and body), to tell an empty reply from a cut one.
    private(set) var receivedBytes = 0
    /// Seconds the response's `Retry-After` asks the client to wait, nil without a readable one.
    private(set) var retryAfter: Int?
    /// Whether the response is complete.
    var isComplete: Bool { state == .done }

    /// Prepares for the response to a new request (`expectsBody` is false for `HEAD`).
    mutating func reset(expectsBody: Bool) {
        state = .head
        pending.removeAll(keepingCapacity: pending.capacity <= 16 * 1024)
        self.expectsBody = expectsBody
        status = 0
        keepAlive = true
        receivedBytes = 0
        retryAfter = nil
    }

    /// Consumes received bytes, handing body bytes to `body`.
    /// - Returns: whether the response is now complete; bytes beyond its end mean the server sent
    ///   more than one answer, so the connection is not kept.
    mutating func feed(
        _ bytes: UnsafeRawBufferPointer,
        body: (UnsafeRawBufferPointer) -> Void
    ) throws(HTTP1ParseError) -> Bool {
        receivedBytes += bytes.count
        var offset = 0
        while offset < bytes.count {
            switch state {
            case .head:
                offset = try consumeHead(bytes, from: offset)
            case .fixed(let remaining):
                let left = Self.pass(remaining, of: bytes, at: &offset, to: body)
                state = left == 0 ? .done : .fixed(remaining: left)
            case .untilClose:
                body(UnsafeRawBufferPointer(rebasing: bytes[offset...]))
                offset = bytes.count
            case .chunkSize, .chunkDataEnd, .trailers:
                offset = try consumeChunkLine(bytes, from: offset)
            case .chunkData(let remaining):
                let left = Self.pass(remaining, of: bytes, at: &offset, to: body)
                state = left == 0 ? .chunkDataEnd : .chunkData(remaining: left)
            case .done:
                keepAlive = false
                return true
            }
        }
        return state == .done
    }

    /// Hands up to `remaining` body bytes from `bytes[offset...]` to `body`.
    /// - Returns: how many of `remaining` are still to come.
    private static func pass(
        _ remaining: Int,
        of bytes: UnsafeRawBufferPointer,
        at offset: inout Int,
        to body: (UnsafeRawBufferPointer) -> Void
    ) -> Int {
        let count = min(remaining, bytes.count - offset)
        body(UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + count]))
        offset += count
        return remaining - count
    }

    /// Called when the server closed the connection.
    /// - Returns: whether that ends the response (a body framed by the close).
    mutating func finishAtClose() -> Bool {
        keepAlive = false
        if state == .untilClose { state = .done }
        return state == .done
    }

    /// Finds the end of the head in `bytes[offset...]` (joined with earlier bytes) and parses it.
    private mutating func consumeHead(_ bytes: UnsafeRawBufferPointer, from offset: Int) throws(HTTP1ParseError) -> Int
    {
        // The head usually arrives whole in one read: parse it in place, without copying.
        if pending.isEmpty, let end = headEnd(bytes, from: offset, searchFrom: offset) {
            try parseHead(UnsafeRawBufferPointer(rebasing: bytes[offset..<end]))
            return end
        }
        let searchFrom = max(0, pending.count - 3)
        pending.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[offset...]))
        guard pending.count <= 64 * 1024 else { throw HTTP1ParseError("response head over 64 KiB") }
        let end = pending.withUnsafeBytes { headEnd($0, from: 0, searchFrom: searchFrom) }
        guard let end else { return bytes.count }
        let used = end - (pending.count - (bytes.count - offset))
        let head = pending
        pending.removeAll(keepingCapacity: true)
        var failure: HTTP1ParseError?
        head.withUnsafeBytes { buffer in
            do throws(HTTP1ParseError) {
                try parseHead(UnsafeRawBufferPointer(rebasing: buffer[0..<end]))
            } catch {
                failure = error
            }
        }
        if let failure { throw failure }
        return offset + used
    }

    /// The index just past the blank line ending a head (CRLF CRLF, or bare LF LF), if present.
    private func headEnd(_ bytes: UnsafeRawBufferPointer, from start: Int, searchFrom: Int) -> Int? {
        guard let base = bytes.baseAddress else { return nil }
        var index = max(searchFrom, start)
        while index < bytes.count, let found = memchr(base + index, 10, bytes.count - index) {
            index = base.distance(to: UnsafeRawPointer(found))
            if index + 1 < bytes.count && bytes[index + 1] == 10 { return index + 2 }
            if index + 2 < bytes.count && bytes[index + 1] == 13 && bytes[index + 2] == 10 { return index + 3 }
            index += 1
        }
        return nil
    }

    private mutating func parseHead(_ head: UnsafeRawBufferPointer) throws(HTTP1ParseError) {
        var lines = HeadLines(head)
        guard let statusLine = lines.next() else { throw HTTP1ParseError("empty status line") }
        // HTTP/1.x SSS[ reason]
        guard statusLine.count >= 12, statusLine.starts(with: "HTTP/1.".utf8), statusLine[8] == UInt8(ascii: " "),
            let code = threeDigits(statusLine, at: 9)
        else {
            throw HTTP1ParseError("not an HTTP/1.x status line")
        }
        let minor = statusLine[7]
        var keepAlive = minor != UInt8(ascii: "0")
        var contentLength: Int?
        var chunked = false
        while let line = lines.next() {
            // Only four headers matter, all starting with c, t or r: skip the rest cheaply.
            let first = lowercased(line[0])
            guard first == UInt8(ascii: "c") || first == UInt8(ascii: "t") || first == UInt8(ascii: "r"),
                let colon = line.firstIndex(of: UInt8(ascii: ":"))
            else { continue }
            let name = UnsafeRawBufferPointer(rebasing: line[..<colon])
            let value = trimmed(UnsafeRawBufferPointer(rebasing: line[(colon + 1)...]))
            if nameEquals(name, "content-length") {
                guard let length = decimal(value) else { throw HTTP1ParseError("bad Content-Length") }
                contentLength = length
            } else if nameEquals(name, "transfer-encoding") {
                chunked = containsToken(value, "chunked")
            } else if nameEquals(name, "connection") {
                if containsToken(value, "close") { keepAlive = false }
                if containsToken(value, "keep-alive") { keepAlive = true }
            } else if nameEquals(name, "retry-after") {
                retryAfter = retryAfterSeconds(value, now: time(nil))
            }
        }
        if (100..<200).contains(code) {
            guard code != 101 else { throw HTTP1ParseError("the server switched protocols (101)") }
            return  // an interim answer: the real one follows
        }
        status = code
        self.keepAlive = keepAlive
        if !expectsBody || code == 204 || code == 304 {
            state = .done
        } else if chunked {
            state = .chunkSize
        } else if let contentLength {
            state = contentLength == 0 ? .done : .fixed(remaining: contentLength)
        } else {
            self.keepAlive = false
            state = .untilClose
        }
    }

    /// Consumes a chunk-size line, the CRLF after chunk data, or a trailer line.
    private mutating func consumeChunkLine(
        _ bytes: UnsafeRawBufferPointer,
        from offset: Int
    ) throws(HTTP1ParseError) -> Int {
        guard let newline = bytes[offset...].firstIndex(of: 10) else {
            pending.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[offset...]))
            guard pending.count <= 8 * 1024 else { throw HTTP1ParseError("chunk line over 8 KiB") }
            return bytes.count
        }
        pending.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[offset..<newline]))
        var line = pending
        pending.removeAll(keepingCapacity: true)
        if line.last == 13 { line.removeLast() }
        switch state {
        case .chunkSize:
            let sizeText = line.prefix { $0 != UInt8(ascii: ";") }
            guard let size = hexadecimal(sizeText) else { throw HTTP1ParseError("bad chunk size") }
            state = size == 0 ? .trailers : .chunkData(remaining: size)
        case .chunkDataEnd:
            guard line.isEmpty else { throw HTTP1ParseError("chunk data longer than its size") }
            state = .chunkSize
        default:  // trailers, ended by an empty line
            if line.isEmpty { state = .done }
        }
        return newline + 1
    }
}

/// Iterates the lines of a head (CRLF or LF separated), as byte slices.
private struct HeadLines {
    let bytes: UnsafeRawBufferPointer
    var position = 0
    init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    /// The next line, rebased so that its first byte is at index 0; nil at the blank line or the end.
    mutating func next() -> UnsafeRawBufferPointer? {
        guard position < bytes.count else { return nil }
        let start = position
        var end = bytes.count
        if let found = memchr(bytes.baseAddress! + start, 10, bytes.count - start) {
            end = bytes.baseAddress!.distance(to: UnsafeRawPointer(found))
        }
        position = end + 1
        let lineEnd = end > start && bytes[end - 1] == 13 ? end - 1 : end
        if lineEnd == start { return nil }  // the blank line
        return UnsafeRawBufferPointer(rebasing: bytes[start..<lineEnd])
    }
}

private func threeDigits(_ line: UnsafeRawBufferPointer, at offset: Int) -> Int? {
    var value = 0
    for index in offset..<offset + 3 {
        let digit = Int(line[index]) - 48
        guard (0...9).contains(digit) else { return nil }
        value = value * 10 + digit
    }
    if offset + 3 < line.count && line[offset + 3] != UInt8(ascii: " ") { return nil }
    return value
}

private func trimmed(_ bytes: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer {
    var start = 0
    var end = bytes.count
    while start < end && (bytes[start] == 32 || bytes[start] == 9) { start += 1 }
    while end > start && (bytes[end - 1] == 32 || bytes[end - 1] == 9) { end -= 1 }
    return UnsafeRawBufferPointer(rebasing: bytes[start..<end])
}

private func nameEquals(_ name: UnsafeRawBufferPointer, _ lowercase: StaticString) -> Bool {
    equalsIgnoringCase(trimmed(name), lowercase)
}

/// Whether a comma-separated header value lists `token` (case-insensitive).
private func containsToken(_ value: UnsafeRawBufferPointer, _ token: StaticString) -> Bool {
    var start = 0
    while start <= value.count {
        var end = start
        while end < value.count && value[end] != UInt8(ascii: ",") { end += 1 }
        if nameEquals(UnsafeRawBufferPointer(rebasing: value[start..<end]), token) { return true }
        start = end + 1
    }
    return false
}

/// The seconds a `Retry-After` value asks for: delta-seconds, or an HTTP date (the IMF-fixdate form every
/// sender must use, `Sun, 06 Nov 1994 08:49:37 GMT`) less `now` (Unix seconds), never below 0. Nil for
/// anything else (the obsolete date forms included).
func retryAfterSeconds(_ value: UnsafeRawBufferPointer, now: Int) -> Int? {
    if let seconds = decimal(value) { return seconds }
    guard value.count == 29, value[3] == UInt8(ascii: ","), value[25] == 32,
        equalsIgnoringCase(UnsafeRawBufferPointer(rebasing: value[26...]), "gmt")
    else { return nil }
    func number(_ start: Int, _ count: Int) -> Int? {
        decimal(UnsafeRawBufferPointer(rebasing: value[start..<start + count]))
    }
    let names: [StaticString] = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
    let month = names.firstIndex { equalsIgnoringCase(UnsafeRawBufferPointer(rebasing: value[8..<11]), $0) }.map {
        $0 + 1
    }
    guard let month, let day = number(5, 2), let year = number(12, 4), let hour = number(17, 2),
        let minute = number(20, 2), let second = number(23, 2), value[19] == 58, value[22] == 58
    else { return nil }
    // Days from 1970-01-01 to the civil date (Howard Hinnant's days_from_civil).
    let y = month <= 2 ? year - 1 : year
    let era = (y >= 0 ? y : y - 399) / 400
    let yearOfEra = y - era * 400
    let dayOfYear = (153 * ((month + 9) % 12) + 2) / 5 + day - 1
    let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
    let days = era * 146_097 + dayOfEra - 719_468
    let date = days * 86_400 + hour * 3600 + minute * 60 + second
    return max(0, date - now)
}

private func decimal(_ bytes: UnsafeRawBufferPointer) -> Int? {
    guard !bytes.isEmpty, bytes.count <= 18 else { return nil }
    var value = 0
    for byte in bytes {
        guard byte >= 48 && byte <= 57 else { return nil }
        value = value * 10 + Int(byte - 48)
    }
    return value
}

private func hexadecimal(_ bytes: some Collection<UInt8>) -> Int? {
    var value = 0
    var count = 0
    for byte in bytes {
        if byte == 32 || byte == 9 { continue }
        let digit: Int
        switch byte {
        case 48...57: digit = Int(byte) - 48
        case 65...70: digit = Int(byte) - 55
        case 97...102: digit = Int(byte) - 87
        default: return nil
        }
        count += 1
        guard count <= 15 else { return nil }
        value = value * 16 + digit
    }
    return count == 0 ? nil : value
}
