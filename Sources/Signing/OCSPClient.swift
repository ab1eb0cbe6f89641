internal import COpenSSL
internal import CPayStormShims
internal import Foundation

/// Python's `_ChainVerifier.check_ocsp_status`: asks each OCSP URL of a certificate's AIA
/// about it (SHA-256 CertID, HTTP POST, 30 s timeout) and accepts a `GOOD` answer signed by
/// the issuer (or by a delegate it certified for OCSP signing) whose CertID matches and whose
/// `thisUpdate`/`nextUpdate` lie within 60 s of now.
///
/// Only loopback responders are contacted: PayStorm never sends traffic elsewhere, and its own
/// PKI points at `paystorm pki ocsp`. Another host counts as unreachable.
enum OCSPClient {
    static let maximumSkew: Int64 = 60

    /// Checks one certificate against its issuer.
    /// - Returns: nil when a GOOD answer was found, else the failure Python would raise.
    static func check(
        _ certificate: OpaquePointer,
        issuer: OpaquePointer,
        store: OpaquePointer
    ) -> VerificationError? {
        let urls = ocspURLs(certificate)
        guard !urls.isEmpty else {
            return VerificationError(status: .verificationFailure, detail: "online checks: no AIA-OCSP URL")
        }
        guard let request = makeRequest(certificate, issuer: issuer) else {
            clearOpenSSLErrors()
            return VerificationError(
                status: .verificationFailure,
                detail: "online checks: cannot build an OCSP request"
            )
        }
        for url in urls {
            let body: [UInt8]
            switch post(request, to: url) {
            case .success(let bytes): body = bytes
            case .failure(let error): return error
            }
            if answerIsGood(body, certificate: certificate, issuer: issuer, store: store) { return nil }
        }
        return VerificationError(status: .verificationFailure, detail: "online checks: no GOOD OCSP answer")
    }

    private static func ocspURLs(_ certificate: OpaquePointer) -> [String] {
        guard let list = X509_get1_ocsp(certificate) else { return [] }
        defer { X509_email_free(list) }
        return (0..<OPENSSL_sk_num(list)).compactMap { index in
            OPENSSL_sk_value(list, index).map { String(cString: $0.assumingMemoryBound(to: CChar.self)) }
        }
    }

    /// A DER OCSPRequest for one SHA-256 CertID, without a nonce (as Python's builder makes it).
    private static func makeRequest(_ certificate: OpaquePointer, issuer: OpaquePointer) -> [UInt8]? {
        guard let request = OCSP_REQUEST_new() else { return nil }
        defer { OCSP_REQUEST_free(request) }
        guard let digest = EVP_get_digestbyname("SHA256"), let id = OCSP_cert_to_id(digest, certificate, issuer)
        else { return nil }
        guard OCSP_request_add0_id(request, id) != nil else {
            OCSP_CERTID_free(id)
            return nil
        }
        var buffer: UnsafeMutablePointer<UInt8>?
        let length = i2d_OCSP_REQUEST(request, &buffer)
        guard length > 0, let buffer else { return nil }
        defer { ps_openssl_free(buffer) }
        return Array(UnsafeBufferPointer(start: buffer, count: Int(length)))
    }

    /// POSTs the request; network errors and non-200 answers are retryable, as in Python.
    private static func post(_ request: [UInt8], to url: String) -> Result<[UInt8], VerificationError> {
        func retryable(_ detail: String) -> Result<[UInt8], VerificationError> {
            clearOpenSSLErrors()
            return .failure(
                VerificationError(status: .retryableVerificationFailure, detail: "online checks: \(detail)")
            )
        }
        guard let parsed = URL(string: url), parsed.scheme == "http", let host = parsed.host else {
            return retryable("unsupported OCSP URL \(url)")
        }
        guard host.hasPrefix("127.") || host == "localhost" || host == "::1" else {
            return retryable("refusing to contact non-loopback OCSP responder \(host)")
        }
        let port = parsed.port ?? 80
        // OpenSSL retries a refused connection until the timeout; Python fails at once, so probe first.
        guard canConnect(host: host, port: port) else { return retryable("cannot connect to \(host):\(port)") }
        var path = parsed.path.isEmpty ? "/" : parsed.path
        if let query = parsed.query { path += "?" + query }
        guard let body = try? MemoryBIO(bytes: request) else { return retryable("cannot buffer the request") }
        let response = OSSL_HTTP_transfer(
            nil,
            host,
            String(port),
            path,
            0,
            "",  // no proxy: the responder is on loopback
            nil,
            nil,
            nil,
            nil,
            nil,
            0,
            nil,
            "application/ocsp-request",
            body.pointer,
            nil,
            0,
            1 << 20,
            30,
            0
        )
        guard let response else { return retryable("OCSP request to \(url) failed or was not answered with 200") }
        defer { BIO_free(response) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let read = BIO_read(response, &chunk, Int32(chunk.count))
            guard read > 0 else { break }
            bytes.append(contentsOf: chunk.prefix(Int(read)))
        }
        return .success(bytes)
    }

    /// Whether a TCP connection to the responder opens (then closes it).
    private static func canConnect(host: String, port: Int) -> Bool {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, String(port), &hints, &list) == 0, let list else { return false }
        defer { freeaddrinfo(list) }
        var entry: UnsafeMutablePointer<addrinfo>? = list
        while let current = entry {
            let descriptor = socket(current.pointee.ai_family, current.pointee.ai_socktype, current.pointee.ai_protocol)
            if descriptor >= 0 {
                defer { close(descriptor) }
                if connect(descriptor, current.pointee.ai_addr, current.pointee.ai_addrlen) == 0 { return true }
            }
            entry = current.pointee.ai_next
        }
        return false
    }

    private static func answerIsGood(
        _ body: [UInt8],
        certificate: OpaquePointer,
        issuer: OpaquePointer,
        store: OpaquePointer
    ) -> Bool {
        defer { clearOpenSSLErrors() }
        let response: OpaquePointer? = body.withUnsafeBufferPointer { buffer in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            return d2i_OCSP_RESPONSE(nil, &cursor, buffer.count)
        }
        guard let response else { return false }
        defer { OCSP_RESPONSE_free(response) }
        guard OCSP_response_status(response) == OCSP_RESPONSE_STATUS_SUCCESSFUL,
            let basic = OCSP_response_get1_basic(response)
        else { return false }
        defer { OCSP_BASICRESP_free(basic) }

        // Python finds the signer only by key hash (its by-name comparison never matches).
        var keyHash: UnsafePointer<ASN1_OCTET_STRING>?
        var name: OpaquePointer?
        guard OCSP_resp_get0_id(basic, &keyHash, &name) == 1, keyHash != nil else { return false }

        // The issuer is trusted as signer outright; a delegate must chain to the root with the OCSP-signing EKU.
        guard let trusted = ps_sk_X509_new_null() else { return false }
        defer { ps_sk_X509_free(trusted) }
        _ = ps_sk_X509_push(trusted, issuer)
        guard OCSP_basic_verify(basic, trusted, store, UInt(OCSP_TRUSTOTHER)) == 1 else { return false }

        let now = Int64(Date().timeIntervalSince1970)
        for index in 0..<OCSP_resp_count(basic) {
            guard let single = OCSP_resp_get0(basic, index), let id = OCSP_SINGLERESP_get0_id(single) else { continue }
            var algorithm: OpaquePointer?
            guard OCSP_id_get0_info(nil, &algorithm, nil, nil, id) == 1, let algorithm,
                let digestName = OBJ_nid2sn(OBJ_obj2nid(algorithm)), let digest = EVP_get_digestbyname(digestName),
                let expected = OCSP_cert_to_id(digest, certificate, issuer)
            else { continue }
            defer { OCSP_CERTID_free(expected) }
            var reason: Int32 = 0
            var revoked: UnsafeMutablePointer<ASN1_GENERALIZEDTIME>?
            var thisUpdate: UnsafeMutablePointer<ASN1_GENERALIZEDTIME>?
            var nextUpdate: UnsafeMutablePointer<ASN1_GENERALIZEDTIME>?
            let status = OCSP_single_get0_status(single, &reason, &revoked, &thisUpdate, &nextUpdate)
            guard status == V_OCSP_CERTSTATUS_GOOD, OCSP_id_cmp(expected, id) == 0, let thisUpdate, let nextUpdate
            else { continue }
            if unixSeconds(thisUpdate) <= now + maximumSkew && unixSeconds(nextUpdate) >= now - maximumSkew {
                return true
            }
        }
        return false
    }
}
