internal import COpenSSL
public import Foundation

/// Apple's extension OIDs that the verifiers look for (reference §2.2 step 5).
public enum AppleOID {
    /// The Apple WWDR intermediate marker, required on `x5c[1]`.
    public static let intermediate = "1.2.840.113635.100.6.2.1"
    /// The App Store receipt-signing marker, required on the leaf `x5c[0]`.
    public static let leaf = "1.2.840.113635.100.6.11.1"
}

/// How to mint a chain: validity, optional OCSP URL, and the deviations forgeries need.
public struct PKIOptions: Sendable {
    /// Start of validity of every certificate minted with these options.
    public var notBefore: Date
    /// End of validity of every certificate minted with these options.
    public var notAfter: Date
    /// OCSP URL written into the AIA extension of the intermediate and the leaf.
    public var ocspURL: String?
    /// Whether the leaf carries `1.2.840.113635.100.6.11.1`.
    public var leafAppleOID: Bool
    /// Whether the intermediate carries `1.2.840.113635.100.6.2.1`.
    public var intermediateAppleOID: Bool
    /// Whether the Apple OIDs are marked critical (every verifier then rejects the chain).
    public var appleOIDsCritical: Bool

    /// Creates options. The default validity (400 days back, 2 years ahead) covers back-dated `signedDate`s.
    public init(
        notBefore: Date = Date() - 400 * 86_400,
        notAfter: Date = Date() + 2 * 365 * 86_400,
        ocspURL: String? = nil,
        leafAppleOID: Bool = true,
        intermediateAppleOID: Bool = true,
        appleOIDsCritical: Bool = false
    ) {
        self.notBefore = notBefore
        self.notAfter = notAfter
        self.ocspURL = ocspURL
        self.leafAppleOID = leafAppleOID
        self.intermediateAppleOID = intermediateAppleOID
        self.appleOIDsCritical = appleOIDsCritical
    }
}

/// PayStorm's own App Store PKI: a P-384 root and intermediate and a P-256 leaf, with the
/// extensions of Apple's real chain (reference §3), so Apple's verifiers accept it once they
/// trust the root.
///
/// ```swift
/// let pki = try TestPKI.generate()
/// try pki.write(to: "pki")
/// let signer = ES256Signer(pki: try TestPKI.load(from: "pki"))
/// ```
public struct TestPKI: Sendable {
    /// The self-signed root: backends trust its DER.
    public var root: Certificate
    /// The intermediate, signed by the root, carrying Apple's intermediate OID.
    public var intermediate: Certificate
    /// The leaf, signed by the intermediate, carrying Apple's receipt-signing OID; it signs the JWS.
    public var leaf: Certificate
    /// The root's P-384 key.
    public var rootKey: SigningKey
    /// The intermediate's P-384 key.
    public var intermediateKey: SigningKey
    /// The leaf's P-256 key.
    public var leafKey: SigningKey

    /// Creates a PKI from existing parts (no checks; `load` checks).
    public init(
        root: Certificate,
        intermediate: Certificate,
        leaf: Certificate,
        rootKey: SigningKey,
        intermediateKey: SigningKey,
        leafKey: SigningKey
    ) {
        self.root = root
        self.intermediate = intermediate
        self.leaf = leaf
        self.rootKey = rootKey
        self.intermediateKey = intermediateKey
        self.leafKey = leafKey
    }

    /// The `x5c` chain in header order: leaf, intermediate, root.
    public var chain: [Certificate] { [leaf, intermediate, root] }

    /// Generates a fresh root, intermediate and leaf.
    /// - Throws: `SigningError` when OpenSSL fails.
    public static func generate(_ options: PKIOptions = PKIOptions()) throws -> TestPKI {
        let rootKey = try SigningKey.generate(.p384)
        let root = try CertificateBuilder(
            commonName: "PayStorm Test Root CA",
            subjectKey: rootKey,
            issuer: nil,
            issuerKey: rootKey,
            digest: "SHA384",
            notBefore: options.notBefore,
            notAfter: options.notAfter
        )
        .build(extensions: [
            ("basicConstraints", "critical,CA:TRUE"),
            ("keyUsage", "critical,keyCertSign,cRLSign"),
            ("subjectKeyIdentifier", "hash"),
        ])
        return try variant(root: root, rootKey: rootKey, options)
    }

    /// Mints a new intermediate and leaf under the SAME root, with other options
    /// (forgeries: missing or critical OIDs, other validity, an OCSP URL).
    /// - Throws: `SigningError` when OpenSSL fails.
    public func variant(_ options: PKIOptions) throws -> TestPKI {
        try Self.variant(root: root, rootKey: rootKey, options)
    }

    private static func variant(root: Certificate, rootKey: SigningKey, _ options: PKIOptions) throws -> TestPKI {
        let critical = options.appleOIDsCritical ? "critical," : ""
        var aia: [(String, String)] = []
        if let url = options.ocspURL { aia.append(("authorityInfoAccess", "OCSP;URI:\(url)")) }

        let intermediateKey = try SigningKey.generate(.p384)
        var intermediateExtensions: [(String, String)] = [
            ("basicConstraints", "critical,CA:TRUE,pathlen:0"),
            ("keyUsage", "critical,keyCertSign,cRLSign"),
            ("subjectKeyIdentifier", "hash"),
            ("authorityKeyIdentifier", "keyid:always"),
        ]
        if options.intermediateAppleOID {
            intermediateExtensions.append((AppleOID.intermediate, critical + "DER:05:00"))
        }
        let intermediate = try CertificateBuilder(
            commonName: "PayStorm Test Worldwide Developer Relations CA",
            subjectKey: intermediateKey,
            issuer: root,
            issuerKey: rootKey,
            digest: "SHA384",
            notBefore: options.notBefore,
            notAfter: options.notAfter
        )
        .build(extensions: intermediateExtensions + aia)

        let leafKey = try SigningKey.generate(.p256)
        var leafExtensions: [(String, String)] = [
            ("basicConstraints", "critical,CA:FALSE"),
            ("keyUsage", "critical,digitalSignature"),
            ("subjectKeyIdentifier", "hash"),
            ("authorityKeyIdentifier", "keyid:always"),
        ]
        if options.leafAppleOID { leafExtensions.append((AppleOID.leaf, critical + "DER:05:00")) }
        let leaf = try CertificateBuilder(
            commonName: "PayStorm Test App Store Receipt Signing",
            subjectKey: leafKey,
            issuer: intermediate,
            issuerKey: intermediateKey,
            digest: "SHA384",
            notBefore: options.notBefore,
            notAfter: options.notAfter
        )
        .build(extensions: leafExtensions + aia)

        return TestPKI(
            root: root,
            intermediate: intermediate,
            leaf: leaf,
            rootKey: rootKey,
            intermediateKey: intermediateKey,
            leafKey: leafKey
        )
    }

    /// The files a PKI directory holds.
    public static let fileNames = [
        "root.der", "root.pem", "root.key", "intermediate.pem", "intermediate.key", "leaf.pem", "leaf.key",
    ]

    /// Writes the PKI: `root.der`, `root.pem`, `intermediate.pem`, `leaf.pem` and the three
    /// `*.key` files (PKCS#8 PEM, mode 0600). Creates the directory if needed; overwrites files.
    /// - Throws: `PKIError` (`.cannotWrite`) naming the path that failed.
    public func write(to directory: String) throws {
        let manager = FileManager.default
        do {
            try manager.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            throw PKIError(.cannotWrite, "cannot create directory \(directory)")
        }
        let files: [(String, [UInt8], Bool)] = [
            ("root.der", root.der, false),
            ("root.pem", Array(root.pem().utf8), false),
            ("intermediate.pem", Array(intermediate.pem().utf8), false),
            ("leaf.pem", Array(leaf.pem().utf8), false),
            ("root.key", Array(try rootKey.pem().utf8), true),
            ("intermediate.key", Array(try intermediateKey.pem().utf8), true),
            ("leaf.key", Array(try leafKey.pem().utf8), true),
        ]
        for (name, bytes, secret) in files {
            let path = (directory as NSString).appendingPathComponent(name)
            try writeFile(path, bytes, mode: secret ? 0o600 : 0o644)
        }
    }

    /// Loads a PKI written by `write(to:)` and checks that every key matches its certificate and that the
    /// leaf verifies under the intermediate and the intermediate under the root.
    /// - Throws: `PKIError`: `.missing` for an absent directory or file, `.malformed` for a file
    ///   that does not parse, a key that does not match or a certificate that does not verify.
    public static func load(from directory: String) throws -> TestPKI {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue
        else {
            throw PKIError(
                .missing,
                "no PKI directory at \(directory) (create one with 'paystorm pki init \(directory)')"
            )
        }
        let folder = PKIFolder(directory: directory)
        let pki = TestPKI(
            root: try folder.certificate("root.pem"),
            intermediate: try folder.certificate("intermediate.pem"),
            leaf: try folder.certificate("leaf.pem"),
            rootKey: try folder.key("root.key"),
            intermediateKey: try folder.key("intermediate.key"),
            leafKey: try folder.key("leaf.key")
        )
        try pki.check(in: directory)
        return pki
    }

    /// Checks that every key matches its certificate, that the leaf key is P-256, and that the chain verifies.
    private func check(in directory: String) throws {
        for (name, cert, key) in [
            ("root", root, rootKey), ("intermediate", intermediate, intermediateKey),
            ("leaf", leaf, leafKey),
        ] where !cert.matches(key) {
            throw PKIError(.malformed, "PKI in \(directory): \(name).key does not match \(name).pem")
        }
        guard leafKey.curve == .p256 else {
            throw PKIError(.malformed, "PKI in \(directory): leaf.key is not a P-256 key (ES256 needs P-256)")
        }
        // A chain that does not verify would be minted into every x5c and rejected by every correct target,
        // so the whole run would read as "the target rejects genuine purchases".
        for (name, cert, issuerName, issuer) in [
            ("intermediate", intermediate, "root", root), ("leaf", leaf, "intermediate", intermediate),
        ] where !cert.isSigned(by: issuer) {
            throw PKIError(
                .malformed,
                "PKI in \(directory): \(name).pem does not verify under \(issuerName).pem (it was not signed by \(issuerName).key)"
            )
        }
    }
}

/// The PEM files of a PKI directory, each read with a message that names the file.
private struct PKIFolder {
    let directory: String

    func read(_ name: String) throws -> String {
        let path = (directory as NSString).appendingPathComponent(name)
        guard FileManager.default.fileExists(atPath: path) else {
            throw PKIError(.missing, "PKI file \(path) is missing")
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw PKIError(.missing, "PKI file \(path) cannot be read")
        }
        return String(decoding: data, as: UTF8.self)
    }

    func certificate(_ name: String) throws -> Certificate {
        let text = try read(name)
        do { return try Certificate(pem: text) } catch {
            throw PKIError(
                .malformed,
                "PKI file \((directory as NSString).appendingPathComponent(name)) is not a PEM certificate"
            )
        }
    }

    func key(_ name: String) throws -> SigningKey {
        let text = try read(name)
        do { return try SigningKey(pem: text) } catch {
            throw PKIError(
                .malformed,
                "PKI file \((directory as NSString).appendingPathComponent(name)) is not a PEM private key"
            )
        }
    }
}

private func writeFile(_ path: String, _ bytes: [UInt8], mode: mode_t) throws {
    // Open with the final mode so a private key is never readable by others, even briefly.
    let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode)
    guard descriptor >= 0 else {
        throw PKIError(.cannotWrite, "cannot write \(path): \(String(cString: strerror(errno)))")
    }
    defer { close(descriptor) }
    _ = fchmod(descriptor, mode)
    var offset = 0
    while offset < bytes.count {
        let written = bytes.withUnsafeBytes { buffer in
            Foundation.write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
        }
        guard written > 0 else {
            throw PKIError(.cannotWrite, "cannot write \(path): \(String(cString: strerror(errno)))")
        }
        offset += written
    }
}

/// Builds one X.509 v3 certificate with OpenSSL's v3 extension configuration syntax.
struct CertificateBuilder {
    var commonName: String
    var subjectKey: SigningKey
    var issuer: Certificate?
    var issuerKey: SigningKey
    var digest: String
    var notBefore: Date
    var notAfter: Date

    func build(extensions: [(String, String)]) throws -> Certificate {
        guard let x509 = X509_new() else { throw SigningError.openSSL("X509_new") }
        var owned = true
        defer { if owned { X509_free(x509) } }
        guard X509_set_version(x509, 2) == 1 else { throw SigningError.openSSL("X509_set_version") }
        var serial = UInt64.random(in: 1...UInt64(Int64.max))
        serial |= 1 << 62  // keep the DER integer a fixed 8 bytes
        guard ASN1_INTEGER_set_uint64(X509_get_serialNumber(x509), serial) == 1 else {
            throw SigningError.openSSL("ASN1_INTEGER_set_uint64")
        }
        guard let name = X509_NAME_new() else { throw SigningError.openSSL("X509_NAME_new") }
        defer { X509_NAME_free(name) }
        for (field, value) in [("C", "US"), ("O", "PayStorm Test PKI"), ("CN", commonName)] {
            guard X509_NAME_add_entry_by_txt(name, field, MBSTRING_UTF8, value, -1, -1, 0) == 1 else {
                throw SigningError.openSSL("X509_NAME_add_entry_by_txt")
            }
        }
        guard X509_set_subject_name(x509, name) == 1 else { throw SigningError.openSSL("X509_set_subject_name") }
        let issuerName = issuer.map { X509_get_subject_name($0.pointer) } ?? name
        guard X509_set_issuer_name(x509, issuerName) == 1 else { throw SigningError.openSSL("X509_set_issuer_name") }
        guard ASN1_TIME_set(X509_getm_notBefore(x509), time_t(notBefore.timeIntervalSince1970)) != nil,
            ASN1_TIME_set(X509_getm_notAfter(x509), time_t(notAfter.timeIntervalSince1970)) != nil
        else { throw SigningError.openSSL("ASN1_TIME_set") }
        guard X509_set_pubkey(x509, subjectKey.pointer) == 1 else { throw SigningError.openSSL("X509_set_pubkey") }

        var context = X509V3_CTX()
        X509V3_set_ctx(&context, issuer?.pointer ?? x509, x509, nil, nil, 0)
        for (name, value) in extensions {
            guard let ext = X509V3_EXT_nconf(nil, &context, name, value) else {
                throw SigningError.openSSL("X509V3_EXT_nconf(\(name))")
            }
            defer { X509_EXTENSION_free(ext) }
            guard X509_add_ext(x509, ext, -1) == 1 else { throw SigningError.openSSL("X509_add_ext(\(name))") }
        }
        guard let md = EVP_get_digestbyname(digest) else { throw SigningError.openSSL("EVP_get_digestbyname") }
        guard X509_sign(x509, issuerKey.pointer, md) > 0 else { throw SigningError.openSSL("X509_sign") }
        owned = false
        return try Certificate(unsafeTakingOwnership: x509)
    }
}
