internal import COpenSSL

/// A P-256 public key that checks ES256 compact JWS signatures, such as the bearer tokens a backend signs
/// with its App Store Connect API key (the App Store Server API checks them with the key's public half).
///
/// `@unchecked Sendable`: the key is immutable after init, and each check uses its own `EVP_PKEY_CTX`.
public final class ES256PublicKey: @unchecked Sendable {
    private let key: PublicKeyHolder

    /// Loads a public key from PEM (`-----BEGIN PUBLIC KEY-----`, SubjectPublicKeyInfo).
    /// - Throws: `SigningError` when the text is not a public key or the key is not P-256.
    public init(pem: String) throws {
        let bio = try MemoryBIO(pem)
        guard let pointer = PEM_read_bio_PUBKEY(bio.pointer, nil, nil, nil) else {
            throw SigningError.openSSL("PEM_read_bio_PUBKEY")
        }
        key = PublicKeyHolder(pointer: pointer)
        guard curveOf(pointer) == .p256 else { throw SigningError.openSSL("not a P-256 key") }
    }

    /// Whether `compact` (`header.payload.signature`) carries a valid ES256 signature (raw `R||S`) by this key.
    /// The header is not read: the caller checks `alg`.
    /// - Parameter compact: the JWS in compact form.
    /// - Returns: `true` only for a well-formed JWS whose signature verifies.
    public func verifies(compact: String) -> Bool {
        let bytes = Array(compact.utf8)
        guard let lastDot = bytes.lastIndex(of: UInt8(ascii: ".")),
            bytes[..<lastDot].contains(UInt8(ascii: ".")),
            let raw = JWS.base64URLDecode(bytes[(lastDot + 1)...]), raw.count == 64,
            let der = derSignature(fromRaw: raw),
            let context = try? PKeyContext(key: key.pointer, mode: .verify)
        else { return false }
        return context.verifyDER(signature: der, digest: sha256(Array(bytes[..<lastDot])))
    }
}

extension SigningKey {
    /// The public half as PEM (`-----BEGIN PUBLIC KEY-----`).
    /// - Throws: `SigningError` when OpenSSL fails.
    public func publicKeyPEM() throws -> String {
        let bio = try MemoryBIO()
        guard PEM_write_bio_PUBKEY(bio.pointer, pointer) == 1 else {
            throw SigningError.openSSL("PEM_write_bio_PUBKEY")
        }
        return bio.string()
    }
}

extension JWS {
    /// Signs a payload under a header given as JSON bytes, for headers ``JWSHeader`` does not model (a bearer
    /// token's `kid`). The signature is ES256 with `key`.
    /// - Parameters:
    ///   - payload: the payload bytes.
    ///   - headerJSON: the protected header as JSON.
    ///   - key: a P-256 private key.
    /// - Returns: the compact JWS.
    /// - Throws: `SigningError` when OpenSSL fails.
    public static func sign(payload: [UInt8], headerJSON: [UInt8], key: SigningKey) throws -> String {
        try signCompact(headerSegment: Array(base64URL(headerJSON).utf8), payload: payload) { digest in
            try PKeyContext(key: key.pointer, mode: .sign).signRaw(digest: digest)
        }
    }
}

/// Owns an `EVP_PKEY` holding only a public key.
private final class PublicKeyHolder: KeyHolder, @unchecked Sendable {
    let pointer: OpaquePointer

    init(pointer: OpaquePointer) {
        self.pointer = pointer
    }

    deinit {
        EVP_PKEY_free(pointer)
    }
}
