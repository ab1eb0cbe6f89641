// The fast JSON reader for the payloads the verifier decodes on every delivery: the same values as
// `AppStoreJSON.decoder()`, checked field by field by the tests; any other shape falls back to it.

extension JSONReader {
    /// Stores a member's value once; false when the key came before or the value was not read.
    static func keep<T>(_ slot: inout T?, _ value: T?) -> Bool {
        guard slot == nil, let value else { return false }
        slot = value
        return true
    }
}

extension JWSTransactionDecodedPayload: AppStoreJSONReadable {
    /// The value with every field absent.
    public static var unread: Self { Self() }

    /// Reads member `key` of the plain shape; false for any other key or value.
    public mutating func readMember(_ key: String, from reader: inout JSONReader) -> Bool {
        switch key {
        case "appAccountToken": JSONReader.keep(&appAccountToken, reader.string())
        case "appTransactionId": JSONReader.keep(&appTransactionId, reader.string())
        case "bundleId": JSONReader.keep(&bundleId, reader.string())
        case "currency": JSONReader.keep(&currency, reader.string())
        case "environment": JSONReader.keep(&environment, reader.wire(Environment.self))
        case "expiresDate": JSONReader.keep(&expiresDate, reader.int64())
        case "inAppOwnershipType": JSONReader.keep(&inAppOwnershipType, reader.wire(InAppOwnershipType.self))
        case "isUpgraded": JSONReader.keep(&isUpgraded, reader.bool())
        case "offerDiscountType": JSONReader.keep(&offerDiscountType, reader.wire(OfferDiscountType.self))
        case "offerIdentifier": JSONReader.keep(&offerIdentifier, reader.string())
        case "offerPeriod": JSONReader.keep(&offerPeriod, reader.string())
        case "offerType": JSONReader.keep(&offerType, reader.wire(OfferType.self))
        case "originalPurchaseDate": JSONReader.keep(&originalPurchaseDate, reader.int64())
        case "originalTransactionId": JSONReader.keep(&originalTransactionId, reader.string())
        case "price": JSONReader.keep(&price, reader.int64())
        case "productId": JSONReader.keep(&productId, reader.string())
        case "purchaseDate": JSONReader.keep(&purchaseDate, reader.int64())
        case "quantity": JSONReader.keep(&quantity, reader.int32())
        case "revocationDate": JSONReader.keep(&revocationDate, reader.int64())
        case "revocationPercentage": JSONReader.keep(&revocationPercentage, reader.int32())
        case "revocationReason": JSONReader.keep(&revocationReason, reader.wire(RevocationReason.self))
        case "revocationType": JSONReader.keep(&revocationType, reader.wire(RevocationType.self))
        case "signedDate": JSONReader.keep(&signedDate, reader.int64())
        case "storefront": JSONReader.keep(&storefront, reader.string())
        case "storefrontId": JSONReader.keep(&storefrontId, reader.string())
        case "subscriptionGroupIdentifier": JSONReader.keep(&subscriptionGroupIdentifier, reader.string())
        case "transactionId": JSONReader.keep(&transactionId, reader.string())
        case "transactionReason": JSONReader.keep(&transactionReason, reader.wire(TransactionReason.self))
        case "type": JSONReader.keep(&type, reader.wire(ProductType.self))
        case "webOrderLineItemId": JSONReader.keep(&webOrderLineItemId, reader.string())
        case "billingPlanType": JSONReader.keep(&billingPlanType, reader.wire(BillingPlanType.self))
        // advancedCommerceInfo, commitmentInfo and unknown keys: the decoder's job.
        default: false
        }
    }
}

extension JWSRenewalInfoDecodedPayload: AppStoreJSONReadable {
    /// The value with every field absent.
    public static var unread: Self { Self() }

    /// Reads member `key` of the plain shape; false for any other key or value.
    public mutating func readMember(_ key: String, from reader: inout JSONReader) -> Bool {
        switch key {
        case "appAccountToken": JSONReader.keep(&appAccountToken, reader.string())
        case "appTransactionId": JSONReader.keep(&appTransactionId, reader.string())
        case "autoRenewProductId": JSONReader.keep(&autoRenewProductId, reader.string())
        case "autoRenewStatus": JSONReader.keep(&autoRenewStatus, reader.wire(AutoRenewStatus.self))
        case "currency": JSONReader.keep(&currency, reader.string())
        case "eligibleWinBackOfferIds": JSONReader.keep(&eligibleWinBackOfferIds, reader.strings())
        case "environment": JSONReader.keep(&environment, reader.wire(Environment.self))
        case "expirationIntent": JSONReader.keep(&expirationIntent, reader.wire(ExpirationIntent.self))
        case "gracePeriodExpiresDate": JSONReader.keep(&gracePeriodExpiresDate, reader.int64())
        case "isInBillingRetryPeriod": JSONReader.keep(&isInBillingRetryPeriod, reader.bool())
        case "offerDiscountType": JSONReader.keep(&offerDiscountType, reader.wire(OfferDiscountType.self))
        case "offerIdentifier": JSONReader.keep(&offerIdentifier, reader.string())
        case "offerPeriod": JSONReader.keep(&offerPeriod, reader.string())
        case "offerType": JSONReader.keep(&offerType, reader.wire(OfferType.self))
        case "originalTransactionId": JSONReader.keep(&originalTransactionId, reader.string())
        case "priceIncreaseStatus": JSONReader.keep(&priceIncreaseStatus, reader.wire(PriceIncreaseStatus.self))
        case "productId": JSONReader.keep(&productId, reader.string())
        case "recentSubscriptionStartDate": JSONReader.keep(&recentSubscriptionStartDate, reader.int64())
        case "renewalBillingPlanType": JSONReader.keep(&renewalBillingPlanType, reader.wire(BillingPlanType.self))
        case "renewalDate": JSONReader.keep(&renewalDate, reader.int64())
        case "renewalPrice": JSONReader.keep(&renewalPrice, reader.int64())
        case "signedDate": JSONReader.keep(&signedDate, reader.int64())
        // advancedCommerceInfo, commitmentInfo and unknown keys: the decoder's job.
        default: false
        }
    }
}

extension ResponseBodyV2DecodedPayload: AppStoreJSONReadable {
    /// The value with every field absent.
    public static var unread: Self { Self() }

    /// Reads member `key` of the plain shape; false for any other key or value.
    public mutating func readMember(_ key: String, from reader: inout JSONReader) -> Bool {
        switch key {
        case "data": JSONReader.keep(&data, reader.object(NotificationData.self))
        case "notificationType": JSONReader.keep(&notificationType, reader.wire(NotificationTypeV2.self))
        case "notificationUUID": JSONReader.keep(&notificationUUID, reader.string())
        case "signedDate": JSONReader.keep(&signedDate, reader.int64())
        case "subtype": JSONReader.keep(&subtype, reader.wire(Subtype.self))
        case "version": JSONReader.keep(&version, reader.string())
        // summary, externalPurchaseToken, appData and unknown keys: the decoder's job.
        default: false
        }
    }
}

extension NotificationData: AppStoreJSONReadable {
    /// The value with every field absent.
    public static var unread: Self { Self() }

    /// Reads member `key` of the plain shape; false for any other key or value.
    public mutating func readMember(_ key: String, from reader: inout JSONReader) -> Bool {
        switch key {
        case "appAppleId": JSONReader.keep(&appAppleId, reader.int64())
        case "bundleId": JSONReader.keep(&bundleId, reader.string())
        case "bundleVersion": JSONReader.keep(&bundleVersion, reader.string())
        case "consumptionRequestReason":
            JSONReader.keep(&consumptionRequestReason, reader.wire(ConsumptionRequestReason.self))
        case "environment": JSONReader.keep(&environment, reader.wire(Environment.self))
        case "signedRenewalInfo": JSONReader.keep(&signedRenewalInfo, reader.string())
        case "signedTransactionInfo": JSONReader.keep(&signedTransactionInfo, reader.string())
        case "status": JSONReader.keep(&status, reader.wire(Status.self))
        default: false
        }
    }
}
