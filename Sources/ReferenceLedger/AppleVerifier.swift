internal import AppStoreModel
internal import Signing

/// The real check: Signing's `SignedDataVerifier` (Apple's rules: ES256, a 3-certificate chain to a trusted root
/// with Apple's marker OIDs, then bundle ID and environment), decoding into AppStoreModel's payloads.
struct AppleVerifier: PayloadVerifier {
    let verifier: SignedDataVerifier

    init(_ configuration: LedgerConfiguration) throws {
        // The chain check would reject every payload against a root that does not parse (422 for all).
        for (index, root) in configuration.trustedRoots.enumerated() where (try? Certificate(der: root)) == nil {
            throw LedgerError(message: "trusted root \(index + 1) is not an X.509 certificate")
        }
        do {
            verifier = try SignedDataVerifier(
                rootCertificates: configuration.trustedRoots,
                enableOnlineChecks: false,
                environment: configuration.environment,
                bundleId: configuration.bundleId,
                appAppleId: configuration.appAppleId
            )
        } catch {
            throw LedgerError(message: "cannot build the verifier: \(error)")
        }
    }

    private static func rejection(_ error: VerificationError) -> Rejection {
        Rejection(
            reason: error.status.rawValue,
            detail: error.detail,
            retryable: error.status == .retryableVerificationFailure
        )
    }

    // The verifier's payloads are the ledger's: nothing is copied out of them.
    func notification(_ jws: String) -> Result<ResponseBodyV2DecodedPayload, Rejection> {
        verifier.verifyAndDecodeNotification(jws).mapError(Self.rejection)
    }

    func notification(utf8 jws: UnsafeBufferPointer<UInt8>) -> Result<ResponseBodyV2DecodedPayload, Rejection> {
        verifier.verifyAndDecodeNotification(utf8: jws).mapError(Self.rejection)
    }

    func transaction(_ jws: String) -> Result<JWSTransactionDecodedPayload, Rejection> {
        verifier.verifyAndDecodeTransaction(jws).mapError(Self.rejection)
    }

    func renewal(_ jws: String) -> Result<JWSRenewalInfoDecodedPayload, Rejection> {
        verifier.verifyAndDecodeRenewalInfo(jws).mapError(Self.rejection)
    }
}

/// Builds the verifier the configuration asks for.
func makeVerifier(_ configuration: LedgerConfiguration) throws -> any PayloadVerifier {
    // The verifier that believes anything needs no trust root.
    if LedgerPolicy(flaws: configuration.flaws).verification == .none { return TrustingVerifier() }
    return try AppleVerifier(configuration)
}
