internal import COpenSSL

/// Raw ECDSA P-256 over one fixed SHA-256 digest with one reused OpenSSL context: the ceiling
/// that every JWS path is compared with (`paystorm bench`). Not thread-safe: one per thread.
public final class RawES256 {
    private let signContext: PKeyContext
    private let verifyContext: PKeyContext
    private let digest: [UInt8]
    private let signature: [UInt8]

    /// Prepares signing and verifying contexts for a P-256 key.
    /// - Throws: `SigningError` when OpenSSL fails.
    public init(key: SigningKey) throws {
        signContext = try PKeyContext(key: key.pointer, mode: .sign)
        verifyContext = try PKeyContext(key: key.pointer, mode: .verify)
        digest = sha256(Array("paystorm raw ES256".utf8))
        signature = try signContext.signDER(digest: digest)
    }

    /// Signs the digest `times` times (`EVP_PKEY_sign`, into a stack buffer: the ceiling allocates nothing,
    /// as `openssl speed` does not).
    /// - Throws: `SigningError` when OpenSSL fails.
    public func sign(times: Int) throws {
        // P-256's DER signature is at most 72 bytes.
        var signature: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) =
            (0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        try withUnsafeMutableBytes(of: &signature) { buffer in
            for _ in 0..<times {
                var length = buffer.count
                let signed = EVP_PKEY_sign(
                    signContext.pointer,
                    buffer.baseAddress!.assumingMemoryBound(to: UInt8.self),
                    &length,
                    digest,
                    digest.count
                )
                guard signed == 1 else { throw SigningError.openSSL("EVP_PKEY_sign") }
            }
        }
    }

    /// SHA-256 of `bytes` into a digest on the stack, in the signing context's digest context: the hashing a
    /// JWS's signing input needs, with nothing around it (the floor `paystorm bench mint` measures).
    /// - Throws: `SigningError` when OpenSSL fails.
    public func hash(_ bytes: UnsafeBufferPointer<UInt8>) throws {
        var stream = try SHA256Stream(from: nil, in: signContext.digestContext)
        try stream.update(bytes)
        var digest = SHA256Digest()
        try stream.finish(into: &digest)
    }

    /// Verifies the signature `times` times (`EVP_PKEY_verify`); false if any check fails.
    public func verify(times: Int) -> Bool {
        var ok = true
        for _ in 0..<times { ok = verifyContext.verifyDER(signature: signature, digest: digest) && ok }
        return ok
    }

    /// The OpenSSL version string of the library linked in, e.g. `OpenSSL 3.0.19 27 Jan 2026`.
    public static var openSSLVersion: String {
        OpenSSL_version(OPENSSL_VERSION).map { String(cString: $0) } ?? "OpenSSL"
    }
}
