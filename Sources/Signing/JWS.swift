internal import COpenSSL
internal import CPayStormShims
internal import Foundation
internal import Synchronization

/// The protected header of a JWS. `x5c` holds standard-base64 DER, leaf first.
public struct JWSHeader: Codable, Sendable, Hashable {
    /// The algorithm; Apple's verifiers accept only `ES256`.
    public var alg: String
    /// The certificate chain: standard base64 (with padding) of each DER, leaf first.
    public var x5c: [String]?
    /// The media type; PyJWT writes `JWT`, and no verifier reads it.
    public var typ: String?

    /// Creates a header.
    public init(alg: String = "ES256", x5c: [String]? = nil, typ: String? = nil) {
        self.alg = alg
        self.x5c = x5c
        self.typ = typ
    }

    /// The header as compact JSON (keys sorted, slashes unescaped).
    public func jsonBytes() throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return Array(try encoder.encode(self))
    }
}

/// JWS compact serialization with ES256 (ECDSA P-256 + SHA-256, raw 64-byte `R||S` signature).
public enum JWS {
    /// Signs a payload: `base64url(header).base64url(payload).base64url(R||S)`.
    ///
    /// The signature is always ES256 with `key` whatever `header.alg` says, so forgeries can
    /// carry a wrong `alg` over a real signature.
    /// - Throws: `SigningError` when the key is not P-256 or OpenSSL fails.
    public static func sign(payload: [UInt8], header: JWSHeader, key: SigningKey) throws -> String {
        let headerSegment = base64URL(try header.jsonBytes())
        return try signCompact(headerSegment: Array(headerSegment.utf8), payload: payload) { digest in
            let context = try PKeyContext(key: key.pointer, mode: .sign)
            return try context.signRaw(digest: digest)
        }
    }

    /// Encodes a chain for the `x5c` header: standard base64 (RFC 4648 §4, padded) of each DER.
    public static func x5c(_ chain: [Certificate]) -> [String] {
        chain.map { Data($0.der).base64EncodedString() }
    }

    /// Encodes bytes as base64url without padding.
    public static func base64URL(_ bytes: [UInt8]) -> String {
        var output: [UInt8] = []
        appendBase64URL(bytes, to: &output)
        return String(decoding: output, as: UTF8.self)
    }

    /// Decodes base64url (padding optional); nil on any character outside the alphabet.
    public static func base64URLDecode(_ text: String) -> [UInt8]? {
        base64URLDecode(text.utf8)
    }

    /// Decodes base64url from UTF-8 bytes (padding optional); nil on any character outside the alphabet.
    static func base64URLDecode(_ text: some Collection<UInt8>) -> [UInt8]? {
        let decoded: [UInt8]?? = text.withContiguousStorageIfAvailable { decodeBase64URL($0) }
        if let decoded { return decoded }
        return Array(text).withUnsafeBufferPointer { decodeBase64URL($0) }
    }

    private static func decodeBase64URL(_ input: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        var count = input.count
        // Up to two trailing '=' are allowed; '=' anywhere else is not.
        var padding = 0
        while count > 0 && input[count - 1] == UInt8(ascii: "=") && padding < 2 {
            count -= 1
            padding += 1
        }
        // A single leftover character cannot encode a byte.
        guard count % 4 != 1 else { return nil }
        let outputCount = count / 4 * 3 + [0, 0, 1, 2][count % 4]
        var failed = false
        let output = [UInt8](unsafeUninitializedCapacity: outputCount) { buffer, initialized in
            decodeTable.withUnsafeBufferPointer { table in
                var out = 0
                var index = 0
                var invalid: UInt8 = 0
                shiftedDecodeTable.withUnsafeBufferPointer { shifted in
                    // One lookup per character gives its 6 bits already in place; an invalid one sets bit 31.
                    var invalidBits: UInt32 = 0
                    while index + 4 <= count {
                        let value =
                            shifted[Int(input[index])] | shifted[256 + Int(input[index + 1])]
                            | shifted[512 + Int(input[index + 2])] | shifted[768 + Int(input[index + 3])]
                        invalidBits |= value
                        buffer[out] = UInt8(truncatingIfNeeded: value >> 16)
                        buffer[out + 1] = UInt8(truncatingIfNeeded: value >> 8)
                        buffer[out + 2] = UInt8(truncatingIfNeeded: value)
                        out += 3
                        index += 4
                    }
                    if invalidBits & 0x8000_0000 != 0 { invalid = 0x80 }
                }
                let rest = count - index
                if rest >= 2 {
                    let a = table[Int(input[index])]
                    let b = table[Int(input[index + 1])]
                    let c = rest == 3 ? table[Int(input[index + 2])] : 0
                    invalid |= a | b | c
                    let value = UInt32(a & 63) << 18 | UInt32(b & 63) << 12 | UInt32(c & 63) << 6
                    buffer[out] = UInt8(truncatingIfNeeded: value >> 16)
                    out += 1
                    if rest == 3 {
                        buffer[out] = UInt8(truncatingIfNeeded: value >> 8)
                        out += 1
                    }
                }
                // Invalid characters map to 0xFF, so any of them sets the high bit.
                failed = invalid & 0x80 != 0
                initialized = out
            }
        }
        return failed ? nil : output
    }

    /// Builds the compact JWS around a digest signer (the general path; `ES256Signer` has its own).
    static func signCompact(
        headerSegment: [UInt8],
        payload: [UInt8],
        sign: ([UInt8]) throws -> [UInt8]
    ) throws -> String {
        var output: [UInt8] = []
        output.reserveCapacity(headerSegment.count + 1 + (payload.count * 4 + 2) / 3 + 1 + 86)
        output.append(contentsOf: headerSegment)
        output.append(UInt8(ascii: "."))
        appendBase64URL(payload, to: &output)
        let signature = try sign(sha256(output))
        output.append(UInt8(ascii: "."))
        appendBase64URL(signature, to: &output)
        return String(decoding: output, as: UTF8.self)
    }

    static func appendBase64URL(_ bytes: [UInt8], to output: inout [UInt8]) {
        bytes.withUnsafeBufferPointer { appendBase64URL($0, to: &output) }
    }

    /// The length of the base64url text (no padding) of `count` bytes.
    static func base64URLLength(_ count: Int) -> Int {
        count / 3 * 4 + (count % 3 == 0 ? 0 : count % 3 + 1)
    }

    /// Appends base64url (no padding) of `input` to `output` in one pass over a buffer grown once.
    static func appendBase64URL(_ input: UnsafeBufferPointer<UInt8>, to output: inout [UInt8]) {
        let encodedCount = base64URLLength(input.count)
        guard encodedCount > 0 else { return }
        let start = output.count
        // Grow once, then write through a raw pointer: per-byte `append` costs a uniqueness check each time.
        output.append(contentsOf: repeatElement(0, count: encodedCount))
        output.withUnsafeMutableBufferPointer { buffer in
            _ = encodeBase64URL(input, into: buffer.baseAddress! + start)
        }
    }

    /// Writes base64url (no padding) of `input` at `out`, which has room for ``base64URLLength(_:)`` bytes.
    /// - Returns: how many bytes were written.
    static func encodeBase64URL(_ input: UnsafeBufferPointer<UInt8>, into output: UnsafeMutablePointer<UInt8>) -> Int {
        let count = input.count
        guard count > 0, let source = input.baseAddress else { return 0 }
        return pairTable.withUnsafeBufferPointer { pairs in
            // Two characters per lookup: each 12-bit half of a 3-byte group maps to a UInt16.
            let out = UnsafeMutableRawPointer(output)
            let bytes = UnsafeRawPointer(source)
            var offset = 0
            var index = 0
            // Six bytes per step from one 8-byte load (big-endian, so the first byte is the top one):
            // four 12-bit halves, four pair lookups, instead of six byte loads.
            while index + 8 <= count {
                let word = UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self))
                out.storeBytes(of: pairs[Int(truncatingIfNeeded: word >> 52)], toByteOffset: offset, as: UInt16.self)
                out.storeBytes(
                    of: pairs[Int(truncatingIfNeeded: word >> 40) & 0xFFF],
                    toByteOffset: offset + 2,
                    as: UInt16.self
                )
                out.storeBytes(
                    of: pairs[Int(truncatingIfNeeded: word >> 28) & 0xFFF],
                    toByteOffset: offset + 4,
                    as: UInt16.self
                )
                out.storeBytes(
                    of: pairs[Int(truncatingIfNeeded: word >> 16) & 0xFFF],
                    toByteOffset: offset + 6,
                    as: UInt16.self
                )
                offset += 8
                index += 6
            }
            while index + 3 <= count {
                let value = Int(input[index]) << 16 | Int(input[index + 1]) << 8 | Int(input[index + 2])
                out.storeBytes(of: pairs[value >> 12], toByteOffset: offset, as: UInt16.self)
                out.storeBytes(of: pairs[value & 0xFFF], toByteOffset: offset + 2, as: UInt16.self)
                offset += 4
                index += 3
            }
            let rest = count - index
            guard rest > 0 else { return offset }
            let second = rest == 2 ? Int(input[index + 1]) << 8 : 0
            let value = Int(input[index]) << 16 | second
            out.storeBytes(of: pairs[value >> 12], toByteOffset: offset, as: UInt16.self)
            guard rest == 2 else { return offset + 2 }
            out.storeBytes(of: encodeTable[value >> 6 & 63], toByteOffset: offset + 2, as: UInt8.self)
            return offset + 3
        }
    }

    private static let encodeTable: [UInt8] = Array(
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8
    )

    /// For each 12-bit value, its two base64url characters as they lie in memory (little- or big-endian alike).
    private static let pairTable: [UInt16] = (0..<4096).map { value in
        var pair: UInt16 = 0
        withUnsafeMutableBytes(of: &pair) { bytes in
            bytes[0] = encodeTable[value >> 6]
            bytes[1] = encodeTable[value & 63]
        }
        return pair
    }

    /// For each of the four positions in a group, each byte's 6 bits shifted into place
    /// (`0x8000_0000` for a byte outside the alphabet): 4 × 256 entries.
    private static let shiftedDecodeTable: [UInt32] = (0..<4).flatMap { position in
        decodeTable.map { value in
            value == 0xFF ? 0x8000_0000 : UInt32(value) << (18 - 6 * position)
        }
    }

    private static let decodeTable: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (index, byte) in encodeTable.enumerated() { table[Int(byte)] = UInt8(index) }
        return table
    }()
}

/// SHA-256 of bytes (the JWS signing input digest).
func sha256(_ bytes: [UInt8]) -> [UInt8] {
    var digest = [UInt8](repeating: 0, count: 32)
    var length: UInt32 = 0
    bytes.withUnsafeBufferPointer { input in
        _ = EVP_Digest(input.baseAddress, input.count, &digest, &length, sha256Digest.pointer, nil)
    }
    return digest
}

/// SHA-256 fetched once: an implicit fetch on every digest costs a lock in OpenSSL 3.
let sha256Digest = FetchedDigest("SHA256")

/// A SHA-256 state that has absorbed a fixed prefix; each digest copies it and adds the rest.
///
/// `@unchecked Sendable`: the template context is written only in init; `digest` copies it
/// into a fresh context, which only reads the template.
final class PrefixHash: @unchecked Sendable {
    private let template: OpaquePointer

    init(_ prefix: [UInt8]) throws {
        guard let context = EVP_MD_CTX_new() else { throw SigningError.openSSL("EVP_MD_CTX_new") }
        template = context
        guard EVP_DigestInit_ex(context, sha256Digest.pointer, nil) == 1,
            EVP_DigestUpdate(context, prefix, prefix.count) == 1
        else { throw SigningError.openSSL("EVP_DigestUpdate") }
    }

    /// Keeps a copy of a computation's state.
    init(copying state: OpaquePointer) throws {
        guard let context = EVP_MD_CTX_new() else { throw SigningError.openSSL("EVP_MD_CTX_new") }
        template = context
        guard EVP_MD_CTX_copy_ex(context, state) == 1 else { throw SigningError.openSSL("EVP_MD_CTX_copy_ex") }
    }

    /// Puts the kept state into `context`; false when OpenSSL fails.
    func copy(into context: OpaquePointer) -> Bool {
        EVP_MD_CTX_copy_ex(context, template) == 1
    }

    deinit {
        EVP_MD_CTX_free(template)
    }

    /// SHA-256 of the prefix followed by `rest`.
    func digest(appending rest: UnsafeBufferPointer<UInt8>) throws -> [UInt8] {
        guard let context = EVP_MD_CTX_new() else { throw SigningError.openSSL("EVP_MD_CTX_new") }
        defer { EVP_MD_CTX_free(context) }
        var digest = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        guard EVP_MD_CTX_copy_ex(context, template) == 1, EVP_DigestUpdate(context, rest.baseAddress, rest.count) == 1,
            EVP_DigestFinal_ex(context, &digest, &length) == 1
        else { throw SigningError.openSSL("EVP_DigestFinal_ex") }
        return digest
    }
}

/// `@unchecked Sendable`: an `EVP_MD` fetched once and only read afterwards.
final class FetchedDigest: @unchecked Sendable {
    let pointer: OpaquePointer?
    init(_ name: String) { pointer = EVP_MD_fetch(nil, name, nil) }
    deinit { EVP_MD_free(pointer) }
}

/// One `EVP_PKEY_CTX` set up for signing or verifying with a key.
///
/// `@unchecked Sendable`: a context is used by one thread at a time; the pool hands it out
/// under a lock and takes it back after the call.
final class PKeyContext: @unchecked Sendable {
    enum Mode { case sign, verify }

    let pointer: OpaquePointer
    /// A digest context that travels with this one, so a pooled signature hashes without allocating one.
    let digestContext: OpaquePointer?

    init(key: OpaquePointer, mode: Mode) throws {
        guard let context = EVP_PKEY_CTX_new_from_pkey(nil, key, nil) else {
            throw SigningError.openSSL("EVP_PKEY_CTX_new_from_pkey")
        }
        pointer = context
        // nil when OpenSSL cannot allocate it: each stream then makes its own.
        digestContext = mode == .sign ? EVP_MD_CTX_new() : nil
        switch mode {
        case .sign:
            guard EVP_PKEY_sign_init(context) == 1 else { throw SigningError.openSSL("EVP_PKEY_sign_init") }
        case .verify:
            guard EVP_PKEY_verify_init(context) == 1 else { throw SigningError.openSSL("EVP_PKEY_verify_init") }
        }
    }

    deinit {
        EVP_PKEY_CTX_free(pointer)
        EVP_MD_CTX_free(digestContext)
    }

    /// The length of an ES256 signature's base64url text: 64 bytes of `R||S`.
    static let rawSignatureTextLength = JWS.base64URLLength(64)

    /// Signs a SHA-256 digest and appends the base64url of JOSE's raw `R||S` to `output`.
    func appendRawSignature(digest: inout SHA256Digest, base64URLTo output: inout [UInt8]) throws {
        let start = output.count
        output.append(contentsOf: repeatElement(0, count: Self.rawSignatureTextLength))
        try output.withUnsafeMutableBufferPointer {
            _ = try writeRawSignature(digest: &digest, base64URLAt: $0.baseAddress! + start)
        }
    }

    /// Signs a SHA-256 digest and writes the base64url of JOSE's raw `R||S` at `output` (room for
    /// ``rawSignatureTextLength`` bytes), with the DER and raw forms on the stack: no heap buffer per signature.
    /// - Returns: how many bytes were written.
    func writeRawSignature(digest: inout SHA256Digest, base64URLAt output: UnsafeMutablePointer<UInt8>) throws -> Int {
        // P-256's DER signature is at most 72 bytes; 80 leaves room, 64 hold R||S.
        var der: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) =
            (0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var raw: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0, 0, 0)
        // nil once converted into `raw`; otherwise the DER, for OpenSSL's general conversion.
        let unconverted = try withUnsafeMutableBytes(of: &der) { derBytes -> [UInt8]? in
            let derBuffer = derBytes.bindMemory(to: UInt8.self)
            var length = derBuffer.count
            let signed = withUnsafeBytes(of: &digest.bytes) { digestBytes in
                EVP_PKEY_sign(
                    pointer,
                    derBuffer.baseAddress,
                    &length,
                    digestBytes.baseAddress!.assumingMemoryBound(to: UInt8.self),
                    digestBytes.count
                ) == 1
            }
            guard signed else { throw SigningError.openSSL("EVP_PKEY_sign") }
            let signature = UnsafeBufferPointer(rebasing: derBuffer[..<length])
            let converted = withUnsafeMutableBytes(of: &raw) {
                p256RawSignature(fromDER: signature, into: $0.bindMemory(to: UInt8.self))
            }
            return converted ? nil : Array(signature)
        }
        if let unconverted {
            let general = try rawSignature(fromDER: unconverted, width: 32)
            withUnsafeMutableBytes(of: &raw) { $0.copyBytes(from: general) }
        }
        return withUnsafeBytes(of: &raw) { JWS.encodeBase64URL($0.bindMemory(to: UInt8.self), into: output) }
    }

    /// Signs a SHA-256 digest; returns the DER `ECDSA-Sig-Value` OpenSSL produces.
    func signDER(digest: [UInt8]) throws -> [UInt8] {
        var signature = [UInt8](repeating: 0, count: 160)
        var length = signature.count
        guard EVP_PKEY_sign(pointer, &signature, &length, digest, digest.count) == 1 else {
            throw SigningError.openSSL("EVP_PKEY_sign")
        }
        return Array(signature.prefix(length))
    }

    /// Signs a SHA-256 digest and returns JOSE's raw `R||S` (32 bytes each for P-256).
    func signRaw(digest: [UInt8]) throws -> [UInt8] {
        let der = try signDER(digest: digest)
        if let raw = der.withUnsafeBufferPointer({ p256RawSignature(fromDER: $0) }) { return raw }
        return try rawSignature(fromDER: der, width: 32)
    }

    /// Verifies a DER `ECDSA-Sig-Value` over a digest.
    func verifyDER(signature: [UInt8], digest: [UInt8]) -> Bool {
        let result = EVP_PKEY_verify(pointer, signature, signature.count, digest, digest.count) == 1
        if !result { clearOpenSSLErrors() }
        return result
    }
}

/// A pool of contexts for one key, so threads never share an `EVP_PKEY_CTX` and never
/// pay for setting one up per call.
final class PKeyContextPool: Sendable {
    let key: any KeyHolder
    private let mode: PKeyContext.Mode
    private let idle = Mutex<[PKeyContext]>([])

    init(key: any KeyHolder, mode: PKeyContext.Mode) {
        self.key = key
        self.mode = mode
    }

    func withContext<T>(_ body: (PKeyContext) throws -> T) throws -> T {
        let context = try idle.withLock { $0.popLast() } ?? PKeyContext(key: key.pointer, mode: mode)
        defer { idle.withLock { if $0.count < 64 { $0.append(context) } } }
        return try body(context)
    }
}

extension PKeyContext.Mode: Sendable {}

/// An object that owns an `EVP_PKEY` (private or public), shared by the pools.
protocol KeyHolder: AnyObject, Sendable {
    var pointer: OpaquePointer { get }
}

extension SigningKey: KeyHolder {}

/// A public key (OpenSSL `EVP_PKEY`), taken from a certificate.
///
/// `@unchecked Sendable`: immutable after init; verification uses per-thread contexts.
final class PublicKey: KeyHolder, @unchecked Sendable {
    let pointer: OpaquePointer

    /// Takes a new reference to the certificate's key.
    init(certificate: OpaquePointer) throws {
        guard let key = X509_get_pubkey(certificate) else { throw SigningError.openSSL("X509_get_pubkey") }
        pointer = key
    }

    deinit {
        EVP_PKEY_free(pointer)
    }
}

/// Converts DER `ECDSA-Sig-Value` to the fixed-width `R||S` form.
func rawSignature(fromDER der: [UInt8], width: Int) throws -> [UInt8] {
    let signature: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
        var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
        return d2i_ECDSA_SIG(nil, &cursor, buffer.count)
    }
    guard let signature else { throw SigningError.openSSL("d2i_ECDSA_SIG") }
    defer { ECDSA_SIG_free(signature) }
    var raw = [UInt8](repeating: 0, count: width * 2)
    let r = ECDSA_SIG_get0_r(signature)
    let s = ECDSA_SIG_get0_s(signature)
    let written = raw.withUnsafeMutableBufferPointer { buffer in
        BN_bn2binpad(r, buffer.baseAddress, Int32(width)) + BN_bn2binpad(s, buffer.baseAddress! + width, Int32(width))
    }
    guard written == Int32(width * 2) else { throw SigningError.openSSL("BN_bn2binpad") }
    return raw
}

/// Converts a raw `R||S` signature to DER `ECDSA-Sig-Value`; nil when it does not split evenly.
func derSignature(fromRaw raw: [UInt8]) -> [UInt8]? {
    guard !raw.isEmpty, raw.count % 2 == 0 else { return nil }
    let half = raw.count / 2
    guard let signature = ECDSA_SIG_new() else { return nil }
    defer { ECDSA_SIG_free(signature) }
    let r = raw.withUnsafeBufferPointer { BN_bin2bn($0.baseAddress, Int32(half), nil) }
    let s = raw.withUnsafeBufferPointer { BN_bin2bn($0.baseAddress! + half, Int32(half), nil) }
    guard let r, let s, ECDSA_SIG_set0(signature, r, s) == 1 else {
        BN_free(r)
        BN_free(s)
        return nil
    }
    var buffer: UnsafeMutablePointer<UInt8>?
    let length = i2d_ECDSA_SIG(signature, &buffer)
    guard length > 0, let buffer else { return nil }
    defer { ps_openssl_free(buffer) }
    return Array(UnsafeBufferPointer(start: buffer, count: Int(length)))
}
