/// What the ledger needs from a verifier: each JWS checked and decoded, or a rejection.
protocol PayloadVerifier: Sendable {
    func notification(_ jws: String) -> Result<NotificationFacts, Rejection>
    func transaction(_ jws: String) -> Result<TransactionFacts, Rejection>
    func renewal(_ jws: String) -> Result<RenewalFacts, Rejection>
}

/// The `trust-unverified` flaw: decodes and believes anything shaped like a JWS.
struct TrustingVerifier: PayloadVerifier {
    func notification(_ jws: String) -> Result<NotificationFacts, Rejection> {
        UnverifiedJWS.decode(NotificationFacts.self, jws)
    }

    func transaction(_ jws: String) -> Result<TransactionFacts, Rejection> {
        UnverifiedJWS.decode(TransactionFacts.self, jws)
    }

    func renewal(_ jws: String) -> Result<RenewalFacts, Rejection> {
        UnverifiedJWS.decode(RenewalFacts.self, jws)
    }
}

/// The `ignore-bundle-environment` flaw: keeps the signature and chain checks, but when the only complaint
/// is the app identity or the environment (checked after the signature), takes the payload anyway.
struct IdentityBlindVerifier: PayloadVerifier {
    var base: any PayloadVerifier

    private static let identityReasons: Set<String> = ["INVALID_APP_IDENTIFIER", "INVALID_ENVIRONMENT"]

    private func lenient<T: Decodable>(_ result: Result<T, Rejection>, _ jws: String) -> Result<T, Rejection> {
        if case .failure(let rejection) = result, Self.identityReasons.contains(rejection.reason) {
            return UnverifiedJWS.decode(T.self, jws)
        }
        return result
    }

    func notification(_ jws: String) -> Result<NotificationFacts, Rejection> {
        lenient(base.notification(jws), jws)
    }

    func transaction(_ jws: String) -> Result<TransactionFacts, Rejection> {
        lenient(base.transaction(jws), jws)
    }

    func renewal(_ jws: String) -> Result<RenewalFacts, Rejection> {
        lenient(base.renewal(jws), jws)
    }
}
