internal import COpenSSL
internal import CPayStormShims
internal import Foundation

/// A chain that verified: the leaf key and the window in which all three certificates are valid.
struct VerifiedChain: Sendable {
    let verifiers: PKeyContextPool
    let isP256: Bool
    /// Latest `notBefore` of leaf, intermediate and root (UNIX seconds, valid from it inclusive).
    let validFrom: Int64
    /// Earliest `notAfter` (valid strictly before it, as OpenSSL compares).
    let validUntil: Int64

    /// When OCSP last answered GOOD for this chain (UNIX seconds), if online checks ran.
    let onlineCheckedAt: Int64?

    func covers(_ time: Int64) -> Bool { time >= validFrom && time < validUntil }

    /// Python keeps an online-verified chain for 15 minutes.
    func onlineCheckIsFresh(now: Int64) -> Bool {
        guard let onlineCheckedAt else { return false }
        return now - onlineCheckedAt < 15 * 60
    }
}

/// The configured roots in an OpenSSL `X509_STORE` with `X509_V_FLAG_X509_STRICT`.
///
/// `@unchecked Sendable`: the store is filled in init and only read afterwards; OpenSSL locks
/// its lookups, and each verification uses its own `X509_STORE_CTX`.
final class TrustStore: @unchecked Sendable {
    let pointer: OpaquePointer
    private let roots: [Certificate]
    private let leafOID: OpaquePointer
    private let intermediateOID: OpaquePointer

    init(_ rootCertificates: [[UInt8]]) throws {
        roots = try rootCertificates.map { try Certificate(der: $0) }
        guard let store = X509_STORE_new() else { throw SigningError.openSSL("X509_STORE_new") }
        pointer = store
        for root in roots where X509_STORE_add_cert(store, root.pointer) != 1 {
            throw SigningError.openSSL("X509_STORE_add_cert")
        }
        X509_STORE_set_flags(store, UInt(X509_V_FLAG_X509_STRICT))
        guard let leafOID = OBJ_txt2obj(AppleOID.leaf, 1), let intermediateOID = OBJ_txt2obj(AppleOID.intermediate, 1)
        else { throw SigningError.openSSL("OBJ_txt2obj") }
        self.leafOID = leafOID
        self.intermediateOID = intermediateOID
    }

    deinit {
        X509_STORE_free(pointer)
        ASN1_OBJECT_free(leafOID)
        ASN1_OBJECT_free(intermediateOID)
    }

    func verify(
        leaf: Certificate,
        intermediate: Certificate,
        at time: Int64,
        onlineChecks: Bool
    ) -> Result<VerifiedChain, VerificationError> {
        guard let context = X509_STORE_CTX_new() else { return chainFailure("X509_STORE_CTX_new failed") }
        defer { X509_STORE_CTX_free(context) }
        guard let untrusted = ps_sk_X509_new_null() else { return chainFailure("sk_X509_new_null failed") }
        defer { ps_sk_X509_free(untrusted) }
        _ = ps_sk_X509_push(untrusted, intermediate.pointer)
        guard X509_STORE_CTX_init(context, pointer, leaf.pointer, untrusted) == 1 else {
            return chainFailure("X509_STORE_CTX_init failed")
        }
        X509_STORE_CTX_set_time(context, 0, time_t(time))
        guard X509_verify_cert(context) == 1 else {
            let code = X509_STORE_CTX_get_error(context)
            clearOpenSSLErrors()
            let reason = X509_verify_cert_error_string(Int(code)).map { String(cString: $0) } ?? "error \(code)"
            return chainFailure("chain verification failed: \(reason)")
        }
        guard let chain = X509_STORE_CTX_get0_chain(context), ps_sk_X509_num(chain) >= 2,
            let verifiedLeaf = ps_sk_X509_value(chain, 0), let verifiedIntermediate = ps_sk_X509_value(chain, 1)
        else { return chainFailure("the verified chain is shorter than leaf and intermediate") }
        guard X509_get_ext_by_OBJ(verifiedLeaf, leafOID, -1) >= 0 else {
            return chainFailure("the leaf lacks Apple's receipt-signing OID \(AppleOID.leaf)")
        }
        guard X509_get_ext_by_OBJ(verifiedIntermediate, intermediateOID, -1) >= 0 else {
            return chainFailure("the intermediate lacks Apple's intermediate OID \(AppleOID.intermediate)")
        }
        if onlineChecks, let error = revocationFailure(chain, leaf: verifiedLeaf, intermediate: verifiedIntermediate) {
            return .failure(error)
        }
        let (validFrom, validUntil) = Self.validity(of: chain)
        guard let key = try? PublicKey(certificate: leaf.pointer) else {
            clearOpenSSLErrors()
            return chainFailure("the leaf public key cannot be read")
        }
        return .success(
            VerifiedChain(
                verifiers: PKeyContextPool(key: key, mode: .verify),
                isP256: curveOf(key.pointer) == .p256,
                validFrom: validFrom,
                validUntil: validUntil,
                onlineCheckedAt: onlineChecks ? Int64(Date().timeIntervalSince1970) : nil
            )
        )
    }

    /// The OCSP checks of a verified chain, as Python makes them: the intermediate (issued by the root) first,
    /// then the leaf; nil when both are good.
    private func revocationFailure(
        _ chain: OpaquePointer,
        leaf: OpaquePointer,
        intermediate: OpaquePointer
    ) -> VerificationError? {
        guard let root = ps_sk_X509_value(chain, ps_sk_X509_num(chain) - 1) else {
            return VerificationError(status: .verificationFailure, detail: "the verified chain has no root")
        }
        if let error = OCSPClient.check(intermediate, issuer: root, store: pointer) { return error }
        return OCSPClient.check(leaf, issuer: intermediate, store: pointer)
    }

    /// When every certificate of a verified chain is valid, in Unix seconds.
    private static func validity(of chain: OpaquePointer) -> (from: Int64, until: Int64) {
        var validFrom = Int64.min
        var validUntil = Int64.max
        for index in 0..<ps_sk_X509_num(chain) {
            guard let cert = ps_sk_X509_value(chain, index) else { continue }
            validFrom = max(validFrom, unixSeconds(X509_get0_notBefore(cert)))
            validUntil = min(validUntil, unixSeconds(X509_get0_notAfter(cert)))
        }
        return (validFrom, validUntil)
    }

    private func chainFailure(_ detail: String) -> Result<VerifiedChain, VerificationError> {
        .failure(VerificationError(status: .verificationFailure, detail: detail))
    }
}

/// DER `ECDSA-Sig-Value` of a 64-byte raw `R||S`, byte for byte what `derSignature(fromRaw:)` gets
/// from OpenSSL (minimal non-negative INTEGERs), without its four allocations; nil for another size.
func p256DERSignature(fromRaw raw: [UInt8]) -> [UInt8]? {
    guard raw.count == 64 else { return nil }
    return raw.withUnsafeBufferPointer { bytes in
        // Each half without leading zeros (at least one byte), then a 0x00 if its top bit is set.
        func integer(_ half: Range<Int>) -> (start: Int, pad: Bool) {
            var start = half.lowerBound
            while start < half.upperBound - 1 && bytes[start] == 0 { start += 1 }
            return (start, bytes[start] >= 0x80)
        }
        let r = integer(0..<32)
        let s = integer(32..<64)
        let rLength = 32 - r.start + (r.pad ? 1 : 0)
        let sLength = 64 - s.start + (s.pad ? 1 : 0)
        var der: [UInt8] = []
        der.reserveCapacity(6 + rLength + sLength)
        der.append(contentsOf: [0x30, UInt8(4 + rLength + sLength), 0x02, UInt8(rLength)])
        if r.pad { der.append(0) }
        der.append(contentsOf: bytes[r.start..<32])
        der.append(contentsOf: [0x02, UInt8(sLength)])
        if s.pad { der.append(0) }
        der.append(contentsOf: bytes[s.start..<64])
        return der
    }
}
