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

    /// The class of failure.
    public var kind: Kind
    /// What was wrong, in one line.
    public var description: String
}

extension AppReceipt {
    /// Reads a base64 app receipt, as a backend sends it, after checking its signature and chain under `root`.
    /// - Throws: `AppReceiptError`.
    public static func read(base64: String, trusting root: Certificate) throws -> ReadAppReceipt {
        guard let data = Data(base64Encoded: base64, options: .ignoreUnknownCharacters), !data.isEmpty else {
            throw AppReceiptError(kind: .malformed, description: "the receipt is not base64")
        }
        return try read(Array(data), trusting: root)
    }

    /// Reads DER PKCS#7 app receipt bytes after checking their signature and chain under `root`.
    /// - Throws: `AppReceiptError`.
    public static func read(_ der: [UInt8], trusting root: Certificate) throws -> ReadAppReceipt {
        let content: [UInt8]
        do {
            content = try PKCS7SignedData.verifiedContent(der, trusting: root)
        } catch {
            let malformed = (error as? SigningError)?.operation == "d2i_PKCS7"
            throw AppReceiptError(
                kind: malformed ? .malformed : .unauthenticated,
                description: malformed ? "the receipt is not PKCS#7" : "the receipt's signature does not verify"
            )
        }
        guard let set = DER.elements(content), set.count == 1, let fields = attributes(of: set[0]) else {
            throw AppReceiptError(kind: .malformed, description: "the signed content is not a receipt's attributes")
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
            throw AppReceiptError(kind: .malformed, description: "an in-app attribute (17) is not a SET")
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
