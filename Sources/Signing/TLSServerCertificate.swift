public import Foundation

/// A TLS server certificate issued by the test PKI's root, for serving HTTPS on loopback under the host names a
/// backend calls (Apple's App Store Server API hosts, mapped to 127.0.0.1 in a test setup). A backend that
/// trusts `root.pem` as a CA accepts it. Generated at run or test time, never stored in the repository.
///
/// ```swift
/// let tls = try TLSServerCertificate.issue(by: pki, hostNames: TLSServerCertificate.appStoreHostNames)
/// let server = try HTTPServer(tls: HTTPServerTLS(keyPEM: tls.keyPEM, certificateChainPEM: tls.certificatePEM)) { ... }
/// ```
public struct TLSServerCertificate: Sendable {
    /// The certificate, with the host names as subject alternative names.
    public var certificate: Certificate
    /// Its P-256 private key.
    public var key: SigningKey

    /// The App Store Server API's host names (production and sandbox, current and older), `verifyReceipt`'s
    /// two, and loopback.
    public static let appStoreHostNames = [
        "api.storekit.itunes.apple.com", "api.storekit-sandbox.itunes.apple.com", "api.storekit.apple.com",
        "api.storekit-sandbox.apple.com", "buy.itunes.apple.com", "sandbox.itunes.apple.com", "localhost",
        "127.0.0.1", "::1",
    ]

    /// Issues a server certificate for the host names, signed by the root of `pki`.
    /// - Parameters:
    ///   - pki: the test PKI whose root signs (clients trust its `root.pem`).
    ///   - hostNames: DNS names and IP addresses (IPv4 or IPv6) the certificate names.
    ///   - validity: how long it is valid from now, in seconds (it also starts an hour back, for clock skew).
    /// - Returns: the certificate and its key.
    /// - Throws: `SigningError` when OpenSSL fails (a host name OpenSSL cannot write, for example).
    public static func issue(
        by pki: TestPKI,
        hostNames: [String],
        validity: TimeInterval = 30 * 86_400
    ) throws -> TLSServerCertificate {
        let key = try SigningKey.generate(.p256)
        var seen = Set<String>()
        let names = hostNames.filter { !$0.isEmpty && seen.insert($0).inserted }.map { name in
            isIPAddress(name) ? "IP:\(name)" : "DNS:\(name)"
        }
        let certificate = try CertificateBuilder(
            commonName: hostNames.first ?? "localhost",
            subjectKey: key,
            issuer: pki.root,
            issuerKey: pki.rootKey,
            digest: "SHA384",
            notBefore: Date() - 3600,
            notAfter: Date() + validity
        )
        .build(extensions: [
            ("basicConstraints", "critical,CA:FALSE"),
            ("keyUsage", "critical,digitalSignature"),
            ("extendedKeyUsage", "serverAuth"),
            ("subjectKeyIdentifier", "hash"),
            ("authorityKeyIdentifier", "keyid:always"),
            ("subjectAltName", names.joined(separator: ",")),
        ])
        return TLSServerCertificate(certificate: certificate, key: key)
    }

    /// The certificate in PEM.
    public var certificatePEM: String { certificate.pem() }

    /// The private key in PEM (PKCS#8).
    /// - Throws: `SigningError` when OpenSSL fails.
    public func keyPEM() throws -> String { try key.pem() }

    private static func isIPAddress(_ name: String) -> Bool {
        var v4 = in_addr()
        var v6 = in6_addr()
        return inet_pton(AF_INET, name, &v4) == 1 || inet_pton(AF_INET6, name, &v6) == 1
    }
}
