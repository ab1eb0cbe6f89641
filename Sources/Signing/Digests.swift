internal import COpenSSL
internal import CPayStormShims

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
