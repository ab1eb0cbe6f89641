import AppStoreModel

// The App Store Server API's response bodies, with Apple's field names (as in Apple's libraries' models of the
// same names). Optional fields that are nil are left out, as Apple does.

struct TransactionInfoResponse: Encodable {
    var signedTransactionInfo: String
}

struct HistoryResponse: Encodable {
    var revision: String
    var hasMore: Bool
    var bundleId: String
    var appAppleId: Int64?
    var environment: Environment
    var signedTransactions: [String]
}

struct RefundHistoryResponse: Encodable {
    var signedTransactions: [String]
    var revision: String
    var hasMore: Bool
}

struct OrderLookupResponse: Encodable {
    /// 0 valid, 1 invalid.
    var status: Int
    var signedTransactions: [String]
}

struct StatusResponse: Encodable {
    var environment: Environment
    var bundleId: String
    var appAppleId: Int64?
    var data: [SubscriptionGroupIdentifierItem]
}

struct SubscriptionGroupIdentifierItem: Encodable {
    var subscriptionGroupIdentifier: String
    var lastTransactions: [LastTransactionsItem]
}

struct LastTransactionsItem: Encodable {
    var status: Int32
    var originalTransactionId: String
    var signedTransactionInfo: String
    var signedRenewalInfo: String?
}

struct SendTestNotificationResponse: Encodable {
    var testNotificationToken: String
}

struct CheckTestNotificationResponse: Encodable {
    var signedPayload: String
    var sendAttempts: [SendAttempt]
}

struct NotificationHistoryResponse: Encodable {
    var paginationToken: String?
    var hasMore: Bool
    var notificationHistory: [NotificationHistoryResponseItem]
}

struct NotificationHistoryResponseItem: Encodable {
    var signedPayload: String
    var sendAttempts: [SendAttempt]
}

struct ExtendRenewalDateResponse: Encodable {
    var originalTransactionId: String
    var webOrderLineItemId: String?
    var success: Bool
    var effectiveDate: Int64?
}
