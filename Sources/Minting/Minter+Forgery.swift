internal import AppStoreModel
internal import Foundation
internal import Signing

/// Forgery mechanics: which forgery applies to which object, the payload a forgery rewrites, and the
/// signature or chain it forges.
extension Minter {
    static func toSeconds(_ milliseconds: Int64) -> Int64 { milliseconds / 1000 }

    static func checkProductType(_ type: ProductType, for kind: NotificationKind) throws {
        switch kind.content {
        case .subscription where type != .autoRenewableSubscription:
            throw MintError("\(kind) describes an auto-renewable subscription, not a product of type '\(type)'")
        case .oneTimeTransaction where type == .autoRenewableSubscription:
            throw MintError("\(kind) never describes an auto-renewable subscription")
        default:
            break
        }
    }

    func checkApplicable(_ forgery: Forgery?, to object: SignedObjectKind) throws {
        guard let forgery else { return }
        guard forgery.isKnown else {
            throw MintError(
                "unknown forgery '\(forgery)'; known: \(Forgery.allCases.map(\.rawValue).joined(separator: ", "))"
            )
        }
        if forgery == .forgedInnerTransaction && object != .notification {
            throw MintError("forgery '\(forgery)' applies only to notifications that carry a transaction")
        }
    }

    /// The minter and signing date a payload forgery implies.
    func forgedContext(_ forgery: Forgery?, signedDate: Int64) -> (minter: Minter, signedDate: Int64) {
        var minter = self
        minter.app = forgedApp(forgery)
        return (minter, forgedDate(forgery, signedDate: signedDate))
    }

    /// The app a payload forgery writes (`wrong-bundle`, `wrong-environment`), else the minter's own.
    func forgedApp(_ forgery: Forgery?) -> AppIdentity {
        var forged = app
        switch forgery {
        case .wrongBundle?: forged.bundleId = app.bundleId + ".forged"
        case .wrongEnvironment?: forged.environment = app.environment == .production ? .sandbox : .production
        default: break
        }
        return forged
    }

    /// The signing date a payload forgery writes (`signed-date-before-chain`), else `signedDate`.
    func forgedDate(_ forgery: Forgery?, signedDate: Int64) -> Int64 {
        guard forgery == .signedDateBeforeChain else { return signedDate }
        let start = [pki.root, pki.intermediate, pki.leaf].map(\.notBefore).min() ?? Date()
        return Int64(start.timeIntervalSince1970 * 1000) - Self.dayMilliseconds
    }

    /// Signs a payload the way a forgery says: with a foreign key, a wrong header or chain, another PKI,
    /// or genuinely and then tampered with.
    func signForged<Payload: AppStoreJSONWritable>(
        _ payload: Payload,
        forgery: Forgery?,
        tamper: (inout Payload) -> Void
    ) throws -> String {
        let bytes = AppStoreJSON.encode(payload)
        let chain = [pki.leaf, pki.intermediate, pki.root]
        switch forgery {
        case .badSignature?:
            return try JWS.sign(
                payload: bytes,
                header: JWSHeader(alg: "ES256", x5c: JWS.x5c(chain)),
                key: forgeries.foreignKey()
            )
        case .algES384?:
            return try JWS.sign(payload: bytes, header: JWSHeader(alg: "ES384", x5c: JWS.x5c(chain)), key: pki.leafKey)
        case .algNone?:
            let header = Array(try encoder.encode(JWSHeader(alg: "none", x5c: JWS.x5c(chain))))
            return JWS.base64URL(header) + "." + JWS.base64URL(bytes) + "."
        case .chain2?:
            return try JWS.sign(
                payload: bytes,
                header: JWSHeader(alg: "ES256", x5c: JWS.x5c(Array(chain.prefix(2)))),
                key: pki.leafKey
            )
        case .chain4?:
            return try JWS.sign(
                payload: bytes,
                header: JWSHeader(alg: "ES256", x5c: JWS.x5c(chain + [pki.root])),
                key: pki.leafKey
            )
        case .base64URLX5C?:
            let x5c = chain.map { JWS.base64URL($0.der) }
            return try JWS.sign(payload: bytes, header: JWSHeader(alg: "ES256", x5c: x5c), key: pki.leafKey)
        case .missingLeafOID?, .missingIntermediateOID?, .criticalOIDs?, .untrustedRoot?:
            return try ES256Signer(pki: try forgeries.pki(for: forgery!)).sign(payload: bytes)
        case .tamperedPayload?:
            let genuine = try signer.sign(payload: bytes)
            var tampered = payload
            tamper(&tampered)
            let parts = genuine.split(separator: ".", omittingEmptySubsequences: false)
            let body = JWS.base64URL(AppStoreJSON.encode(tampered))
            return "\(parts[0]).\(body).\(parts[2])"
        default:
            return try signer.sign(payload: bytes)
        }
    }
}
