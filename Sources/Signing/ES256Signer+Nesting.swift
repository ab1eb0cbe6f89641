internal import COpenSSL
internal import Foundation

/// A payload that carries JWS of its own signer as JSON strings (a notification's nested transaction and
/// renewal info), given in parts: the outer JSON's pieces around the nested JWS, and the nested payloads, as
/// ranges of one buffer.
///
/// The outer payload is `pieces[0] ‖ JWS(nested[0]) ‖ pieces[1] ‖ … ‖ JWS(nested[n-1]) ‖ pieces[n]`.
public struct NestingPayload: Sendable, Hashable {
    /// The outer JSON's pieces: one more than the nested payloads.
    public var pieces: [Range<Int>]
    /// The nested payloads; the JWS of `nested[i]` stands between `pieces[i]` and `pieces[i + 1]`.
    public var nested: [Range<Int>]

    /// Creates the layout of a nesting payload.
    /// - Parameters:
    ///   - pieces: the outer JSON's pieces, `nested.count + 1` of them.
    ///   - nested: the nested payloads.
    public init(pieces: [Range<Int>], nested: [Range<Int>]) {
        self.pieces = pieces
        self.nested = nested
    }
}

/// Signing a nesting payload in one pass: the nested JWS are signed into a scratch buffer and the outer
/// payload's base64url is written straight from its parts, so the outer JSON (12 KB for a notification, two
/// 4 KB headers in it) is never assembled, copied or searched.
extension ES256Signer {
    /// Signs a nesting payload into a compact JWS, byte for byte the JWS that ``sign(payload:)`` gives for
    /// the assembled outer payload (apart from the randomized ECDSA signatures).
    /// - Parameters:
    ///   - payload: the layout of the outer JSON and the nested payloads in `json`.
    ///   - json: the bytes the layout's ranges point into.
    ///   - nestedJWS: receives each nested JWS with its index, for a caller that keeps them.
    /// - Returns: the outer JWS.
    /// - Throws: `SigningError` when OpenSSL fails; a layout whose ranges do not fit `json` is a programming
    ///   error (a precondition).
    public func sign(
        _ payload: NestingPayload,
        in json: UnsafeBufferPointer<UInt8>,
        nestedJWS: ((Int, String) -> Void)? = nil
    ) throws -> String {
        let length = compactLength(payload)
        return try String(unsafeUninitializedCapacity: length) { buffer in
            try write(payload, in: json, into: buffer.baseAddress!, nestedJWS: nestedJWS)
        }
    }

    /// Signs a nesting payload into a compact JWS between `prefix` and `suffix`, in one buffer of the final
    /// size (a webhook body, `{"signedPayload":"<JWS>"}`).
    /// - Parameters:
    ///   - payload: the layout of the outer JSON and the nested payloads in `json`.
    ///   - json: the bytes the layout's ranges point into.
    ///   - prefix: the bytes before the JWS.
    ///   - suffix: the bytes after it.
    /// - Returns: `prefix ‖ JWS ‖ suffix`.
    /// - Throws: `SigningError` when OpenSSL fails.
    public func sign(
        _ payload: NestingPayload,
        in json: UnsafeBufferPointer<UInt8>,
        between prefix: [UInt8],
        and suffix: [UInt8]
    ) throws -> [UInt8] {
        let length = compactLength(payload)
        let total = prefix.count + length + suffix.count
        return try [UInt8](unsafeUninitializedCapacity: total) { buffer, written in
            let base = buffer.baseAddress!
            prefix.withUnsafeBufferPointer { copyBytes($0, to: base) }
            _ = try write(payload, in: json, into: base + prefix.count, nestedJWS: nil)
            suffix.withUnsafeBufferPointer { copyBytes($0, to: base + prefix.count + length) }
            written = total
        }
    }

    /// The length of a nested JWS's text after its header segment and dot: payload text, dot, signature text.
    private func tailLength(_ payloadCount: Int) -> Int {
        JWS.base64URLLength(payloadCount) + 1 + PKeyContext.rawSignatureTextLength
    }

    /// The length of the outer JWS.
    func compactLength(_ payload: NestingPayload) -> Int {
        let outer =
            payload.pieces.reduce(0) { $0 + $1.count }
            + payload.nested.reduce(0) { $0 + headerSegment.count + 1 + tailLength($1.count) }
        return headerSegment.count + 1 + JWS.base64URLLength(outer) + 1 + PKeyContext.rawSignatureTextLength
    }

    /// Writes the outer JWS at `output` (room for ``compactLength(_:)`` bytes).
    /// - Returns: how many bytes were written.
    private func write(
        _ payload: NestingPayload,
        in json: UnsafeBufferPointer<UInt8>,
        into output: UnsafeMutablePointer<UInt8>,
        nestedJWS: ((Int, String) -> Void)?
    ) throws -> Int {
        precondition(payload.pieces.count == payload.nested.count + 1, "a nesting payload needs n + 1 pieces")
        let fits = { (range: Range<Int>) in range.lowerBound >= 0 && range.upperBound <= json.count }
        precondition(payload.pieces.allSatisfy(fits) && payload.nested.allSatisfy(fits), "ranges lie in the bytes")
        let scratchLength = payload.nested.reduce(0) { $0 + tailLength($1.count) }
        return try pool.withContext { context in
            try withUnsafeTemporaryAllocation(of: UInt8.self, capacity: max(1, scratchLength)) { scratch in
                // The nested JWS after their header and dot, one after the other.
                var offset = 0
                for (index, range) in payload.nested.enumerated() {
                    let start = scratch.baseAddress! + offset
                    let count = try writeTail(UnsafeBufferPointer(rebasing: json[range]), at: start, using: context)
                    offset += count
                    nestedJWS?(index, nestedText(UnsafeBufferPointer(start: start, count: count)))
                }
                let tails = UnsafeBufferPointer(rebasing: scratch[..<offset])
                return try writeOuter(payload, in: json, tails: tails, into: output, using: context)
            }
        }
    }

    /// Writes `base64url(payload) "." signature` of a nested JWS at `output`, hashed after the kept header state.
    private func writeTail(
        _ payload: UnsafeBufferPointer<UInt8>,
        at output: UnsafeMutablePointer<UInt8>,
        using context: PKeyContext
    ) throws -> Int {
        let encoded = JWS.encodeBase64URL(payload, into: output)
        var stream = try SHA256Stream(from: prefixHash, in: context.digestContext)
        if prefixHash == nil { try hashHeader(into: &stream) }
        try stream.update(UnsafeBufferPointer(start: output, count: encoded))
        var digest = SHA256Digest()
        try stream.finish(into: &digest)
        output[encoded] = UInt8(ascii: ".")
        return try encoded + 1 + context.writeRawSignature(digest: &digest, base64URLAt: output + encoded + 1)
    }

    /// A nested JWS as a String: the header segment, a dot and its tail.
    private func nestedText(_ tail: UnsafeBufferPointer<UInt8>) -> String {
        String(unsafeUninitializedCapacity: headerSegment.count + 1 + tail.count) { text in
            let base = text.baseAddress!
            headerSegment.withUnsafeBufferPointer { base.initialize(from: $0.baseAddress!, count: $0.count) }
            base[headerSegment.count] = UInt8(ascii: ".")
            (base + headerSegment.count + 1).initialize(from: tail.baseAddress!, count: tail.count)
            return headerSegment.count + 1 + tail.count
        }
    }

    /// Hashes the header segment and its dot, when no kept state holds them (OpenSSL could not allocate one).
    private func hashHeader(into stream: inout SHA256Stream) throws {
        try (headerSegment + [UInt8(ascii: ".")]).withUnsafeBufferPointer { try stream.update($0) }
    }

    /// Writes the outer JWS: its header segment, the base64url of the outer payload streamed from its parts
    /// (the opening up to the first nested header's end from the kept prefixes, later headers from the kept
    /// encodings), and its signature. `tails` holds the nested JWS after their header and dot, one after another.
    private func writeOuter(
        _ payload: NestingPayload,
        in json: UnsafeBufferPointer<UInt8>,
        tails: UnsafeBufferPointer<UInt8>,
        into output: UnsafeMutablePointer<UInt8>,
        using context: PKeyContext
    ) throws -> Int {
        try headerSegment.withUnsafeBufferPointer { header in
            output.initialize(from: header.baseAddress!, count: header.count)
            output[header.count] = UInt8(ascii: ".")
            let payloadStart = header.count + 1
            var text = Base64URLStream(output: output, position: payloadStart)
            let opening = UnsafeBufferPointer(rebasing: json[payload.pieces[0]])
            var stream: SHA256Stream
            let hashed: Int
            if payload.nested.isEmpty {
                stream = try SHA256Stream(from: prefixHash, in: context.digestContext)
                if prefixHash == nil { try hashHeader(into: &stream) }
                hashed = payloadStart
            } else {
                stream = try openOuter(opening, header: header, text: &text, using: context)
                hashed = text.position
            }
            var tailStart = 0
            for (index, nested) in payload.nested.enumerated() {
                if index > 0 {
                    text.encode(UnsafeBufferPointer(rebasing: json[payload.pieces[index]]))
                    text.encodeHeader(header, texts: repeated)
                }
                let tailEnd = tailStart + tailLength(nested.count)
                text.encode(byte: UInt8(ascii: "."))
                text.encode(UnsafeBufferPointer(rebasing: tails[tailStart..<tailEnd]))
                tailStart = tailEnd
            }
            text.encode(UnsafeBufferPointer(rebasing: json[payload.pieces[payload.nested.count]]))
            text.finish()
            try stream.update(UnsafeBufferPointer(start: output + hashed, count: text.position - hashed))
            var digest = SHA256Digest()
            try stream.finish(into: &digest)
            output[text.position] = UInt8(ascii: ".")
            let signature = try context.writeRawSignature(digest: &digest, base64URLAt: output + text.position + 1)
            return text.position + 1 + signature
        }
    }

    /// Writes the outer payload's text up to the first nested header's last whole 3-byte group, from the kept
    /// prefix of this opening when there is one (else encoding it and keeping it), and returns the digest
    /// state after it.
    private func openOuter(
        _ opening: UnsafeBufferPointer<UInt8>,
        header: UnsafeBufferPointer<UInt8>,
        text: inout Base64URLStream,
        using context: PKeyContext
    ) throws -> SHA256Stream {
        let length = (opening.count + header.count) / 3 * 3
        let start = text.position
        if let known = repeated.lookup(opening: opening, length: length) {
            text.copy(known.encoded)
            text.hold(UnsafeBufferPointer(rebasing: header[(length - opening.count)...]))
            return try SHA256Stream(from: known.hash, in: context.digestContext)
        }
        var stream = try SHA256Stream(from: prefixHash, in: context.digestContext)
        if prefixHash == nil { try hashHeader(into: &stream) }
        text.encode(opening)
        text.encodeHeader(header, texts: repeated)
        let encoded = UnsafeBufferPointer(start: text.output + start, count: text.position - start)
        try stream.update(encoded)
        repeated.remember(
            RepeatedPrefix(
                bytes: Array(opening) + Array(header[..<(length - opening.count)]),
                headerAt: opening.count,
                encoded: Array(encoded),
                hash: try stream.snapshot()
            )
        )
        return stream
    }
}

/// Copies `bytes` to `destination` (nothing for an empty buffer).
private func copyBytes(_ bytes: UnsafeBufferPointer<UInt8>, to destination: UnsafeMutablePointer<UInt8>) {
    guard let source = bytes.baseAddress else { return }
    destination.initialize(from: source, count: bytes.count)
}

/// Base64url of a byte stream given in pieces, written at a raw output: up to two bytes wait for the next
/// piece to complete their 3-byte group.
struct Base64URLStream {
    let output: UnsafeMutablePointer<UInt8>
    /// Where the next character goes.
    private(set) var position: Int
    /// The bytes of the group in progress (the first `heldCount`).
    private var held: (UInt8, UInt8, UInt8) = (0, 0, 0)
    private var heldCount = 0

    init(output: UnsafeMutablePointer<UInt8>, position: Int) {
        self.output = output
        self.position = position
    }

    /// Encodes `bytes` after what came before.
    mutating func encode(_ bytes: UnsafeBufferPointer<UInt8>) {
        var start = 0
        if heldCount > 0 {
            start = min(3 - heldCount, bytes.count)
            hold(UnsafeBufferPointer(rebasing: bytes[..<start]))
            if heldCount > 0 { return }
        }
        let whole = (bytes.count - start) / 3 * 3
        let groups = UnsafeBufferPointer(rebasing: bytes[start..<(start + whole)])
        position += JWS.encodeBase64URL(groups, into: output + position)
        hold(UnsafeBufferPointer(rebasing: bytes[(start + whole)...]))
    }

    /// Encodes one byte after what came before.
    mutating func encode(byte: UInt8) {
        hold(byte: byte)
    }

    /// Encodes the signer's header, copying its text at this alignment from the kept encodings.
    mutating func encodeHeader(_ header: UnsafeBufferPointer<UInt8>, texts: RepeatedPrefixes) {
        let alignment = (3 - heldCount) % 3
        encode(UnsafeBufferPointer(rebasing: header[..<alignment]))
        copy(texts.headerText(alignment: alignment, header: header))
        hold(UnsafeBufferPointer(rebasing: header[(alignment + (header.count - alignment) / 3 * 3)...]))
    }

    /// Appends text already encoded (whole groups: nothing may be held).
    mutating func copy(_ text: [UInt8]) {
        precondition(heldCount == 0, "encoded text follows whole groups")
        text.withUnsafeBufferPointer { copyBytes($0, to: output + position) }
        position += text.count
    }

    /// Holds bytes that start the next group (at most two, or they complete one).
    mutating func hold(_ bytes: UnsafeBufferPointer<UInt8>) {
        for byte in bytes { hold(byte: byte) }
    }

    private mutating func hold(byte: UInt8) {
        switch heldCount {
        case 0: held.0 = byte
        case 1: held.1 = byte
        default: held.2 = byte
        }
        heldCount += 1
        guard heldCount == 3 else { return }
        emitHeld()
    }

    /// Encodes the held bytes: a whole group, or base64url's short last group at the end.
    private mutating func emitHeld() {
        let count = heldCount
        withUnsafeBytes(of: &held) {
            position += JWS.encodeBase64URL(
                UnsafeBufferPointer(rebasing: $0.bindMemory(to: UInt8.self)[..<count]),
                into: output + position
            )
        }
        heldCount = 0
    }

    /// Encodes the bytes still held (the end of the stream).
    mutating func finish() {
        if heldCount > 0 { emitHeld() }
    }
}
