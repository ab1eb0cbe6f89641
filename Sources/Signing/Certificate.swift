internal import COpenSSL
internal import CPayStormShims
public import Foundation

/// An X.509 certificate (OpenSSL `X509`). Immutable.
///
/// `@unchecked Sendable`: the certificate is never mutated after init; OpenSSL's const
/// accessors and verification against it are safe from several threads.
public final class Certificate: @unchecked Sendable {
    let pointer: OpaquePointer
    /// The DER encoding, computed once (it goes into every `x5c` header).
    public let der: [UInt8]

    init(unsafeTakingOwnership pointer: OpaquePointer) throws {
        self.pointer = pointer
        var buffer: UnsafeMutablePointer<UInt8>?
        let length = i2d_X509(pointer, &buffer)
        guard length > 0, let buffer else {
            X509_free(pointer)
            throw SigningError.openSSL("i2d_X509")
        }
        defer { ps_openssl_free(buffer) }
        der = Array(UnsafeBufferPointer(start: buffer, count: Int(length)))
    }

    deinit {
        X509_free(pointer)
    }

    /// Parses a DER certificate.
    /// - Throws: `SigningError` when the bytes are not a certificate.
    public convenience init(der: [UInt8]) throws {
        let parsed: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            return d2i_X509(nil, &cursor, buffer.count)
        }
        guard let parsed else { throw SigningError.openSSL("d2i_X509") }
        try self.init(unsafeTakingOwnership: parsed)
    }

    /// Parses a PEM certificate (the first one in the text).
    /// - Throws: `SigningError` when the text holds no certificate.
    public convenience init(pem: String) throws {
        let bio = try MemoryBIO(pem)
        guard let parsed = PEM_read_bio_X509(bio.pointer, nil, nil, nil) else {
            throw SigningError.openSSL("PEM_read_bio_X509")
        }
        try self.init(unsafeTakingOwnership: parsed)
    }

    /// The certificate as PEM text.
    public func pem() -> String {
        let base64 = Data(der).base64EncodedString(options: [.lineLength64Characters, .endLineWithLineFeed])
        return "-----BEGIN CERTIFICATE-----\n\(base64)\n-----END CERTIFICATE-----\n"
    }

    /// The start of the validity period.
    public var notBefore: Date { Date(timeIntervalSince1970: TimeInterval(notBeforeSeconds)) }

    /// The end of the validity period.
    public var notAfter: Date { Date(timeIntervalSince1970: TimeInterval(notAfterSeconds)) }

    /// `notBefore` in UNIX seconds, as OpenSSL compares it.
    var notBeforeSeconds: Int64 { unixSeconds(X509_get0_notBefore(pointer)) }

    /// `notAfter` in UNIX seconds, as OpenSSL compares it.
    var notAfterSeconds: Int64 { unixSeconds(X509_get0_notAfter(pointer)) }

    /// The subject as a one-line OpenSSL string (`/C=US/O=...`).
    public var subject: String { nameString(X509_get_subject_name(pointer)) }

    /// The issuer as a one-line OpenSSL string (`/C=US/O=...`).
    public var issuer: String { nameString(X509_get_issuer_name(pointer)) }

    /// The first OCSP URL of the Authority Information Access extension, if any.
    public var ocspURL: String? {
        guard let list = X509_get1_ocsp(pointer) else { return nil }
        defer { X509_email_free(list) }
        guard OPENSSL_sk_num(list) > 0, let first = OPENSSL_sk_value(list, 0) else { return nil }
        return String(cString: first.assumingMemoryBound(to: CChar.self))
    }

    /// Whether the certificate carries an extension with this dotted OID, and whether it is critical.
    /// - Returns: nil when the extension is absent, else its criticality.
    public func extensionCriticality(oid: String) -> Bool? {
        guard let object = OBJ_txt2obj(oid, 1) else {
            clearOpenSSLErrors()
            return nil
        }
        defer { ASN1_OBJECT_free(object) }
        let index = X509_get_ext_by_OBJ(pointer, object, -1)
        guard index >= 0, let ext = X509_get_ext(pointer, index) else { return nil }
        return X509_EXTENSION_get_critical(ext) != 0
    }

    /// The SHA-256 of the DER, as colon-separated upper-case hex (as `openssl x509 -fingerprint -sha256`).
    public var sha256Fingerprint: String {
        sha256(der).map { byte in
            let hex = String(byte, radix: 16, uppercase: true)
            return hex.count == 1 ? "0" + hex : hex
        }
        .joined(separator: ":")
    }

    /// Whether this certificate's signature verifies under `issuer`'s public key (the signature only:
    /// names, dates and extensions are the chain verifier's business).
    public func isSigned(by issuer: Certificate) -> Bool {
        guard let key = X509_get0_pubkey(issuer.pointer) else {
            clearOpenSSLErrors()
            return false
        }
        let result = X509_verify(pointer, key) == 1
        clearOpenSSLErrors()
        return result
    }

    /// Whether the private key is the one this certificate certifies.
    public func matches(_ key: SigningKey) -> Bool {
        let result = X509_check_private_key(pointer, key.pointer) == 1
        clearOpenSSLErrors()
        return result
    }
}

/// Converts an `ASN1_TIME` to UNIX seconds (0 on failure, which no real certificate has).
func unixSeconds(_ time: UnsafePointer<ASN1_TIME>?) -> Int64 {
    guard let time else { return 0 }
    var parts = tm()
    guard ASN1_TIME_to_tm(time, &parts) == 1 else { return 0 }
    return Int64(timegm(&parts))
}

private func nameString(_ name: OpaquePointer?) -> String {
    guard let name, let text = X509_NAME_oneline(name, nil, 0) else { return "" }
    defer { ps_openssl_free(text) }
    return String(cString: text)
}
