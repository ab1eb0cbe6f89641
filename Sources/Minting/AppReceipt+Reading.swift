public import AppStoreModel
internal import Foundation
public import Signing

/// What a signed app receipt says, read back the way Apple's `verifyReceipt` reads the receipt a backend sends.
public struct ReadAppReceipt: Sendable, Hashable {
    /// The app: bundle ID (2), app ID (1), version (3) and environment (from the receipt type, 0).
    public var app: AppIdentity
    /// The in-app purchases (17), in the receipt's order; `type` is not in a receipt and stays absent.
    public var inApp: [JWSTransactionDecodedPayload]
    /// The creation date (12), UNIX ms.
    public var creationDate: Int64?
    /// The original app version (19).
    public var originalApplicationVersion: String?
    /// The expiration date (21), UNIX ms.
    public var expirationDate: Int64?
}

/// Why a receipt could not be read: Apple's `verifyReceipt` answers 21002 or 21003.
public struct AppReceiptError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The class of failure.
    public enum Kind: Sendable, Hashable {
        /// Not base64, not PKCS#7, or not a receipt inside (21002).
        case malformed
        /// PKCS#7, but its signature or chain does not verify under the trusted root (21003).
        case unauthenticated
    }

    /// The check that refused the receipt, in the order they run.
    public enum Check: Sendable, Hashable {
        /// Not base64, not PKCS#7 SignedData, or not a receipt's attributes inside.
        case encoding
        /// Not exactly three certificates attached (the signer, its intermediate and the root).
        case chainLength
        /// The signer lacks Apple's receipt-signing OID (1.2.840.113635.100.6.11.1).
        case signerOID
        /// The signer's intermediate lacks Apple's WWDR OID (1.2.840.113635.100.6.2.1).
        case intermediateOID
        /// An Apple OID marked critical.
        case criticalOID
        /// The signer or its intermediate not valid now.
        case validity
        /// The signer does not chain to the trusted root.
        case chain
        /// The signature does not match the content.
        case signature
    }

    /// The check that refused the receipt.
    public var check: Check
    /// What was wrong, in one line.
    public var description: String

    /// The class of failure: `encoding` is malformed, every other check unauthenticated.
    public var kind: Kind { check == .encoding ? .malformed : .unauthenticated }

    init(_ check: Check, _ description: String) {
        self.check = check
        self.description = description
    }
}

extension AppReceipt {
    /// Reads a base64 app receipt, as a backend sends it, after checking its signature and chain under `root`.
    /// - Throws: `AppReceiptError`.
    public static func read(base64: String, trusting root: Certificate) throws -> ReadAppReceipt {
        guard let data = Data(base64Encoded: base64, options: .ignoreUnknownCharacters), !data.isEmpty else {
            throw AppReceiptError(.encoding, "the receipt is not base64")
        }
        return try read(Array(data), trusting: root)
    }

    /// Reads DER PKCS#7 app receipt bytes after checking them as `verifyReceipt` does (`AppReceiptError.Check`,
    /// in order): the signer, its intermediate and `root` attached, Apple's OIDs on the first two (not
    /// critical), both valid now, the chain up to `root`, the signature over the content, and the content a
    /// receipt's attributes.
    /// - Throws: `AppReceiptError`.
    public static func read(_ der: [UInt8], trusting root: Certificate) throws -> ReadAppReceipt {
        let content = try authenticatedContent(der, trusting: root)
        guard let set = DER.elements(content), set.count == 1, let fields = attributes(of: set[0]) else {
            throw AppReceiptError(.encoding, "the signed content is not a receipt's attributes")
        }
        var receipt = ReadAppReceipt(app: AppIdentity(bundleId: "", appAppleId: nil, bundleVersion: ""), inApp: [])
        for (type, value) in fields {
            switch type {
            case 0: receipt.app.environment = value.string.map(environment) ?? receipt.app.environment
            case 1: receipt.app.appAppleId = value.integer
            case 2: receipt.app.bundleId = value.string ?? ""
            case 3: receipt.app.bundleVersion = value.string ?? ""
            case 12: receipt.creationDate = value.string.flatMap(milliseconds)
            case 17: receipt.inApp.append(try inAppPurchase(value))
            case 19: receipt.originalApplicationVersion = value.string
            case 21: receipt.expirationDate = value.string.flatMap(milliseconds)
            default: break
            }
        }
        return receipt
    }

    /// The signed content of a receipt that passes every check before its attributes are read.
    private static func authenticatedContent(_ der: [UInt8], trusting root: Certificate) throws -> [UInt8] {
        let certificates: (attached: [Certificate], signer: Certificate?)
        do {
            certificates = try PKCS7SignedData.certificates(der)
        } catch {
            throw AppReceiptError(.encoding, "the receipt is not PKCS#7 SignedData")
        }
        try checkSigner(attached: certificates.attached, signer: certificates.signer)
        guard PKCS7SignedData.signerChainVerifies(der, trusting: root) else {
            throw AppReceiptError(.chain, "the receipt's signer does not chain to the trusted root")
        }
        do {
            return try PKCS7SignedData.verifiedContent(der, trusting: root)
        } catch {
            throw AppReceiptError(.signature, "the receipt's signature does not match its content")
        }
    }

    /// The checks on the attached certificates: their count, Apple's OIDs, their validity now.
    private static func checkSigner(attached: [Certificate], signer: Certificate?) throws {
        guard attached.count == 3 else {
            throw AppReceiptError(
                .chainLength,
                "the receipt carries \(attached.count) certificates, not its signer, intermediate and root (3)"
            )
        }
        guard let signer else { throw AppReceiptError(.signature, "no attached certificate signed the receipt") }
        guard let intermediate = attached.first(where: { $0.der != signer.der && signer.isSigned(by: $0) }) else {
            throw AppReceiptError(.chain, "the receipt carries no issuer of its signer")
        }
        let marked = [
            (signer, AppleOID.leaf, "signer", "receipt-signing", AppReceiptError.Check.signerOID),
            (intermediate, AppleOID.intermediate, "intermediate", "WWDR", .intermediateOID),
        ]
        for (certificate, oid, role, name, check) in marked {
            switch certificate.extensionCriticality(oid: oid) {
            case nil: throw AppReceiptError(check, "the receipt's \(role) lacks Apple's \(name) OID \(oid)")
            case true?: throw AppReceiptError(.criticalOID, "the receipt's \(role) marks Apple's OID \(oid) critical")
            case false?: break
            }
        }
        let now = Date()
        for (certificate, role) in [(signer, "signer"), (intermediate, "intermediate")]
        where now < certificate.notBefore || now > certificate.notAfter {
            throw AppReceiptError(
                .validity,
                "the receipt's \(role) is valid from \(certificate.notBefore) to \(certificate.notAfter), not now"
            )
        }
    }

    /// The environment a receipt type names.
    static func environment(_ receiptType: String) -> Environment {
        switch receiptType {
        case "Production": return .production
        case "ProductionSandbox": return .sandbox
        default: return Environment(rawValue: receiptType)
        }
    }

    /// An RFC 3339 receipt date in UNIX ms; nil for an empty or unreadable one.
    static func milliseconds(_ text: String) -> Int64? {
        guard !text.isEmpty, let date = try? Date(text, strategy: .iso8601) else { return nil }
        return Int64(date.timeIntervalSince1970 * 1000)
    }

    /// A SET of `(type, version, value)` attributes: each type with its value's one element, or the raw
    /// value as an OCTET STRING element when it is not one DER element (the opaque value, the hash).
    private static func attributes(of set: DER.Element) -> [(Int64, DER.Element)]? {
        guard set.tag == DER.Tag.set.rawValue, let members = set.children else { return nil }
        var fields: [(Int64, DER.Element)] = []
        for member in members {
            guard let parts = member.children, parts.count == 3, let type = parts[0].integer,
                parts[2].tag == DER.Tag.octetString.rawValue
            else { return nil }
            let value = DER.elements(parts[2].content).flatMap { $0.count == 1 ? $0[0] : nil }
            fields.append((type, value ?? parts[2]))
        }
        return fields
    }

    private static func inAppPurchase(_ value: DER.Element) throws -> JWSTransactionDecodedPayload {
        guard let fields = attributes(of: value) else {
            throw AppReceiptError(.encoding, "an in-app attribute (17) is not a SET")
        }
        var transaction = JWSTransactionDecodedPayload()
        for (type, element) in fields {
            let text = element.string.flatMap { $0.isEmpty ? nil : $0 }
            switch type {
            case 1701: transaction.quantity = element.integer.map { Int32(clamping: $0) }
            case 1702: transaction.productId = text
            case 1703: transaction.transactionId = text
            case 1704: transaction.purchaseDate = text.flatMap(milliseconds)
            case 1705: transaction.originalTransactionId = text
            case 1706: transaction.originalPurchaseDate = text.flatMap(milliseconds)
            case 1708: transaction.expiresDate = text.flatMap(milliseconds)
            case 1711: transaction.webOrderLineItemId = element.integer.flatMap { $0 == 0 ? nil : String($0) }
            case 1712: transaction.revocationDate = text.flatMap(milliseconds)
            case 1713: if element.integer == 1 { transaction.offerDiscountType = .freeTrial }
            case 1719: if element.integer == 1 { transaction.offerType = .introductoryOffer }
            case 1721:
                transaction.offerIdentifier = text
                transaction.offerType = .promotionalOffer
            default: break
            }
        }
        return transaction
    }
}
