internal import COpenSSL
internal import CPayStormShims

/// The elliptic curves the test PKI uses.
public enum Curve: String, Sendable, CaseIterable {
    /// NIST P-256 (prime256v1): the leaf key that signs ES256 JWS.
    case p256 = "P-256"
    /// NIST P-384 (secp384r1): the root and intermediate keys, as in Apple's chain.
    case p384 = "P-384"
}

/// An EC private key (OpenSSL `EVP_PKEY`). Immutable after init.
///
/// `@unchecked Sendable`: the key is never mutated after creation, and OpenSSL 3 allows
/// concurrent signing with one `EVP_PKEY` as long as each thread uses its own `EVP_PKEY_CTX`.
public final class SigningKey: @unchecked Sendable {
    let pointer: OpaquePointer

    init(unsafeTakingOwnership pointer: OpaquePointer) {
        self.pointer = pointer
    }

    deinit {
        EVP_PKEY_free(pointer)
    }

    /// Generates a fresh key on a curve.
    /// - Throws: `SigningError` when OpenSSL fails.
    public static func generate(_ curve: Curve) throws -> SigningKey {
        guard let context = EVP_PKEY_CTX_new_from_name(nil, "EC", nil) else {
            throw SigningError.openSSL("EVP_PKEY_CTX_new_from_name")
        }
        defer { EVP_PKEY_CTX_free(context) }
        guard EVP_PKEY_keygen_init(context) == 1 else { throw SigningError.openSSL("EVP_PKEY_keygen_init") }
        guard EVP_PKEY_CTX_set_group_name(context, curve.rawValue) == 1 else {
            throw SigningError.openSSL("EVP_PKEY_CTX_set_group_name")
        }
        var key: OpaquePointer?
        guard EVP_PKEY_generate(context, &key) == 1, let key else {
            throw SigningError.openSSL("EVP_PKEY_generate")
        }
        return SigningKey(unsafeTakingOwnership: key)
    }

    /// Loads a private key from PEM (PKCS#8 or traditional EC).
    /// - Throws: `SigningError` when the text is not a private key.
    public convenience init(pem: String) throws {
        let bio = try MemoryBIO(pem)
        guard let key = PEM_read_bio_PrivateKey(bio.pointer, nil, nil, nil) else {
            throw SigningError.openSSL("PEM_read_bio_PrivateKey")
        }
        self.init(unsafeTakingOwnership: key)
    }

    /// The key as unencrypted PKCS#8 PEM (`-----BEGIN PRIVATE KEY-----`).
    /// - Throws: `SigningError` when OpenSSL fails.
    public func pem() throws -> String {
        let bio = try MemoryBIO()
        guard PEM_write_bio_PrivateKey(bio.pointer, pointer, nil, nil, 0, nil, nil) == 1 else {
            throw SigningError.openSSL("PEM_write_bio_PrivateKey")
        }
        return bio.string()
    }

    /// The curve of the key, or nil when it is not one of ours.
    public var curve: Curve? { curveOf(pointer) }

    /// The public half as DER `SubjectPublicKeyInfo`.
    public func publicKeyDER() -> [UInt8] {
        var buffer: UnsafeMutablePointer<UInt8>?
        let length = i2d_PUBKEY(pointer, &buffer)
        guard length > 0, let buffer else { return [] }
        defer { ps_openssl_free(buffer) }
        return Array(UnsafeBufferPointer(start: buffer, count: Int(length)))
    }
}

/// The curve of an `EVP_PKEY`, or nil when it is not EC P-256 or P-384.
func curveOf(_ key: OpaquePointer) -> Curve? {
    var name = [CChar](repeating: 0, count: 64)
    var length = 0
    guard EVP_PKEY_get_utf8_string_param(key, "group", &name, name.count, &length) == 1 else {
        clearOpenSSLErrors()
        return nil
    }
    let group = String(decoding: name.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    switch group {
    case "prime256v1", "P-256": return .p256
    case "secp384r1", "P-384": return .p384
    default: return nil
    }
}

/// A memory BIO, used to move PEM text in and out of OpenSSL.
final class MemoryBIO {
    let pointer: OpaquePointer

    init() throws {
        guard let bio = BIO_new(BIO_s_mem()) else { throw SigningError.openSSL("BIO_new") }
        pointer = bio
    }

    convenience init(_ text: String) throws {
        try self.init(bytes: Array(text.utf8))
    }

    init(bytes: [UInt8]) throws {
        guard let bio = BIO_new(BIO_s_mem()) else { throw SigningError.openSSL("BIO_new") }
        pointer = bio
        guard bytes.isEmpty || BIO_write(bio, bytes, Int32(bytes.count)) == Int32(bytes.count) else {
            throw SigningError.openSSL("BIO_write")
        }
    }

    deinit {
        BIO_free(pointer)
    }

    func bytes() -> [UInt8] {
        var data: UnsafeMutablePointer<CChar>?
        let length = ps_BIO_get_mem_data(pointer, &data)
        guard length > 0, let data else { return [] }
        return data.withMemoryRebound(to: UInt8.self, capacity: length) {
            Array(UnsafeBufferPointer(start: $0, count: length))
        }
    }

    func string() -> String {
        String(decoding: bytes(), as: UTF8.self)
    }
}
