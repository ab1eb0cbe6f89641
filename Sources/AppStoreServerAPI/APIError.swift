public import HTTPServer

/// One of the App Store Server API's error answers: Apple's numeric `errorCode`, its HTTP status and its name
/// (as Apple's documentation and libraries spell it, for example `TransactionIdNotFoundError`).
///
/// The body is Apple's `{"errorCode": N, "errorMessage": "..."}`, with `Content-Type: application/json` exactly,
/// because Apple's libraries parse the error only under that content type.
public struct APIErrorCode: Error, Sendable, Hashable, CustomStringConvertible {
    /// Apple's `errorCode`, such as 4040010.
    public var code: Int
    /// The HTTP status Apple answers with.
    public var status: Int
    /// Apple's name of the error.
    public var name: String
    /// Apple's `errorMessage`.
    public var message: String

    /// Creates an error code.
    public init(code: Int, status: Int, name: String, message: String) {
        self.code = code
        self.status = status
        self.name = name
        self.message = message
    }

    /// `name (code)`.
    public var description: String { "\(name) (\(code))" }

    /// The error as Apple answers it.
    public var response: HTTPResponse {
        HTTPResponse.json(status, ErrorBody(errorCode: code, errorMessage: message))
    }

    private struct ErrorBody: Encodable {
        var errorCode: Int
        var errorMessage: String
    }
}

extension APIErrorCode {
    /// 400 `GeneralBadRequestError`.
    public static let generalBadRequest = bad(4_000_000, "GeneralBadRequestError", "Bad request.")
    /// 400 `InvalidRequestRevisionError`.
    public static let invalidRequestRevision = bad(
        4_000_005,
        "InvalidRequestRevisionError",
        "Invalid request revision."
    )
    /// 400 `InvalidTransactionIdError`.
    public static let invalidTransactionId = bad(4_000_006, "InvalidTransactionIdError", "Invalid transaction id.")
    /// 400 `InvalidOriginalTransactionIdError`.
    public static let invalidOriginalTransactionId = bad(
        4_000_008,
        "InvalidOriginalTransactionIdError",
        "Invalid original transaction id."
    )
    /// 400 `InvalidExtendByDaysError`.
    public static let invalidExtendByDays = bad(4_000_009, "InvalidExtendByDaysError", "Invalid extend by days value.")
    /// 400 `InvalidExtendReasonCodeError`.
    public static let invalidExtendReasonCode = bad(
        4_000_010,
        "InvalidExtendReasonCodeError",
        "Invalid extend reason code."
    )
    /// 400 `InvalidRequestIdentifierError`.
    public static let invalidRequestIdentifier = bad(
        4_000_011,
        "InvalidRequestIdentifierError",
        "Invalid request identifier."
    )
    /// 400 `StartDateTooFarInPastError`.
    public static let startDateTooFarInPast = bad(
        4_000_012,
        "StartDateTooFarInPastError",
        "Start date too far in the past."
    )
    /// 400 `StartDateAfterEndDateError`.
    public static let startDateAfterEndDate = bad(
        4_000_013,
        "StartDateAfterEndDateError",
        "Start date after end date."
    )
    /// 400 `InvalidPaginationTokenError`.
    public static let invalidPaginationToken = bad(
        4_000_014,
        "InvalidPaginationTokenError",
        "Invalid pagination token."
    )
    /// 400 `InvalidStartDateError`.
    public static let invalidStartDate = bad(4_000_015, "InvalidStartDateError", "Invalid start date.")
    /// 400 `InvalidEndDateError`.
    public static let invalidEndDate = bad(4_000_016, "InvalidEndDateError", "Invalid end date.")
    /// 400 `InvalidNotificationTypeError`.
    public static let invalidNotificationType = bad(
        4_000_018,
        "InvalidNotificationTypeError",
        "Invalid notification type."
    )
    /// 400 `MultipleFiltersSuppliedError`.
    public static let multipleFiltersSupplied = bad(
        4_000_019,
        "MultipleFiltersSuppliedError",
        "Invalid request. Supply either a transaction id or a notification type, not both."
    )
    /// 400 `InvalidTestNotificationTokenError`.
    public static let invalidTestNotificationToken = bad(
        4_000_020,
        "InvalidTestNotificationTokenError",
        "Invalid test notification token."
    )
    /// 400 `InvalidSortError`.
    public static let invalidSort = bad(4_000_021, "InvalidSortError", "Invalid sort.")
    /// 400 `InvalidProductTypeError`.
    public static let invalidProductType = bad(4_000_022, "InvalidProductTypeError", "Invalid product type.")
    /// 400 `InvalidProductIdError`.
    public static let invalidProductId = bad(4_000_023, "InvalidProductIdError", "Invalid product id.")
    /// 400 `InvalidSubscriptionGroupIdentifierError`.
    public static let invalidSubscriptionGroupIdentifier = bad(
        4_000_024,
        "InvalidSubscriptionGroupIdentifierError",
        "Invalid subscription group identifier."
    )
    /// 400 `InvalidInAppOwnershipTypeError`.
    public static let invalidInAppOwnershipType = bad(
        4_000_026,
        "InvalidInAppOwnershipTypeError",
        "Invalid in-app ownership type."
    )
    /// 400 `InvalidRevokedError`.
    public static let invalidRevoked = bad(4_000_030, "InvalidRevokedError", "Invalid revoked value.")
    /// 400 `InvalidStatusError`.
    public static let invalidStatus = bad(4_000_031, "InvalidStatusError", "Invalid status.")
    /// 400 `InvalidAccountTenureError`.
    public static let invalidAccountTenure = bad(4_000_032, "InvalidAccountTenureError", "Invalid account tenure.")
    /// 400 `InvalidAppAccountTokenError`.
    public static let invalidAppAccountToken = bad(
        4_000_033,
        "InvalidAppAccountTokenError",
        "Invalid app account token."
    )
    /// 400 `InvalidConsumptionStatusError`.
    public static let invalidConsumptionStatus = bad(
        4_000_034,
        "InvalidConsumptionStatusError",
        "Invalid consumption status."
    )
    /// 400 `InvalidCustomerConsentedError`.
    public static let invalidCustomerConsented = bad(
        4_000_035,
        "InvalidCustomerConsentedError",
        "Customer consent is required."
    )
    /// 400 `InvalidDeliveryStatusError`.
    public static let invalidDeliveryStatus = bad(4_000_036, "InvalidDeliveryStatusError", "Invalid delivery status.")
    /// 400 `InvalidLifetimeDollarsPurchasedError`.
    public static let invalidLifetimeDollarsPurchased = bad(
        4_000_037,
        "InvalidLifetimeDollarsPurchasedError",
        "Invalid lifetime dollars purchased."
    )
    /// 400 `InvalidLifetimeDollarsRefundedError`.
    public static let invalidLifetimeDollarsRefunded = bad(
        4_000_038,
        "InvalidLifetimeDollarsRefundedError",
        "Invalid lifetime dollars refunded."
    )
    /// 400 `InvalidPlatformError`.
    public static let invalidPlatform = bad(4_000_039, "InvalidPlatformError", "Invalid platform.")
    /// 400 `InvalidPlayTimeError`.
    public static let invalidPlayTime = bad(4_000_040, "InvalidPlayTimeError", "Invalid play time.")
    /// 400 `InvalidSampleContentProvidedError`.
    public static let invalidSampleContentProvided = bad(
        4_000_041,
        "InvalidSampleContentProvidedError",
        "Invalid sample content provided."
    )
    /// 400 `InvalidUserStatusError`.
    public static let invalidUserStatus = bad(4_000_042, "InvalidUserStatusError", "Invalid user status.")
    /// 403 `SubscriptionExtensionIneligibleError`.
    public static let subscriptionExtensionIneligible = APIErrorCode(
        code: 4_030_004,
        status: 403,
        name: "SubscriptionExtensionIneligibleError",
        message: "Forbidden - subscription state ineligible for extension."
    )
    /// 403 `SubscriptionMaxExtensionError`.
    public static let subscriptionMaxExtension = APIErrorCode(
        code: 4_030_005,
        status: 403,
        name: "SubscriptionMaxExtensionError",
        message: "Forbidden - subscription has reached maximum extension count."
    )
    /// 403 `FamilySharedSubscriptionExtensionIneligibleError`.
    public static let familySharedSubscriptionExtensionIneligible = APIErrorCode(
        code: 4_030_007,
        status: 403,
        name: "FamilySharedSubscriptionExtensionIneligibleError",
        message: "Forbidden - subscriptions that are family shared are ineligible for extension."
    )
    /// 404 `OriginalTransactionIdNotFoundError`.
    public static let originalTransactionIdNotFound = notFound(
        4_040_005,
        "OriginalTransactionIdNotFoundError",
        "Original transaction id not found."
    )
    /// 404 `ServerNotificationUrlNotFoundError`.
    public static let serverNotificationURLNotFound = notFound(
        4_040_007,
        "ServerNotificationUrlNotFoundError",
        "No App Store Server Notification URL found for provided app. Check that a URL is configured."
    )
    /// 404 `TestNotificationNotFoundError`.
    public static let testNotificationNotFound = notFound(
        4_040_008,
        "TestNotificationNotFoundError",
        "Either the test notification was not found or is not ready."
    )
    /// 404 `TransactionIdNotFoundError`.
    public static let transactionIdNotFound = notFound(
        4_040_010,
        "TransactionIdNotFoundError",
        "Transaction id not found."
    )
    /// 429 `RateLimitExceededError`.
    public static let rateLimitExceeded = APIErrorCode(
        code: 4_290_000,
        status: 429,
        name: "RateLimitExceededError",
        message: "Rate limit exceeded."
    )
    /// 500 `GeneralInternalError`.
    public static let generalInternal = APIErrorCode(
        code: 5_000_000,
        status: 500,
        name: "GeneralInternalError",
        message: "An unknown error occurred."
    )
    /// 500 `GeneralInternalRetryableError`.
    public static let generalInternalRetryable = APIErrorCode(
        code: 5_000_001,
        status: 500,
        name: "GeneralInternalRetryableError",
        message: "An unknown error occurred. Please try again."
    )

    private static func bad(_ code: Int, _ name: String, _ message: String) -> APIErrorCode {
        APIErrorCode(code: code, status: 400, name: name, message: message)
    }

    private static func notFound(_ code: Int, _ name: String, _ message: String) -> APIErrorCode {
        APIErrorCode(code: code, status: 404, name: name, message: message)
    }
}
