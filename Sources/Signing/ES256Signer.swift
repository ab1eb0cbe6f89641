internal import COpenSSL
internal import Foundation
internal import Synchronization

/// The fast signing path: the header (`alg` ES256, `x5c` = leaf, intermediate, root) is
/// encoded and hashed once; each call only encodes the payload and signs.
///
/// A payload that embeds a JWS of this signer (a notification carries its nested transaction and
/// renewal info) starts with the same bytes from one call to the next, up to and including that
/// nested JWS's header: those bytes' base64url text and the digest state after them are kept
/// (a few at a time), so each call encodes and hashes only what changed.
///
/// Safe to call from any number of threads: each call borrows its own OpenSSL context from a pool.
public struct ES256Signer: Sendable {
    let headerSegment: [UInt8]
    let prefixHash: PrefixHash?
    let pool: PKeyContextPool
    let repeated: RepeatedPrefixes

    /// Creates a signer for a PKI's leaf key and chain.
    public init(pki: TestPKI) {
        self.init(key: pki.leafKey, header: JWSHeader(alg: "ES256", x5c: JWS.x5c(pki.chain), typ: nil))
    }

    /// Creates a signer for any key and a fixed header (forgeries: other chains or `alg`).
    public init(key: SigningKey, header: JWSHeader) {
        // Encoding a Codable struct of strings cannot fail.
        headerSegment = Array(JWS.base64URL((try? header.jsonBytes()) ?? []).utf8)
        // The header (about 3 KB with x5c) is the same for every JWS: hash it once.
        prefixHash = try? PrefixHash(headerSegment + [UInt8(ascii: ".")])
        pool = PKeyContextPool(key: key, mode: .sign)
        repeated = RepeatedPrefixes()
    }

    /// How many repeated prefixes the signer keeps (for tests).
    var keptPrefixCount: Int { repeated.count }

    /// Signs one payload into a compact JWS.
    /// - Throws: `SigningError` when OpenSSL fails (not expected with a valid P-256 key).
    public func sign(payload: [UInt8]) throws -> String {
        var output: [UInt8] = []
        try append(payload: payload, to: &output)
        return String(decoding: output, as: UTF8.self)
    }

    /// Appends the compact JWS of `payload` to `output`, so a caller that embeds it writes it in place.
    ///
    /// A payload that embeds JWS of this signer is searched for their header; a caller that builds such a
    /// payload from parts signs it faster with ``sign(_:in:nestedJWS:)``.
    /// - Throws: `SigningError` when OpenSSL fails.
    public func append(payload: [UInt8], to output: inout [UInt8]) throws {
        // One pooled context per call: its key context signs and its digest context hashes, so a signature
        // allocates no OpenSSL context of its own.
        try pool.withContext { context in try append(payload: payload, to: &output, using: context) }
    }

    private func append(payload: [UInt8], to output: inout [UInt8], using context: PKeyContext) throws {
        try payload.withUnsafeBufferPointer { payload in
            let position = RepeatedPrefixes.headerPosition(payload, nestedHeader: headerSegment, from: 0)
            let length = position.map { ($0 + headerSegment.count) / 3 * 3 }
            let known = length.flatMap { repeated.lookup(payload, length: $0) }
            output.reserveCapacity(output.count + headerSegment.count + 1 + (payload.count * 4 + 2) / 3 + 1 + 86)
            output.append(contentsOf: headerSegment)
            output.append(UInt8(ascii: "."))
            let payloadStart = output.count
            var stream = try SHA256Stream(from: known?.hash ?? prefixHash, in: context.digestContext)
            if known == nil && prefixHash == nil {
                // No kept header state (OpenSSL could not allocate one at init): hash the header here.
                try output.withUnsafeBufferPointer {
                    try stream.update(UnsafeBufferPointer(rebasing: $0[..<payloadStart]))
                }
            }
            if let known {
                output.append(contentsOf: known.encoded)
                appendEncoded(
                    payload,
                    from: known.length,
                    nestedHeaderAt: RepeatedPrefixes.headerPosition(
                        payload,
                        nestedHeader: headerSegment,
                        from: known.length
                    ),
                    to: &output
                )
                try output.withUnsafeBufferPointer {
                    try stream.update(UnsafeBufferPointer(rebasing: $0[(payloadStart + known.encoded.count)...]))
                }
            } else if let position, let length {
                // Remember the repeated part on the way: its text and the state after it cost no extra hashing.
                JWS.appendBase64URL(UnsafeBufferPointer(rebasing: payload[..<length]), to: &output)
                let encodedEnd = output.count
                JWS.appendBase64URL(UnsafeBufferPointer(rebasing: payload[length...]), to: &output)
                try output.withUnsafeBufferPointer { text in
                    try stream.update(UnsafeBufferPointer(rebasing: text[payloadStart..<encodedEnd]))
                    repeated.remember(
                        RepeatedPrefix(
                            bytes: Array(payload[..<length]),
                            headerAt: position,
                            encoded: Array(text[payloadStart..<encodedEnd]),
                            hash: try stream.snapshot()
                        )
                    )
                    try stream.update(UnsafeBufferPointer(rebasing: text[encodedEnd...]))
                }
            } else {
                JWS.appendBase64URL(payload, to: &output)
                try output.withUnsafeBufferPointer {
                    try stream.update(UnsafeBufferPointer(rebasing: $0[payloadStart...]))
                }
            }
            var digest = SHA256Digest()
            try stream.finish(into: &digest)
            output.append(UInt8(ascii: "."))
            try context.appendRawSignature(digest: &digest, base64URLTo: &output)
        }
    }
}

extension ES256Signer {
    /// Appends base64url of `payload[start...]` (`start` a multiple of 3), copying the text of a further
    /// nested header of this signer at `position` (a notification's second nested JWS) from the kept encodings.
    private func appendEncoded(
        _ payload: UnsafeBufferPointer<UInt8>,
        from start: Int,
        nestedHeaderAt position: Int?,
        to output: inout [UInt8]
    ) {
        guard let position else {
            JWS.appendBase64URL(UnsafeBufferPointer(rebasing: payload[start...]), to: &output)
            return
        }
        // The header's bytes before its first 3-byte group boundary decide which encoding of it applies.
        let alignment = (3 - position % 3) % 3
        let text = headerSegment.withUnsafeBufferPointer { repeated.headerText(alignment: alignment, header: $0) }
        let groupsStart = position + alignment
        let groupsEnd = groupsStart + (headerSegment.count - alignment) / 3 * 3
        JWS.appendBase64URL(UnsafeBufferPointer(rebasing: payload[start..<groupsStart]), to: &output)
        output.append(contentsOf: text)
        JWS.appendBase64URL(UnsafeBufferPointer(rebasing: payload[groupsEnd...]), to: &output)
    }
}

/// A payload prefix seen before: its bytes (a multiple of 3 long, so its base64url text stands alone), where
/// the signer's header starts in them (they end inside it), that text, and the SHA-256 state after the header
/// segment, the dot and that text.
final class RepeatedPrefix: Sendable {
    let bytes: [UInt8]
    let headerAt: Int
    let encoded: [UInt8]
    let hash: PrefixHash
    var length: Int { bytes.count }

    init(bytes: [UInt8], headerAt: Int, encoded: [UInt8], hash: PrefixHash) {
        self.bytes = bytes
        self.headerAt = headerAt
        self.encoded = encoded
        self.hash = hash
    }
}

/// The few repeated prefixes a signer keeps, most recent last (a run mints a handful of shapes:
/// with or without renewal info, a consumption request's extra field).
final class RepeatedPrefixes: Sendable {
    private let entries = Mutex<[RepeatedPrefix]>([])
    private let texts = Mutex<[[UInt8]?]>([nil, nil, nil])
    private static let limit = 8

    /// Where the first copy of `nestedHeader` at or after `start` begins.
    static func headerPosition(_ payload: UnsafeBufferPointer<UInt8>, nestedHeader: [UInt8], from start: Int) -> Int? {
        guard start + nestedHeader.count <= payload.count, nestedHeader.count >= 8, let base = payload.baseAddress
        else { return nil }
        return nestedHeader.withUnsafeBufferPointer { needle -> Int? in
            // One 8-byte compare per position, then the whole header where the first 8 bytes match.
            let head = UnsafeRawPointer(needle.baseAddress!).loadUnaligned(as: UInt64.self)
            let raw = UnsafeRawPointer(base)
            for position in start...(payload.count - needle.count)
            where raw.loadUnaligned(fromByteOffset: position, as: UInt64.self) == head {
                if memcmp(base + position, needle.baseAddress!, needle.count) == 0 { return position }
            }
            return nil
        }
    }

    /// Base64url of `header` without its first `alignment` bytes, cut to whole 3-byte groups: the text a
    /// copy of the header contributes when `alignment` of its bytes complete the group before it.
    func headerText(alignment: Int, header: UnsafeBufferPointer<UInt8>) -> [UInt8] {
        if let text = texts.withLock({ $0[alignment] }) { return text }
        let count = (header.count - alignment) / 3 * 3
        var text: [UInt8] = []
        JWS.appendBase64URL(UnsafeBufferPointer(rebasing: header[alignment..<(alignment + count)]), to: &text)
        texts.withLock { $0[alignment] = text }
        return text
    }

    /// The kept prefix of `length` bytes that `payload` starts with, if any.
    func lookup(_ payload: UnsafeBufferPointer<UInt8>, length: Int) -> RepeatedPrefix? {
        let kept = entries.withLock { $0 }
        for entry in kept.reversed() where entry.length == length {
            let same = entry.bytes.withUnsafeBufferPointer {
                memcmp($0.baseAddress!, payload.baseAddress!, length) == 0
            }
            if same { return entry }
        }
        return nil
    }

    /// The kept prefix of a payload that starts with `opening` and then this signer's header: compared by
    /// the opening alone, since a kept prefix holds the header where `headerAt` says.
    func lookup(opening: UnsafeBufferPointer<UInt8>, length: Int) -> RepeatedPrefix? {
        let kept = entries.withLock { $0 }
        for entry in kept.reversed() where entry.length == length && entry.headerAt == opening.count {
            let same = entry.bytes.withUnsafeBufferPointer {
                opening.isEmpty || memcmp($0.baseAddress!, opening.baseAddress!, opening.count) == 0
            }
            if same { return entry }
        }
        return nil
    }

    var count: Int { entries.withLock { $0.count } }

    func remember(_ entry: RepeatedPrefix) {
        entries.withLock { kept in
            if kept.count >= Self.limit { kept.removeFirst() }
            kept.append(entry)
        }
    }
}

/// One SHA-256 computation in progress, started from a kept state, in a borrowed digest context or its own.
struct SHA256Stream: ~Copyable {
    private let context: OpaquePointer
    private let owned: Bool

    /// Starts from `template`'s state, or from scratch without one, in `borrowed` (a pooled context that
    /// outlives the stream) or, when that is nil, in a context of its own.
    init(from template: PrefixHash?, in borrowed: OpaquePointer? = nil) throws {
        let context: OpaquePointer
        if let borrowed {
            context = borrowed
        } else {
            guard let created = EVP_MD_CTX_new() else { throw SigningError.openSSL("EVP_MD_CTX_new") }
            context = created
        }
        let started =
            if let template { template.copy(into: context) } else {
                EVP_DigestInit_ex(context, sha256Digest.pointer, nil) == 1
            }
        guard started else {
            if borrowed == nil { EVP_MD_CTX_free(context) }
            throw SigningError.openSSL("EVP_DigestInit_ex")
        }
        self.context = context
        owned = borrowed == nil
    }

    deinit {
        if owned { EVP_MD_CTX_free(context) }
    }

    mutating func update(_ bytes: UnsafeBufferPointer<UInt8>) throws {
        guard EVP_DigestUpdate(context, bytes.baseAddress, bytes.count) == 1 else {
            throw SigningError.openSSL("EVP_DigestUpdate")
        }
    }

    /// The state so far, kept to start later computations from.
    func snapshot() throws -> PrefixHash {
        try PrefixHash(copying: context)
    }

    /// Writes the digest into `digest` (no array allocated per signature).
    consuming func finish(into digest: inout SHA256Digest) throws {
        var length: UInt32 = 0
        let done = withUnsafeMutableBytes(of: &digest.bytes) {
            EVP_DigestFinal_ex(context, $0.baseAddress!.assumingMemoryBound(to: UInt8.self), &length) == 1
        }
        guard done, length == 32 else { throw SigningError.openSSL("EVP_DigestFinal_ex") }
    }
}

/// A SHA-256 digest held inline (32 bytes), so signing one needs no heap buffer.
struct SHA256Digest {
    var bytes: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
}

/// Reads a DER `ECDSA-Sig-Value` with two INTEGERs of at most 33 bytes into P-256's raw `R||S`, without
/// OpenSSL's allocations; nil for anything else (the caller then asks OpenSSL).
func p256RawSignature(fromDER der: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
    var raw = [UInt8](repeating: 0, count: 64)
    let converted = raw.withUnsafeMutableBufferPointer { p256RawSignature(fromDER: der, into: $0) }
    return converted ? raw : nil
}

/// ``p256RawSignature(fromDER:)`` into a zeroed buffer of 64 bytes the caller owns; false for anything else.
func p256RawSignature(fromDER der: UnsafeBufferPointer<UInt8>, into raw: UnsafeMutableBufferPointer<UInt8>) -> Bool {
    guard raw.count == 64, der.count >= 8, der[0] == 0x30, Int(der[1]) == der.count - 2 else { return false }
    var index = 2
    for half in 0..<2 {
        guard index + 2 <= der.count, der[index] == 0x02 else { return false }
        var length = Int(der[index + 1])
        index += 2
        guard length >= 1, length <= 33, index + length <= der.count else { return false }
        // A 33rd byte is the sign pad DER puts before a high top bit; it must be zero.
        if length == 33 {
            guard der[index] == 0 else { return false }
            index += 1
            length -= 1
        }
        for offset in 0..<length { raw[half * 32 + 32 - length + offset] = der[index + offset] }
        index += length
    }
    return index == der.count
}
