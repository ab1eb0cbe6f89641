internal import AppStoreModel

/// What the ledger needs from a verifier: each JWS checked and decoded, or a rejection.
protocol PayloadVerifier: Sendable {
    func notification(_ jws: String) -> Result<ResponseBodyV2DecodedPayload, Rejection>
    /// The same over the JWS's UTF-8 bytes (the span of a plain webhook body), so a delivery makes no `String`
    /// of its 10 KB payload.
    func notification(utf8 jws: UnsafeBufferPointer<UInt8>) -> Result<ResponseBodyV2DecodedPayload, Rejection>
    func transaction(_ jws: String) -> Result<JWSTransactionDecodedPayload, Rejection>
    func renewal(_ jws: String) -> Result<JWSRenewalInfoDecodedPayload, Rejection>
}

extension PayloadVerifier {
    func notification(utf8 jws: UnsafeBufferPointer<UInt8>) -> Result<ResponseBodyV2DecodedPayload, Rejection> {
        notification(String(decoding: jws, as: UTF8.self))
    }
}

/// The `trust-unverified` flaw: decodes and believes anything shaped like a JWS.
struct TrustingVerifier: PayloadVerifier {
    func notification(_ jws: String) -> Result<ResponseBodyV2DecodedPayload, Rejection> {
        UnverifiedJWS.decode(ResponseBodyV2DecodedPayload.self, jws)
    }

    func transaction(_ jws: String) -> Result<JWSTransactionDecodedPayload, Rejection> {
        UnverifiedJWS.decode(JWSTransactionDecodedPayload.self, jws)
    }

    func renewal(_ jws: String) -> Result<JWSRenewalInfoDecodedPayload, Rejection> {
        UnverifiedJWS.decode(JWSRenewalInfoDecodedPayload.self, jws)
    }
}

/// The `ignore-bundle-environment` flaw: keeps the signature and chain checks, but when the only complaint
/// is the app identity or the environment (checked after the signature), takes the payload anyway.
struct IdentityBlindVerifier: PayloadVerifier {
    var base: any PayloadVerifier

    private static let identityReasons: Set<String> = ["INVALID_APP_IDENTIFIER", "INVALID_ENVIRONMENT"]

    private func lenient<T: AppStoreJSONReadable>(_ result: Result<T, Rejection>, _ jws: String) -> Result<T, Rejection>
    {
        if case .failure(let rejection) = result, Self.identityReasons.contains(rejection.reason) {
            return UnverifiedJWS.decode(T.self, jws)
        }
        return result
    }

    func notification(_ jws: String) -> Result<ResponseBodyV2DecodedPayload, Rejection> {
        lenient(base.notification(jws), jws)
    }

    func transaction(_ jws: String) -> Result<JWSTransactionDecodedPayload, Rejection> {
        lenient(base.transaction(jws), jws)
    }

    func renewal(_ jws: String) -> Result<JWSRenewalInfoDecodedPayload, Rejection> {
        lenient(base.renewal(jws), jws)
    }
}
