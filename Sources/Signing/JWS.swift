internal import Foundation
internal import COpenSSL
internal import CPayStormShims
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
        var output: [UInt8] = []
        output.reserveCapacity(text.count * 3 / 4)
        var accumulator: UInt32 = 0
        var bits = 0
        var padding = 0
        for byte in text {
            if byte == UInt8(ascii: "=") {
                padding += 1
                continue
            }
            guard padding == 0 else { return nil }  // data after padding
            let value = decodeTable[Int(byte)]
            guard value != 0xFF else { return nil }
            accumulator = (accumulator << 6) | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                output.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)))
            }
        }
        // A single leftover sextet cannot encode a byte.
        guard bits < 6, padding <= 2 else { return nil }
        return output
    }

    /// Builds the compact JWS around a digest signer; shared by `sign` and `ES256Signer`.
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
        let digest = sha256(output)
        let signature = try sign(digest)
        output.append(UInt8(ascii: "."))
        appendBase64URL(signature, to: &output)
        return String(decoding: output, as: UTF8.self)
    }

    static func appendBase64URL(_ bytes: [UInt8], to output: inout [UInt8]) {
        output.reserveCapacity(output.count + (bytes.count * 4 + 2) / 3)
        bytes.withUnsafeBufferPointer { input in
            var index = 0
            let count = input.count
            while index + 3 <= count {
                let value = UInt32(input[index]) << 16 | UInt32(input[index + 1]) << 8 | UInt32(input[index + 2])
                output.append(encodeTable[Int(value >> 18 & 63)])
                output.append(encodeTable[Int(value >> 12 & 63)])
                output.append(encodeTable[Int(value >> 6 & 63)])
                output.append(encodeTable[Int(value & 63)])
                index += 3
            }
            let rest = count - index
            if rest == 1 {
                let value = UInt32(input[index]) << 16
                output.append(encodeTable[Int(value >> 18 & 63)])
                output.append(encodeTable[Int(value >> 12 & 63)])
            } else if rest == 2 {
                let value = UInt32(input[index]) << 16 | UInt32(input[index + 1]) << 8
                output.append(encodeTable[Int(value >> 18 & 63)])
                output.append(encodeTable[Int(value >> 12 & 63)])
                output.append(encodeTable[Int(value >> 6 & 63)])
            }
        }
    }

    private static let encodeTable: [UInt8] = Array(
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8
    )

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
private let sha256Digest = FetchedDigest("SHA256")

/// `@unchecked Sendable`: an `EVP_MD` fetched once and only read afterwards.
private final class FetchedDigest: @unchecked Sendable {
    let pointer: OpaquePointer?
    init(_ name: String) { pointer = EVP_MD_fetch(nil, name, nil) }
    deinit { EVP_MD_free(pointer) }
}

/// The fast signing path: the header (`alg` ES256, `x5c` = leaf, intermediate, root) is
/// encoded once; each call only encodes the payload and signs.
///
/// Safe to call from any number of threads: each call borrows its own OpenSSL context from a pool.
public struct ES256Signer: Sendable {
    private let headerSegment: [UInt8]
    private let pool: PKeyContextPool

    /// Creates a signer for a PKI's leaf key and chain.
    public init(pki: TestPKI) {
        self.init(key: pki.leafKey, header: JWSHeader(alg: "ES256", x5c: JWS.x5c(pki.chain), typ: nil))
    }

    /// Creates a signer for any key and a fixed header (forgeries: other chains or `alg`).
    public init(key: SigningKey, header: JWSHeader) {
        // Encoding a Codable struct of strings cannot fail.
        headerSegment = Array(JWS.base64URL((try? header.jsonBytes()) ?? []).utf8)
        pool = PKeyContextPool(key: key, mode: .sign)
    }

    /// Signs one payload into a compact JWS.
    /// - Throws: `SigningError` when OpenSSL fails (not expected with a valid P-256 key).
    public func sign(payload: [UInt8]) throws -> String {
        try JWS.signCompact(headerSegment: headerSegment, payload: payload) { digest in
            try pool.withContext { try $0.signRaw(digest: digest) }
        }
    }
}

/// One `EVP_PKEY_CTX` set up for signing or verifying with a key.
///
/// `@unchecked Sendable`: a context is used by one thread at a time; the pool hands it out
/// under a lock and takes it back after the call.
final class PKeyContext: @unchecked Sendable {
    enum Mode { case sign, verify }

    let pointer: OpaquePointer

    init(key: OpaquePointer, mode: Mode) throws {
        guard let context = EVP_PKEY_CTX_new_from_pkey(nil, key, nil) else {
            throw SigningError.openSSL("EVP_PKEY_CTX_new_from_pkey")
        }
        pointer = context
        switch mode {
        case .sign:
            guard EVP_PKEY_sign_init(context) == 1 else { throw SigningError.openSSL("EVP_PKEY_sign_init") }
        case .verify:
            guard EVP_PKEY_verify_init(context) == 1 else { throw SigningError.openSSL("EVP_PKEY_verify_init") }
        }
    }

    deinit {
        EVP_PKEY_CTX_free(pointer)
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
        try rawSignature(fromDER: signDER(digest: digest), width: 32)
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
