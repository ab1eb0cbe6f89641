public import AppStoreModel
internal import Foundation
public import Signing

/// A legacy app receipt, as a device reads it from `appStoreReceiptURL` and sends it (base64) to a backend
/// that checks it with `verifyReceipt` or parses it itself: Apple's ASN.1 receipt, a SET of attributes
/// `SEQUENCE { type INTEGER, version INTEGER, value OCTET STRING }`, with one in-app attribute (type 17)
/// per purchase, wrapped in PKCS#7 SignedData signed by the test PKI's leaf.
///
/// The attributes written are the documented ones: receipt type (0), app ID (1), bundle ID (2), app
/// version (3), opaque value (4), SHA-1 hash (5), creation date (12), in-app purchases (17), original app
/// version (19) and expiration date (21, only when set). Dates are RFC 3339 IA5Strings in UTC
/// (`2026-01-01T00:00:00Z`), as Apple writes them.
///
/// ```swift
/// let receipt = AppReceipt(app: minter.app, inApp: [transaction], creationDate: Minter.nowMilliseconds())
/// let base64 = try receipt.base64(signedBy: minter.pki)  // what the device posts
/// ```
public struct AppReceipt: Sendable, Hashable {
    /// The app: bundle ID (2), app ID (1), version (3) and environment (the receipt type, 0).
    public var app: AppIdentity
    /// The purchases the receipt lists, one in-app attribute each, in this order.
    public var inApp: [JWSTransactionDecodedPayload]
    /// When the App Store created the receipt, UNIX ms (12).
    public var creationDate: Int64
    /// The app version the customer first bought (19).
    public var originalApplicationVersion: String
    /// When the receipt expires, UNIX ms (21); volume-purchase receipts only, usually absent.
    public var expirationDate: Int64?
    /// The opaque value (4) that goes into the hash with the device identifier and the bundle ID.
    public var opaqueValue: [UInt8]
    /// The device's `identifierForVendor` (16 bytes): the hash (5) binds the receipt to it.
    public var deviceIdentifier: [UInt8]

    /// Creates a receipt; the opaque value and the device identifier default to fresh random bytes.
    public init(
        app: AppIdentity,
        inApp: [JWSTransactionDecodedPayload],
        creationDate: Int64,
        originalApplicationVersion: String = "1.0",
        expirationDate: Int64? = nil,
        opaqueValue: [UInt8]? = nil,
        deviceIdentifier: [UInt8]? = nil
    ) {
        self.app = app
        self.inApp = inApp
        self.creationDate = creationDate
        self.originalApplicationVersion = originalApplicationVersion
        self.expirationDate = expirationDate
        self.opaqueValue = opaqueValue ?? randomBytes(8)
        self.deviceIdentifier = deviceIdentifier ?? randomBytes(16)
    }

    /// The receipt type attribute (0) of an environment: `Production`, `ProductionSandbox`, else its name.
    public static func receiptType(_ environment: Environment) -> String {
        switch environment {
        case .production: return "Production"
        case .sandbox: return "ProductionSandbox"
        default: return environment.rawValue
        }
    }

    /// The SHA-1 hash attribute (5): over the device identifier, the opaque value and the bundle ID's
    /// encoded UTF8String, the way a device checks that a receipt is its own.
    public var hash: [UInt8] {
        sha1(deviceIdentifier + opaqueValue + DER.utf8String(app.bundleId))
    }

    /// The receipt's ASN.1 SET of attributes (the PKCS#7 content), attributes in type order as Apple writes
    /// them.
    public func attributes() -> [UInt8] {
        var fields: [[UInt8]] = [
            Self.attribute(0, DER.utf8String(Self.receiptType(app.environment))),
            Self.attribute(1, DER.integer(app.appAppleId ?? 0)),
            Self.attribute(2, DER.utf8String(app.bundleId)),
            Self.attribute(3, DER.utf8String(app.bundleVersion)),
            Self.attribute(4, opaqueValue),
            Self.attribute(5, hash),
            Self.attribute(12, DER.ia5String(Self.date(creationDate))),
        ]
        fields += inApp.map { Self.attribute(17, Self.inAppSet($0)) }
        fields.append(Self.attribute(19, DER.utf8String(originalApplicationVersion)))
        if let expirationDate { fields.append(Self.attribute(21, DER.ia5String(Self.date(expirationDate)))) }
        return DER.set(fields)
    }

    /// The receipt signed with the PKI's leaf: DER PKCS#7 SignedData, the bytes of `appStoreReceiptURL`.
    /// - Throws: `SigningError` when OpenSSL fails.
    public func signed(by pki: TestPKI) throws -> [UInt8] {
        try PKCS7SignedData.sign(attributes(), with: pki)
    }

    /// The signed receipt in base64 (no line breaks), as a device sends it.
    /// - Throws: `SigningError` when OpenSSL fails.
    public func base64(signedBy pki: TestPKI) throws -> String {
        Data(try signed(by: pki)).base64EncodedString()
    }

    /// One in-app purchase's SET: Apple writes every field, empty dates for what does not apply.
    static func inAppSet(_ transaction: JWSTransactionDecodedPayload) -> [UInt8] {
        let isSubscription = transaction.type == .autoRenewableSubscription
        let webOrder = transaction.webOrderLineItemId.flatMap { Int64($0) } ?? 0
        var fields: [[UInt8]] = [
            attribute(1701, DER.integer(Int64(transaction.quantity ?? 1))),
            attribute(1702, DER.utf8String(transaction.productId ?? "")),
            attribute(1703, DER.utf8String(transaction.transactionId ?? "")),
            attribute(1704, DER.ia5String(transaction.purchaseDate.map(date) ?? "")),
            attribute(1705, DER.utf8String(transaction.originalTransactionId ?? transaction.transactionId ?? "")),
            attribute(1706, DER.ia5String(transaction.originalPurchaseDate.map(date) ?? "")),
            attribute(1708, DER.ia5String(isSubscription ? transaction.expiresDate.map(date) ?? "" : "")),
            attribute(1711, DER.integer(webOrder)),
            attribute(1712, DER.ia5String(transaction.revocationDate.map(date) ?? "")),
            attribute(1713, DER.integer(transaction.offerDiscountType == .freeTrial ? 1 : 0)),
            attribute(1719, DER.integer(transaction.offerType == .introductoryOffer ? 1 : 0)),
        ]
        if transaction.offerType == .promotionalOffer, let offer = transaction.offerIdentifier {
            fields.append(attribute(1721, DER.utf8String(offer)))
        }
        return DER.set(fields)
    }

    /// `SEQUENCE { type, version 1, OCTET STRING value }`.
    static func attribute(_ type: Int64, _ value: [UInt8]) -> [UInt8] {
        DER.sequence([DER.integer(type), DER.integer(1), DER.octetString(value)])
    }

    /// RFC 3339 in UTC to the second, as receipts write dates: `2026-01-01T00:00:00Z`.
    public static func date(_ milliseconds: Int64) -> String {
        let seconds = milliseconds >= 0 ? milliseconds / 1000 : (milliseconds - 999) / 1000
        return Date(timeIntervalSince1970: TimeInterval(seconds)).formatted(.iso8601)
    }
}

extension Minter {
    /// An app receipt for this minter's app listing `inApp`, signed by its PKI, in base64 as a device sends it.
    /// - Parameters:
    ///   - inApp: the account's purchases, for example the transaction payloads the world minted.
    ///   - creationDate: when the receipt was created, UNIX ms.
    /// - Throws: `SigningError` when OpenSSL fails.
    public func appReceipt(_ inApp: [JWSTransactionDecodedPayload], creationDate: Int64) throws -> String {
        try AppReceipt(app: app, inApp: inApp, creationDate: creationDate).base64(signedBy: pki)
    }
}

/// Random bytes from the identifiers' generator: receipt values need to differ, not to be secret.
private func randomBytes(_ count: Int) -> [UInt8] {
    (0..<count).map { _ in UInt8(truncatingIfNeeded: IdentifierBits.next()) }
}
