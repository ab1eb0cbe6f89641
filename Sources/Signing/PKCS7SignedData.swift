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
    /// - Parameters:
    ///   - content: the bytes to sign and carry.
    ///   - pki: the PKI whose leaf signs.
    ///   - certificates: the certificates attached beside the leaf; nil for the PKI's intermediate and root
    ///     (forged receipts attach fewer or more).
    /// - Throws: `SigningError` when OpenSSL fails.
    public static func sign(
        _ content: [UInt8],
        with pki: TestPKI,
        attaching certificates: [Certificate]? = nil
    ) throws -> [UInt8] {
        let data = try MemoryBIO(bytes: content)
        guard let extra = ps_sk_X509_new_null() else { throw SigningError.openSSL("sk_X509_new_null") }
        defer { ps_sk_X509_free(extra) }
        let attached = certificates ?? [pki.intermediate, pki.root]
        for certificate in attached where ps_sk_X509_push(extra, certificate.pointer) <= 0 {
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
        try verify(der, trusting: root, flags: Int32(PKCS7_BINARY))
    }

    /// Whether the signer's chain verifies up to `root` at the current time, the signature left unchecked.
    public static func signerChainVerifies(_ der: [UInt8], trusting root: Certificate) -> Bool {
        (try? verify(der, trusting: root, flags: Int32(PKCS7_BINARY | PKCS7_NOSIGS))) != nil
    }

    /// The certificates DER PKCS#7 SignedData carries, and the one its signer info names.
    /// - Throws: `SigningError` when the bytes are not PKCS#7 SignedData.
    public static func certificates(_ der: [UInt8]) throws -> (attached: [Certificate], signer: Certificate?) {
        let parsed = try parse(der)
        defer { PKCS7_free(parsed) }
        guard let stack = ps_PKCS7_certificates(parsed) else { throw SigningError.openSSL("PKCS7 certificates") }
        let attached = try (0..<ps_sk_X509_num(stack)).map { try owned(ps_sk_X509_value(stack, $0)) }
        guard let signers = PKCS7_get0_signers(parsed, nil, 0) else { return (attached, nil) }
        defer { ps_sk_X509_free(signers) }
        let signer = ps_sk_X509_num(signers) == 1 ? try owned(ps_sk_X509_value(signers, 0)) : nil
        return (attached, signer)
    }

    /// The SignedData with its carried content replaced after signing, the signature and certificates kept: a
    /// tampered receipt, whose signature no longer matches. Nil when `der` is not SignedData carrying content.
    public static func replacingContent(of der: [UInt8], with content: [UInt8]) -> [UInt8]? {
        guard let top = DER.elements(der), top.count == 1, let info = top[0].children, info.count == 2,
            let explicit = info[1].children, explicit.count == 1, var fields = explicit[0].children,
            fields.count >= 4, let encapsulated = fields[2].children, encapsulated.count == 2
        else { return nil }
        // ContentInfo { type, [0] SignedData { version, digests, { data, [0] OCTET STRING }, ... } }
        let carried = DER.Element(tag: encapsulated[1].tag, content: DER.octetString(content)[...])
        fields[2] = DER.Element(tag: fields[2].tag, content: (encapsulated[0].encoded + carried.encoded)[...])
        let signedData = DER.Element(tag: explicit[0].tag, content: fields.flatMap(\.encoded)[...])
        let wrapper = DER.Element(tag: info[1].tag, content: signedData.encoded[...])
        return DER.Element(tag: top[0].tag, content: (info[0].encoded + wrapper.encoded)[...]).encoded
    }

    /// A certificate that another OpenSSL object owns, taken with a reference of its own.
    private static func owned(_ pointer: OpaquePointer?) throws -> Certificate {
        guard let pointer, X509_up_ref(pointer) == 1 else { throw SigningError.openSSL("X509_up_ref") }
        return try Certificate(unsafeTakingOwnership: pointer)
    }

    private static func parse(_ der: [UInt8]) throws -> UnsafeMutablePointer<PKCS7> {
        let parsed = der.withUnsafeBufferPointer { buffer in
            var cursor = buffer.baseAddress
            return d2i_PKCS7(nil, &cursor, buffer.count)
        }
        guard let parsed else { throw SigningError.openSSL("d2i_PKCS7") }
        return parsed
    }

    private static func verify(_ der: [UInt8], trusting root: Certificate, flags: Int32) throws -> [UInt8] {
        let parsed = try parse(der)
        defer { PKCS7_free(parsed) }
        guard let store = X509_STORE_new() else { throw SigningError.openSSL("X509_STORE_new") }
        defer { X509_STORE_free(store) }
        guard X509_STORE_add_cert(store, root.pointer) == 1 else { throw SigningError.openSSL("X509_STORE_add_cert") }
        let output = try MemoryBIO()
        guard PKCS7_verify(parsed, nil, store, nil, output.pointer, flags) == 1 else {
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
