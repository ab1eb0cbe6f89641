internal import COpenSSL
internal import CPayStormShims
internal import Synchronization

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
