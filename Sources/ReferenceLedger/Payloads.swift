internal import Foundation

/// The fields of a notification the ledger acts on.
struct NotificationFacts: Sendable, Decodable {
    struct Data: Sendable, Decodable {
        var bundleId: String?
        var environment: String?
        var signedTransactionInfo: String?
        var signedRenewalInfo: String?
        var status: Int32?
    }

    var notificationType: String?
    var subtype: String?
    var notificationUUID: String?
    var signedDate: Int64?
    var data: Data?
}

/// The fields of a signed transaction the ledger acts on.
struct TransactionFacts: Sendable, Decodable {
    var transactionId: String?
    var originalTransactionId: String?
    var bundleId: String?
    var environment: String?
    var productId: String?
    var type: String?
    var appAccountToken: String?
    var purchaseDate: Int64?
    var expiresDate: Int64?
    var quantity: Int32?
    var revocationDate: Int64?
    /// `REFUND_FULL`, `REFUND_PRORATED` or `FAMILY_REVOKE`.
    var revocationType: String?
    var isUpgraded: Bool?
    var signedDate: Int64?
}

/// The fields of signed renewal info the ledger acts on.
struct RenewalFacts: Sendable, Decodable {
    var originalTransactionId: String?
    var environment: String?
    var autoRenewStatus: Int32?
    var gracePeriodExpiresDate: Int64?
    var isInBillingRetryPeriod: Bool?
    var signedDate: Int64?
}

/// Why input was refused: a machine reason (the verifier's status when there is one) and one line.
struct Rejection: Error, Sendable, Equatable {
    var reason: String
    var detail: String
    /// True when the failure may pass on retry (OCSP unreachable): answered with 503, not 4xx.
    var retryable = false
}

/// Reads a JWS payload without checking anything: what a backend that trusts its input does.
enum UnverifiedJWS {
    static func decode<T: Decodable>(_ type: T.Type, _ jws: String) -> Result<T, Rejection> {
        let parts = jws.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let bytes = base64URLDecode(parts[1]) else {
            return .failure(Rejection(reason: "INVALID_JWT_FORMAT", detail: "not a compact JWS"))
        }
        do {
            return .success(try JSONDecoder().decode(T.self, from: Foundation.Data(bytes)))
        } catch {
            return .failure(Rejection(reason: "INVALID_JWT_FORMAT", detail: "payload JSON does not decode"))
        }
    }

    static func base64URLDecode(_ text: Substring) -> [UInt8]? {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        return Foundation.Data(base64Encoded: base64).map { Array($0) }
    }
}
