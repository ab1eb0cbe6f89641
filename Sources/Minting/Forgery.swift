internal import Foundation
internal import Signing
internal import Synchronization

/// The kind of signed object a verifier is asked to check; the raw values are `paystorm verify --kind`'s.
public enum SignedObjectKind: String, Sendable, Hashable, CaseIterable {
    /// A notification `signedPayload`.
    case notification
    /// A signed transaction.
    case transaction
    /// A signed renewal info.
    case renewalInfo = "renewal-info"
    /// A signed app transaction.
    case appTransaction = "app-transaction"
}

/// A forged variant of signed data that a correct backend must reject, named as `paystorm mint --forge`
/// spells it. An open set: new names can be added without breaking callers.
///
/// `expectedStatus(for:)` gives the verdict of Apple's `SignedDataVerifier` (Python 3.1.2, strict X.509,
/// online checks off, configured with the minted environment and bundle), from reference §2 and §8.
public struct Forgery: RawRepresentable, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// The name, as `--forge` takes it.
    public var rawValue: String

    /// Creates a forgery from its name; unknown names are kept (`isKnown` is `false`) and rejected when minting.
    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// Signed with a foreign P-256 key while claiming the genuine chain.
    public static let badSignature = Forgery(rawValue: "bad-signature")
    /// Header `alg` is `ES384` (signed with ES256 all the same).
    public static let algES384 = Forgery(rawValue: "alg-es384")
    /// Header `alg` is `none` and the signature is empty.
    public static let algNone = Forgery(rawValue: "alg-none")
    /// `x5c` holds only the leaf and the intermediate.
    public static let chain2 = Forgery(rawValue: "chain-2")
    /// `x5c` holds four certificates (the root twice).
    public static let chain4 = Forgery(rawValue: "chain-4")
    /// `x5c` entries are base64url without padding instead of standard base64.
    public static let base64URLX5C = Forgery(rawValue: "base64url-x5c")
    /// Signed by a leaf that lacks Apple's receipt-signing OID (same root).
    public static let missingLeafOID = Forgery(rawValue: "missing-leaf-oid")
    /// Signed through an intermediate that lacks Apple's WWDR OID (same root).
    public static let missingIntermediateOID = Forgery(rawValue: "missing-intermediate-oid")
    /// Signed through a chain whose Apple OIDs are marked critical (same root).
    public static let criticalOIDs = Forgery(rawValue: "critical-oids")
    /// Signed by a complete, well-formed chain under a different root.
    public static let untrustedRoot = Forgery(rawValue: "untrusted-root")
    /// Genuinely signed, but for another bundle ID.
    public static let wrongBundle = Forgery(rawValue: "wrong-bundle")
    /// Genuinely signed, but for the other environment (Sandbox and Production swapped).
    public static let wrongEnvironment = Forgery(rawValue: "wrong-environment")
    /// Genuinely signed with a `signedDate` a day before the chain became valid.
    public static let signedDateBeforeChain = Forgery(rawValue: "signed-date-before-chain")
    /// Genuinely signed with every date in seconds instead of milliseconds (January 1970).
    public static let datesInSeconds = Forgery(rawValue: "dates-in-seconds")
    /// Genuinely signed, then the payload changed (the signature no longer matches).
    public static let tamperedPayload = Forgery(rawValue: "tampered-payload")
    /// A genuine notification whose nested transaction is signed under a different root; only a backend
    /// that verifies the nested JWS catches it.
    public static let forgedInnerTransaction = Forgery(rawValue: "forged-inner-transaction")

    /// Every forgery PayStorm knows, in the order of the issue.
    public static let allCases: [Forgery] = [
        .badSignature, .algES384, .algNone, .chain2, .chain4, .base64URLX5C, .missingLeafOID,
        .missingIntermediateOID, .criticalOIDs, .untrustedRoot, .wrongBundle, .wrongEnvironment,
        .signedDateBeforeChain, .datesInSeconds, .tamperedPayload, .forgedInnerTransaction,
    ]

    /// Whether PayStorm knows how to mint this forgery.
    public var isKnown: Bool { Self.allCases.contains(self) }

    public var description: String { rawValue }

    /// The status Apple's verifier answers for an object minted with this forgery: a
    /// `VerificationStatus` name, or `"OK"` when it accepts it.
    ///
    /// A renewal info carries no `bundleId`, so `wrong-bundle` passes its check; the outer payload of a
    /// `forged-inner-transaction` is genuine (see `expectedInnerTransactionStatus`).
    /// - Parameter object: the kind of object the forgery was minted into.
    /// - Returns: the status name.
    public func expectedStatus(for object: SignedObjectKind) -> String {
        switch self {
        case .chain2, .chain4: return "INVALID_CHAIN_LENGTH"
        case .base64URLX5C: return "INVALID_CERTIFICATE"
        case .wrongBundle: return object == .renewalInfo ? "OK" : "INVALID_APP_IDENTIFIER"
        case .wrongEnvironment: return "INVALID_ENVIRONMENT"
        case .forgedInnerTransaction: return "OK"
        default: return "VERIFICATION_FAILURE"
        }
    }

    /// The status Apple's verifier answers for the nested `signedTransactionInfo` of a notification minted
    /// with this forgery.
    public var expectedInnerTransactionStatus: String {
        switch self {
        case .forgedInnerTransaction, .signedDateBeforeChain, .datesInSeconds: return "VERIFICATION_FAILURE"
        case .wrongBundle: return "INVALID_APP_IDENTIFIER"
        case .wrongEnvironment: return "INVALID_ENVIRONMENT"
        default: return "OK"
        }
    }

    /// What the forgery does, for help texts.
    public var summary: String {
        switch self {
        case .badSignature: return "signed with a foreign key while claiming the genuine chain"
        case .algES384: return "header alg ES384"
        case .algNone: return "header alg none, empty signature"
        case .chain2: return "x5c with two certificates"
        case .chain4: return "x5c with four certificates"
        case .base64URLX5C: return "x5c entries in base64url instead of base64"
        case .missingLeafOID: return "leaf without Apple's receipt-signing OID"
        case .missingIntermediateOID: return "intermediate without Apple's WWDR OID"
        case .criticalOIDs: return "Apple OIDs marked critical"
        case .untrustedRoot: return "a well-formed chain under another root"
        case .wrongBundle: return "another bundle ID"
        case .wrongEnvironment: return "Sandbox and Production swapped"
        case .signedDateBeforeChain: return "signedDate before the chain's validity"
        case .datesInSeconds: return "dates in seconds instead of milliseconds"
        case .tamperedPayload: return "payload changed after signing"
        case .forgedInnerTransaction: return "genuine notification, nested transaction under another root"
        default: return "unknown"
        }
    }
}

/// The keys and chains forgeries sign with, made once per minter on first use: generating EC keys and
/// certificates costs milliseconds, which matters when chaos forges at load.
final class ForgeryMaterial: Sendable {
    private let pki: TestPKI
    private let cache = Mutex<[Forgery: TestPKI]>([:])
    private let foreign = Mutex<SigningKey?>(nil)

    init(pki: TestPKI) {
        self.pki = pki
    }

    /// A P-256 key no certificate vouches for.
    func foreignKey() throws -> SigningKey {
        if let key = foreign.withLock({ $0 }) { return key }
        let key = try SigningKey.generate(.p256)
        foreign.withLock { $0 = key }
        return key
    }

    /// The chain a chain forgery signs with: a variant under the same root (missing or critical OIDs, an
    /// expired validity for `signed-date-before-chain`), or a whole other PKI.
    func pki(for forgery: Forgery) throws -> TestPKI {
        let key = forgery == .forgedInnerTransaction ? Forgery.untrustedRoot : forgery
        if let made = cache.withLock({ $0[key] }) { return made }
        // Same validity as the genuine chain, so only the forged property differs.
        var options = PKIOptions(notBefore: pki.leaf.notBefore, notAfter: pki.leaf.notAfter)
        let made: TestPKI
        switch key {
        case .missingLeafOID:
            options.leafAppleOID = false
            made = try pki.variant(options)
        case .missingIntermediateOID:
            options.intermediateAppleOID = false
            made = try pki.variant(options)
        case .criticalOIDs:
            options.appleOIDsCritical = true
            made = try pki.variant(options)
        case .signedDateBeforeChain:
            // A signer that expired before the genuine chain began (a receipt's expired signer).
            options.notBefore = pki.leaf.notBefore.addingTimeInterval(-2 * 86_400)
            options.notAfter = pki.leaf.notBefore.addingTimeInterval(-86_400)
            made = try pki.variant(options)
        default:
            made = try TestPKI.generate(options)
        }
        cache.withLock { $0[key] = made }
        return made
    }
}
