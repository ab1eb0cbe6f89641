public import AppStoreModel
internal import Foundation
internal import Profile
internal import Signing

/// What a forgery does to an app receipt: the checks a backend that reads receipts itself needs, as the JWS
/// forgeries are the checks of one that verifies signed data.
enum ReceiptForgery: Sendable {
    /// Genuinely signed for another app (`wrong-bundle`, `wrong-environment`): only the backend's own check
    /// of the bundle and the environment refuses it.
    case otherApp
    /// Signed by a well-formed chain under another root.
    case otherRoot
    /// Genuinely signed, then the signature's last byte changed.
    case badSignature
    /// Only the signer's certificate attached.
    case leafOnly
    /// Four certificates attached, the root twice.
    case extraRoot
    /// Signed by a leaf without Apple's receipt-signing OID, under the same root.
    case signerWithoutOID
    /// Signed through an intermediate without Apple's WWDR OID, under the same root.
    case intermediateWithoutOID
    /// Signed through a chain whose Apple OIDs are critical, under the same root.
    case criticalOIDs
    /// Signed by a chain that expired before the genuine chain's validity began, under the same root.
    case expiredSigner
    /// Genuinely signed, then the content changed (the signature no longer matches).
    case tampered
}

extension Forgery {
    /// The form this forgery takes in an app receipt.
    var receiptForgery: ReceiptForgery {
        switch self {
        case .wrongBundle, .wrongEnvironment: return .otherApp
        case .badSignature, .algES384, .algNone: return .badSignature
        case .chain2: return .leafOnly
        case .chain4: return .extraRoot
        case .missingLeafOID: return .signerWithoutOID
        case .missingIntermediateOID: return .intermediateWithoutOID
        case .criticalOIDs: return .criticalOIDs
        case .signedDateBeforeChain, .datesInSeconds: return .expiredSigner
        case .tamperedPayload: return .tampered
        default: return .otherRoot
        }
    }

    /// What this forgery does to an app receipt and what `verifyReceipt` answers, for help texts.
    public var receiptSummary: String {
        switch receiptForgery {
        case .otherApp where self == .wrongBundle: return "genuinely signed for another bundle ID (status 0)"
        case .otherApp: return "genuinely signed for the other environment (21007 or 21008, then 0)"
        case .otherRoot: return "signed by a well-formed chain under another root (21003)"
        case .badSignature: return "signature bytes changed after signing (21003)"
        case .leafOnly: return "only the signer's certificate attached (21003)"
        case .extraRoot: return "four certificates attached, the root twice (21003)"
        case .signerWithoutOID: return "signer without Apple's receipt-signing OID (21003)"
        case .intermediateWithoutOID: return "intermediate without Apple's WWDR OID (21003)"
        case .criticalOIDs: return "Apple OIDs marked critical (21003)"
        case .expiredSigner: return "signed by an expired certificate (21003)"
        case .tampered: return "purchases' quantity x10 after signing (21003)"
        }
    }
}

extension Minter {
    /// An app receipt as a forged device request carries it, listing `inApp` (the forged purchase among them):
    /// genuinely signed for another bundle or environment (`wrong-bundle`, `wrong-environment`), else refused by
    /// `verifyReceipt` (21003) for the check the forgery names: signed under another root, a changed signature
    /// (`bad-signature`, `alg-es384`, `alg-none`), the signer's certificate alone (`chain-2`) or the root twice
    /// (`chain-4`), a signer or intermediate without Apple's OID, Apple's OIDs critical, an expired signer
    /// (`signed-date-before-chain`, `dates-in-seconds`), or the content changed after signing
    /// (`tampered-payload`: every purchase's quantity ten times, the creation date a second later). Without a
    /// forgery, the genuine receipt.
    /// - Parameters:
    ///   - inApp: the purchases the receipt lists.
    ///   - creationDate: when the receipt was created, UNIX ms.
    ///   - forgery: the forgery.
    /// - Throws: `MintError` for an unknown forgery; `SigningError` when OpenSSL fails.
    public func appReceipt(
        _ inApp: [JWSTransactionDecodedPayload],
        creationDate: Int64,
        forgery: Forgery?
    ) throws -> String {
        guard let forgery else { return try appReceipt(inApp, creationDate: creationDate) }
        guard forgery.isKnown else { throw MintError("unknown forgery '\(forgery)'") }
        let receipt = AppReceipt(app: forgedApp(forgery), inApp: inApp, creationDate: creationDate)
        return Data(try forgedReceipt(receipt, forgery.receiptForgery)).base64EncodedString()
    }

    /// The receipt signed the way `form` forges it.
    private func forgedReceipt(_ receipt: AppReceipt, _ form: ReceiptForgery) throws -> [UInt8] {
        switch form {
        case .otherApp: return try receipt.signed(by: pki)
        case .otherRoot: return try receipt.signed(by: try forgeries.pki(for: .untrustedRoot))
        case .badSignature:
            var signed = try receipt.signed(by: pki)
            // The encrypted digest ends the SignerInfo, which ends the DER: its last byte is the signature's.
            signed[signed.count - 1] ^= 0x01
            return signed
        case .leafOnly: return try PKCS7SignedData.sign(receipt.attributes(), with: pki, attaching: [])
        case .extraRoot:
            let attached = [pki.intermediate, pki.root, pki.root]
            return try PKCS7SignedData.sign(receipt.attributes(), with: pki, attaching: attached)
        case .signerWithoutOID: return try receipt.signed(by: try forgeries.pki(for: .missingLeafOID))
        case .intermediateWithoutOID: return try receipt.signed(by: try forgeries.pki(for: .missingIntermediateOID))
        case .criticalOIDs: return try receipt.signed(by: try forgeries.pki(for: .criticalOIDs))
        case .expiredSigner: return try receipt.signed(by: try forgeries.pki(for: .signedDateBeforeChain))
        case .tampered:
            var changed = receipt
            changed.creationDate += 1000
            for index in changed.inApp.indices {
                let quantity = changed.inApp[index].quantity ?? 1
                changed.inApp[index].quantity = quantity * Int32(Faults.tamperedQuantityFactor)
            }
            let signed = try receipt.signed(by: pki)
            guard let tampered = PKCS7SignedData.replacingContent(of: signed, with: changed.attributes()) else {
                throw MintError("cannot tamper with the signed receipt")
            }
            return tampered
        }
    }
}
