internal import AppStoreModel
internal import Signing

/// The real check: Signing's `SignedDataVerifier` (Apple's rules: ES256, a 3-certificate chain to a trusted root
/// with Apple's marker OIDs, then bundle ID and environment), mapped onto the facts the ledger acts on.
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
                environment: Environment(rawValue: configuration.environment),
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

    func notification(_ jws: String) -> Result<NotificationFacts, Rejection> {
        verifier.verifyAndDecodeNotification(jws).mapError(Self.rejection).map { payload in
            NotificationFacts(
                notificationType: payload.notificationType?.rawValue,
                subtype: payload.subtype?.rawValue,
                notificationUUID: payload.notificationUUID,
                signedDate: payload.signedDate,
                data: payload.data.map { data in
                    NotificationFacts.Data(
                        bundleId: data.bundleId,
                        environment: data.environment?.rawValue,
                        signedTransactionInfo: data.signedTransactionInfo,
                        signedRenewalInfo: data.signedRenewalInfo,
                        status: data.status.map { Int32(truncatingIfNeeded: $0.rawValue) }
                    )
                }
            )
        }
    }

    func transaction(_ jws: String) -> Result<TransactionFacts, Rejection> {
        verifier.verifyAndDecodeTransaction(jws).mapError(Self.rejection).map { payload in
            TransactionFacts(
                transactionId: payload.transactionId,
                originalTransactionId: payload.originalTransactionId,
                bundleId: payload.bundleId,
                environment: payload.environment?.rawValue,
                productId: payload.productId,
                type: payload.type?.rawValue,
                appAccountToken: payload.appAccountToken,
                purchaseDate: payload.purchaseDate,
                expiresDate: payload.expiresDate,
                quantity: payload.quantity,
                revocationDate: payload.revocationDate,
                revocationType: payload.revocationType?.rawValue,
                isUpgraded: payload.isUpgraded,
                signedDate: payload.signedDate
            )
        }
    }

    func renewal(_ jws: String) -> Result<RenewalFacts, Rejection> {
        verifier.verifyAndDecodeRenewalInfo(jws).mapError(Self.rejection).map { payload in
            RenewalFacts(
                originalTransactionId: payload.originalTransactionId,
                environment: payload.environment?.rawValue,
                autoRenewStatus: payload.autoRenewStatus.map { Int32(truncatingIfNeeded: $0.rawValue) },
                gracePeriodExpiresDate: payload.gracePeriodExpiresDate,
                isInBillingRetryPeriod: payload.isInBillingRetryPeriod,
                signedDate: payload.signedDate
            )
        }
    }
}

/// Builds the verifier the configuration asks for.
func makeVerifier(_ configuration: LedgerConfiguration) throws -> any PayloadVerifier {
    // The verifier that believes anything needs no trust root.
    if LedgerPolicy(flaws: configuration.flaws).verification == .none { return TrustingVerifier() }
    return try AppleVerifier(configuration)
}
