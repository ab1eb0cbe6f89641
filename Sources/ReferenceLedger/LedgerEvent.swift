internal import AppStoreModel

/// One verified input, ready to apply: a notification (with its nested payloads) or a device delivery.
struct LedgerEvent: Sendable {
    enum Source: String, Sendable {
        case webhook
        case device
    }

    var source: Source
    var notificationUUID: String?
    var notificationType: NotificationTypeV2?
    var subtype: Subtype?
    /// The ordering key: the notification's signedDate, or the transaction's for a device delivery.
    var signedDate: Int64
    var status: Status?
    var transaction: JWSTransactionDecodedPayload?
    var renewal: JWSRenewalInfoDecodedPayload?
}

/// What applying an event did.
struct ApplyOutcome: Sendable, Equatable {
    var duplicate = false
    var granted = 0
}

/// A device report of a purchase outcome as the ledger received it (never a grant in the correct ledger).
struct ReceivedDeviceReport: Sendable {
    var purchaseResult: String
    var productId: String
    var appAccountToken: String
    /// The transaction the app claims (reports of a successful purchase may carry one).
    var transactionId: String?
}

extension LedgerEvent {
    /// A `REFUND` or `REVOKE` notification.
    var isRevoking: Bool { notificationType == .refund || notificationType == .revoke }

    /// A Family Sharing revocation: a `REVOKE` notification, or a transaction revoked as `FAMILY_REVOKE`.
    var isFamilyRevoke: Bool {
        notificationType == .revoke || transaction?.revocationType == .familyRevoke
    }

    /// Whether this event takes `transaction` back (a revocation date, or a refund or revocation notice).
    func revokes(_ transaction: JWSTransactionDecodedPayload) -> Bool {
        transaction.revocationDate != nil || isRevoking
    }
}

/// The fields of a signed transaction the store keys on, with their defaults filled in.
struct TransactionView: Sendable {
    var transactionId: String
    var originalId: String
    var productId: String
    var productType: ProductType
    /// The account, lowercased; empty when the transaction names none.
    var token: String
    /// The transaction's own signed date, or the event's.
    var signedDate: Int64
    var quantity: Int64

    /// Nil without a transaction ID or product ID (the ledger then stores nothing for it).
    init?(_ transaction: JWSTransactionDecodedPayload, of event: LedgerEvent) {
        guard let transactionId = transaction.transactionId, let productId = transaction.productId else {
            return nil
        }
        self.transactionId = transactionId
        self.productId = productId
        originalId = transaction.originalTransactionId ?? transactionId
        productType = transaction.type ?? .nonConsumable
        token = transaction.appAccountToken?.lowercased() ?? ""
        signedDate = transaction.signedDate ?? event.signedDate
        quantity = Int64(transaction.quantity ?? 1)
    }
}
