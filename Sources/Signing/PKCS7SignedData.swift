internal import COpenSSL
internal import CPayStormShims

/// PKCS#7 SignedData, the envelope of an App Store app receipt: the content (the receipt's ASN.1 set) is
/// carried inside, signed by the PKI's leaf, with the leaf, intermediate and root certificates attached.
///
/// Apple signs receipts with RSA keys under its own root; PayStorm signs with the test PKI's leaf key
/// (ECDSA P-256 with SHA-256), so a backend that checks receipts itself must trust the test root, and one
/// that insists on an RSA signature rejects them.
///
/// ```swift
/// let der = try PKCS7SignedData.sign(content, with: pki)
/// let back = try PKCS7SignedData.verifiedContent(der, trusting: pki.root)  // == content
/// ```
public enum PKCS7SignedData {
    /// Signs `content` with the PKI's leaf into DER PKCS#7 SignedData (content attached, binary, no S/MIME
    /// capabilities attribute).
    /// - Throws: `SigningError` when OpenSSL fails.
    public static func sign(_ content: [UInt8], with pki: TestPKI) throws -> [UInt8] {
        let data = try MemoryBIO(bytes: content)
        guard let extra = ps_sk_X509_new_null() else { throw SigningError.openSSL("sk_X509_new_null") }
        defer { ps_sk_X509_free(extra) }
        for certificate in [pki.intermediate, pki.root] where ps_sk_X509_push(extra, certificate.pointer) <= 0 {
            throw SigningError.openSSL("sk_X509_push")
        }
        let flags = Int32(PKCS7_BINARY | PKCS7_NOSMIMECAP)
        guard let signed = PKCS7_sign(pki.leaf.pointer, pki.leafKey.pointer, extra, data.pointer, flags) else {
            throw SigningError.openSSL("PKCS7_sign")
        }
        defer { PKCS7_free(signed) }
        var buffer: UnsafeMutablePointer<UInt8>?
        let length = i2d_PKCS7(signed, &buffer)
        guard length > 0, let buffer else { throw SigningError.openSSL("i2d_PKCS7") }
        defer { ps_openssl_free(buffer) }
        return Array(UnsafeBufferPointer(start: buffer, count: Int(length)))
    }

    /// Parses DER PKCS#7 SignedData, checks its signature and its signer's chain up to `root` at the current
    /// time, and returns the signed content.
    /// - Throws: `SigningError` naming the step that failed (not PKCS#7, a bad signature, an untrusted chain).
    public static func verifiedContent(_ der: [UInt8], trusting root: Certificate) throws -> [UInt8] {
        let parsed = der.withUnsafeBufferPointer { buffer in
            var cursor = buffer.baseAddress
            return d2i_PKCS7(nil, &cursor, buffer.count)
        }
        guard let parsed else { throw SigningError.openSSL("d2i_PKCS7") }
        defer { PKCS7_free(parsed) }
        guard let store = X509_STORE_new() else { throw SigningError.openSSL("X509_STORE_new") }
        defer { X509_STORE_free(store) }
        guard X509_STORE_add_cert(store, root.pointer) == 1 else { throw SigningError.openSSL("X509_STORE_add_cert") }
        let output = try MemoryBIO()
        guard PKCS7_verify(parsed, nil, store, nil, output.pointer, Int32(PKCS7_BINARY)) == 1 else {
            throw SigningError.openSSL("PKCS7_verify")
        }
        return output.bytes()
    }
}

/// SHA-1 of `bytes`: the digest an app receipt's hash attribute (type 5) holds.
public func sha1(_ bytes: [UInt8]) -> [UInt8] {
    var digest = [UInt8](repeating: 0, count: 20)
    var length: UInt32 = 0
    bytes.withUnsafeBufferPointer { input in
        _ = EVP_Digest(input.baseAddress, input.count, &digest, &length, EVP_sha1(), nil)
    }
    return digest
}
