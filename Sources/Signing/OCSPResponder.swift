internal import COpenSSL
internal import CPayStormShims
internal import Foundation

/// Answers OCSP requests for the test PKI with `GOOD`, so backends that keep Apple's online
/// checks on accept PayStorm's chain (reference §2.2 step 6).
///
/// Each answer is signed by the issuer of the certificate asked about (root for the
/// intermediate, intermediate for the leaf), identifies the responder by key hash, accepts
/// SHA-1 and SHA-256 CertIDs, and carries `thisUpdate` = now − 1 min and `nextUpdate` = now + 1 day.
///
/// ```swift
/// let responder = OCSPResponder(pki: pki)
/// let answer = responder.respond(to: requestDER)   // DER OCSPResponse, always well-formed
/// ```
public struct OCSPResponder: Sendable {
    private let issuers: [(certificate: Certificate, key: SigningKey)]

    /// Creates a responder for a PKI: the root answers for intermediates, the intermediate for leaves.
    public init(pki: TestPKI) {
        issuers = [(pki.root, pki.rootKey), (pki.intermediate, pki.intermediateKey)]
    }

    /// Answers one DER `OCSPRequest` with a DER `OCSPResponse`. A request that does not parse
    /// gets `malformedRequest`; one about an issuer this PKI does not hold gets `unauthorized`.
    public func respond(to requestDER: [UInt8]) -> [UInt8] {
        let request: OpaquePointer? = requestDER.withUnsafeBufferPointer { buffer in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            return d2i_OCSP_REQUEST(nil, &cursor, buffer.count)
        }
        guard let request else {
            clearOpenSSLErrors()
            return Self.status(OCSP_RESPONSE_STATUS_MALFORMEDREQUEST)
        }
        defer { OCSP_REQUEST_free(request) }
        return (try? answer(request)) ?? Self.status(OCSP_RESPONSE_STATUS_INTERNALERROR)
    }

    private func answer(_ request: OpaquePointer) throws -> [UInt8] {
        let count = OCSP_request_onereq_count(request)
        guard count > 0 else { return Self.status(OCSP_RESPONSE_STATUS_MALFORMEDREQUEST) }
        guard let basic = OCSP_BASICRESP_new() else { throw SigningError.openSSL("OCSP_BASICRESP_new") }
        defer { OCSP_BASICRESP_free(basic) }
        guard let thisUpdate = X509_gmtime_adj(nil, -60), let nextUpdate = X509_gmtime_adj(nil, 86_400) else {
            throw SigningError.openSSL("X509_gmtime_adj")
        }
        defer {
            ASN1_TIME_free(thisUpdate)
            ASN1_TIME_free(nextUpdate)
        }
        var signer: (certificate: Certificate, key: SigningKey)?
        for index in 0..<count {
            guard let one = OCSP_request_onereq_get0(request, index), let id = OCSP_onereq_get0_id(one) else {
                return Self.status(OCSP_RESPONSE_STATUS_MALFORMEDREQUEST)
            }
            guard let issuer = issuer(of: id) else { return Self.status(OCSP_RESPONSE_STATUS_UNAUTHORIZED) }
            // One response has one signer; a CertID from another issuer is answered UNKNOWN.
            let known = signer == nil || signer?.certificate === issuer.certificate
            if signer == nil { signer = issuer }
            let status = known ? V_OCSP_CERTSTATUS_GOOD : V_OCSP_CERTSTATUS_UNKNOWN
            guard OCSP_basic_add1_status(basic, id, status, 0, nil, thisUpdate, nextUpdate) != nil else {
                throw SigningError.openSSL("OCSP_basic_add1_status")
            }
        }
        _ = OCSP_copy_nonce(basic, request)
        guard let signer, let digest = EVP_get_digestbyname("SHA256") else {
            throw SigningError.openSSL("EVP_get_digestbyname")
        }
        guard
            OCSP_basic_sign(
                basic,
                signer.certificate.pointer,
                signer.key.pointer,
                digest,
                nil,
                UInt(OCSP_RESPID_KEY | OCSP_NOCERTS)
            ) == 1
        else { throw SigningError.openSSL("OCSP_basic_sign") }
        guard let response = OCSP_response_create(OCSP_RESPONSE_STATUS_SUCCESSFUL, basic) else {
            throw SigningError.openSSL("OCSP_response_create")
        }
        defer { OCSP_RESPONSE_free(response) }
        return try Self.encode(response)
    }

    /// The issuer whose name and key hashes the CertID carries, in the CertID's hash algorithm.
    private func issuer(of id: OpaquePointer) -> (certificate: Certificate, key: SigningKey)? {
        var algorithm: OpaquePointer?
        guard OCSP_id_get0_info(nil, &algorithm, nil, nil, id) == 1, let algorithm,
            let name = OBJ_nid2sn(OBJ_obj2nid(algorithm)), let digest = EVP_get_digestbyname(name)
        else { return nil }
        for candidate in issuers {
            // A CertID for any subject of this issuer: compare everything but the serial.
            guard let probe = OCSP_cert_to_id(digest, nil, candidate.certificate.pointer) else { continue }
            defer { OCSP_CERTID_free(probe) }
            if OCSP_id_issuer_cmp(probe, id) == 0 { return candidate }
        }
        clearOpenSSLErrors()
        return nil
    }

    private static func status(_ code: Int32) -> [UInt8] {
        guard let response = OCSP_response_create(code, nil) else { return [] }
        defer { OCSP_RESPONSE_free(response) }
        return (try? encode(response)) ?? []
    }

    private static func encode(_ response: OpaquePointer) throws -> [UInt8] {
        var buffer: UnsafeMutablePointer<UInt8>?
        let length = i2d_OCSP_RESPONSE(response, &buffer)
        guard length > 0, let buffer else { throw SigningError.openSSL("i2d_OCSP_RESPONSE") }
        defer { ps_openssl_free(buffer) }
        return Array(UnsafeBufferPointer(start: buffer, count: Int(length)))
    }
}
