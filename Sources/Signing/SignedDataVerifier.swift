public import AppStoreModel
internal import Foundation

/// Why signed data was rejected, named exactly as Python's `VerificationStatus` members.
public struct VerificationStatus: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    /// The Python name, e.g. `VERIFICATION_FAILURE`.
    public var rawValue: String

    /// Creates a status from its Python name.
    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// Bad JWS, `alg`, `x5c`, signature, chain, date or OID; also a payload that does not decode.
    public static let verificationFailure = VerificationStatus(rawValue: "VERIFICATION_FAILURE")
    /// The `bundleId` (or `appAppleId` in Production) is not the configured one.
    public static let invalidAppIdentifier = VerificationStatus(rawValue: "INVALID_APP_IDENTIFIER")
    /// No trusted root, or an `x5c` entry that is not standard base64 of a DER certificate.
    public static let invalidCertificate = VerificationStatus(rawValue: "INVALID_CERTIFICATE")
    /// The `x5c` header does not hold exactly three certificates.
    public static let invalidChainLength = VerificationStatus(rawValue: "INVALID_CHAIN_LENGTH")
    /// Defined by Apple's libraries; Python never raises it.
    public static let invalidChain = VerificationStatus(rawValue: "INVALID_CHAIN")
    /// The payload's environment is not the configured one.
    public static let invalidEnvironment = VerificationStatus(rawValue: "INVALID_ENVIRONMENT")
    /// An online (OCSP) check could not be completed; retrying may succeed.
    public static let retryableVerificationFailure = VerificationStatus(rawValue: "RETRYABLE_VERIFICATION_FAILURE")

    public var description: String { rawValue }
}

/// A rejection: the status Apple's Python library would give, and a human-readable cause.
public struct VerificationError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The status, as Python names it.
    public var status: VerificationStatus
    /// What exactly failed (for logs and witnesses; not part of Apple's contract).
    public var detail: String

    /// Creates a rejection.
    public init(status: VerificationStatus, detail: String) {
        self.status = status
        self.detail = detail
    }

    public var description: String { "\(status.rawValue): \(detail)" }
}

/// A verifier configuration Apple's libraries refuse at construction.
public struct VerifierConfigurationError: Error, Sendable, CustomStringConvertible {
    /// What is wrong with the configuration.
    public var message: String

    public var description: String { message }
}

/// Verifies App Store signed data the way Apple's `SignedDataVerifier` (Python 3.1.2) does
/// (reference §2): `alg` ES256, exactly three `x5c` entries in standard base64, a chain from
/// `x5c[0]` and `x5c[1]` to a configured root under OpenSSL's X.509 strict mode at the payload's
/// `signedDate` (now with online checks, plus OCSP), both Apple OIDs, the ES256 signature with the leaf key,
/// PyJWT's registered-claim checks, then bundle, environment and (Production) app Apple ID.
///
/// Verified chains are cached by the JWS header (which holds the `x5c`), with the chain's
/// validity window, so a steady stream from one signer costs one signature check per JWS.
///
/// ```swift
/// let verifier = try SignedDataVerifier(rootCertificates: [pki.root.der], enableOnlineChecks: false,
///                                       environment: .sandbox, bundleId: "com.example", appAppleId: nil)
/// switch verifier.verifyAndDecodeTransaction(jws) { case .success(let t): ...; case .failure(let e): ... }
/// ```
public struct SignedDataVerifier: Sendable {
    /// The environment payloads must carry.
    public let environment: Environment
    /// The bundle payloads must carry.
    public let bundleId: String
    /// The app Apple ID Production payloads must carry.
    public let appAppleId: Int64?
    /// Whether the chain is checked at the current time and by OCSP.
    public let enableOnlineChecks: Bool
    private let chains: ChainVerifier

    /// Creates a verifier.
    /// - Parameters:
    ///   - rootCertificates: DER of each trusted root (PayStorm's test root).
    ///   - enableOnlineChecks: check validity at the current time instead of `signedDate`, and ask
    ///     the AIA-OCSP responder of the intermediate and the leaf (loopback responders only).
    ///   - environment: the environment payloads must carry.
    ///   - bundleId: the bundle payloads must carry.
    ///   - appAppleId: required for Production.
    /// - Throws: `VerifierConfigurationError` when the environment is Production and `appAppleId` is nil.
    public init(
        rootCertificates: [[UInt8]],
        enableOnlineChecks: Bool,
        environment: Environment,
        bundleId: String,
        appAppleId: Int64?
    ) throws {
        if environment == .production && appAppleId == nil {
            throw VerifierConfigurationError(message: "appAppleId is required when the environment is Production")
        }
        self.environment = environment
        self.bundleId = bundleId
        self.appAppleId = appAppleId
        self.enableOnlineChecks = enableOnlineChecks
        chains = try ChainVerifier(rootCertificates: rootCertificates)
    }

    /// Verifies and decodes a notification's `signedPayload` (nested JWS are NOT verified, as in Apple's libraries).
    public func verifyAndDecodeNotification(
        _ signedPayload: String
    ) -> Result<ResponseBodyV2DecodedPayload, VerificationError> {
        var signedPayload = signedPayload
        return signedPayload.withUTF8 { verifyAndDecodeNotification(utf8: $0) }
    }

    /// Verifies and decodes a notification's `signedPayload` given as its UTF-8 bytes, such as the span of a
    /// webhook body between the quotes (no `String` is made of it); the same checks as the `String` form.
    public func verifyAndDecodeNotification(
        utf8 signedPayload: UnsafeBufferPointer<UInt8>
    ) -> Result<ResponseBodyV2DecodedPayload, VerificationError> {
        decode(utf8: signedPayload, as: ResponseBodyV2DecodedPayload.self).flatMap { payload in
            var bundle: String?
            var appleId: Int64?
            var payloadEnvironment: Environment?
            if let data = payload.data {
                (bundle, appleId, payloadEnvironment) = (data.bundleId, data.appAppleId, data.environment)
            } else if let summary = payload.summary {
                (bundle, appleId, payloadEnvironment) = (summary.bundleId, summary.appAppleId, summary.environment)
            } else if let token = payload.externalPurchaseToken {
                (bundle, appleId) = (token.bundleId, token.appAppleId)
                let sandbox = token.externalPurchaseId?.hasPrefix("SANDBOX") ?? false
                payloadEnvironment = sandbox ? .sandbox : .production
            } else if let app = payload.appData {
                (bundle, appleId, payloadEnvironment) = (app.bundleId, app.appAppleId, app.environment)
            }
            return checkIdentity(bundle: bundle, appAppleId: appleId, environment: payloadEnvironment, checkApp: true)
                .map { payload }
        }
    }

    /// Verifies and decodes a `signedTransactionInfo` (from a notification or a device).
    public func verifyAndDecodeTransaction(_ jws: String) -> Result<JWSTransactionDecodedPayload, VerificationError> {
        decode(jws, as: JWSTransactionDecodedPayload.self).flatMap { transaction in
            checkIdentity(bundle: transaction.bundleId, appAppleId: nil, environment: transaction.environment)
                .map { transaction }
        }
    }

    /// Verifies and decodes a `signedRenewalInfo` (no bundle check: renewal info carries none).
    public func verifyAndDecodeRenewalInfo(_ jws: String) -> Result<JWSRenewalInfoDecodedPayload, VerificationError> {
        decode(jws, as: JWSRenewalInfoDecodedPayload.self).flatMap { renewal in
            guard renewal.environment == environment else {
                return .failure(environmentMismatch(renewal.environment))
            }
            return .success(renewal)
        }
    }

    /// Verifies and decodes a signed `AppTransaction` (its `receiptType` is the environment).
    public func verifyAndDecodeAppTransaction(_ jws: String) -> Result<AppTransaction, VerificationError> {
        decode(jws, as: AppTransaction.self).flatMap { app in
            checkIdentity(
                bundle: app.bundleId,
                appAppleId: app.appAppleId,
                environment: app.receiptType,
                checkApp: true
            )
            .map { app }
        }
    }

    /// Verifies the signature and chain of any JWS and returns its payload bytes (no identity checks).
    public func verifiedPayload(_ jws: String) -> Result<[UInt8], VerificationError> {
        decode(jws, as: RawPayload.self).map { _ in
            let segments = jws.split(separator: ".", omittingEmptySubsequences: false)
            return JWS.base64URLDecode(String(segments[1])) ?? []
        }
    }

    private func decode<T: Decodable>(_ jws: String, as type: T.Type) -> Result<T, VerificationError> {
        var jws = jws
        return jws.withUTF8 { decode(utf8: $0, as: type) }
    }

    private func decode<T: Decodable>(
        utf8 jws: UnsafeBufferPointer<UInt8>,
        as type: T.Type
    ) -> Result<T, VerificationError> {
        let skip = environment == .xcode || environment == .localTesting
        return chains.verify(utf8: jws, as: type, skipSignature: skip, onlineChecks: enableOnlineChecks)
    }

    private func checkIdentity(
        bundle: String?,
        appAppleId payloadAppleId: Int64?,
        environment payloadEnvironment: Environment?,
        checkApp: Bool = false
    ) -> Result<Void, VerificationError> {
        if bundle != bundleId {
            return .failure(
                VerificationError(
                    status: .invalidAppIdentifier,
                    detail: "bundleId \(bundle.map { "'\($0)'" } ?? "absent") is not '\(bundleId)'"
                )
            )
        }
        if checkApp && environment == .production && payloadAppleId != appAppleId {
            return .failure(
                VerificationError(
                    status: .invalidAppIdentifier,
                    detail: "appAppleId \(payloadAppleId.map(String.init) ?? "absent") is not \(appAppleId ?? 0)"
                )
            )
        }
        guard payloadEnvironment == environment else { return .failure(environmentMismatch(payloadEnvironment)) }
        return .success(())
    }

    private func environmentMismatch(_ payloadEnvironment: Environment?) -> VerificationError {
        VerificationError(
            status: .invalidEnvironment,
            detail:
                "environment \(payloadEnvironment.map { "'\($0.rawValue)'" } ?? "absent") is not '\(environment.rawValue)'"
        )
    }
}
