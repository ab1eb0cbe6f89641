// The fast JSON writer for each payload: the same bytes as `AppStoreJSON.encoder()` (sorted keys, nil
// omitted), checked byte for byte by the tests, several times faster than `JSONEncoder`.

extension ResponseBodyV2: AppStoreJSONWritable {
    /// Appends this value as a JSON object, keys sorted, absent fields omitted.
    public func writeJSON(to writer: inout JSONWriter) {
        writer.beginObject()
        writer.field("signedPayload", signedPayload)
        writer.endObject()
    }
}

extension ResponseBodyV2DecodedPayload: AppStoreJSONWritable {
    /// Appends this value as a JSON object, keys sorted, absent fields omitted.
    public func writeJSON(to writer: inout JSONWriter) {
        writer.beginObject()
        writer.field("appData", appData)
        writer.field("data", data)
        writer.field("externalPurchaseToken", externalPurchaseToken)
        writer.field("notificationType", notificationType)
        writer.field("notificationUUID", notificationUUID)
        writer.field("signedDate", signedDate)
        writer.field("subtype", subtype)
        writer.field("summary", summary)
        writer.field("version", version)
        writer.endObject()
    }
}

extension NotificationData: AppStoreJSONWritable {
    /// Appends this value as a JSON object, keys sorted, absent fields omitted.
    public func writeJSON(to writer: inout JSONWriter) {
        writer.beginObject()
        writer.field("appAppleId", appAppleId)
        writer.field("bundleId", bundleId)
        writer.field("bundleVersion", bundleVersion)
        writer.field("consumptionRequestReason", consumptionRequestReason)
        writer.field("environment", environment)
        writer.field("signedRenewalInfo", signedRenewalInfo)
        writer.field("signedTransactionInfo", signedTransactionInfo)
        writer.field("status", status)
        writer.endObject()
    }
}

extension Summary: AppStoreJSONWritable {
    /// Appends this value as a JSON object, keys sorted, absent fields omitted.
    public func writeJSON(to writer: inout JSONWriter) {
        writer.beginObject()
        writer.field("appAppleId", appAppleId)
        writer.field("bundleId", bundleId)
        writer.field("environment", environment)
        writer.field("failedCount", failedCount)
        writer.field("productId", productId)
        writer.field("requestIdentifier", requestIdentifier)
        writer.field("storefrontCountryCodes", storefrontCountryCodes)
        writer.field("succeededCount", succeededCount)
        writer.endObject()
    }
}

extension ExternalPurchaseToken: AppStoreJSONWritable {
    /// Appends this value as a JSON object, keys sorted, absent fields omitted.
    public func writeJSON(to writer: inout JSONWriter) {
        writer.beginObject()
        writer.field("appAppleId", appAppleId)
        writer.field("bundleId", bundleId)
        writer.field("externalPurchaseId", externalPurchaseId)
        writer.field("tokenCreationDate", tokenCreationDate)
        writer.endObject()
    }
}

extension AppData: AppStoreJSONWritable {
    /// Appends this value as a JSON object, keys sorted, absent fields omitted.
    public func writeJSON(to writer: inout JSONWriter) {
        writer.beginObject()
        writer.field("appAppleId", appAppleId)
        writer.field("bundleId", bundleId)
        writer.field("environment", environment)
        writer.field("signedAppTransactionInfo", signedAppTransactionInfo)
        writer.endObject()
    }
}

extension JWSTransactionDecodedPayload: AppStoreJSONWritable {
    /// Appends this value as a JSON object, keys sorted, absent fields omitted.
    public func writeJSON(to writer: inout JSONWriter) {
        writer.beginObject()
        writer.field("advancedCommerceInfo", advancedCommerceInfo)
        writer.field("appAccountToken", appAccountToken)
        writer.field("appTransactionId", appTransactionId)
        writer.field("billingPlanType", billingPlanType)
        writer.field("bundleId", bundleId)
        writer.field("commitmentInfo", commitmentInfo)
        writer.field("currency", currency)
        writer.field("environment", environment)
        writer.field("expiresDate", expiresDate)
        writer.field("inAppOwnershipType", inAppOwnershipType)
        writer.field("isUpgraded", isUpgraded)
        writer.field("offerDiscountType", offerDiscountType)
        writer.field("offerIdentifier", offerIdentifier)
        writer.field("offerPeriod", offerPeriod)
        writer.field("offerType", offerType)
        writer.field("originalPurchaseDate", originalPurchaseDate)
        writer.field("originalTransactionId", originalTransactionId)
        writer.field("price", price)
        writer.field("productId", productId)
        writer.field("purchaseDate", purchaseDate)
        writer.field("quantity", quantity)
        writer.field("revocationDate", revocationDate)
        writer.field("revocationPercentage", revocationPercentage)
        writer.field("revocationReason", revocationReason)
        writer.field("revocationType", revocationType)
        writer.field("signedDate", signedDate)
        writer.field("storefront", storefront)
        writer.field("storefrontId", storefrontId)
        writer.field("subscriptionGroupIdentifier", subscriptionGroupIdentifier)
        writer.field("transactionId", transactionId)
        writer.field("transactionReason", transactionReason)
        writer.field("type", type)
        writer.field("webOrderLineItemId", webOrderLineItemId)
        writer.endObject()
    }
}

extension TransactionCommitmentInfo: AppStoreJSONWritable {
    /// Appends this value as a JSON object, keys sorted, absent fields omitted.
    public func writeJSON(to writer: inout JSONWriter) {
        writer.beginObject()
        writer.field("billingPeriodNumber", billingPeriodNumber)
        writer.field("commitmentExpiresDate", commitmentExpiresDate)
        writer.field("commitmentPrice", commitmentPrice)
        writer.field("totalBillingPeriods", totalBillingPeriods)
        writer.endObject()
    }
}

extension JWSRenewalInfoDecodedPayload: AppStoreJSONWritable {
    /// Appends this value as a JSON object, keys sorted, absent fields omitted.
    public func writeJSON(to writer: inout JSONWriter) {
        writer.beginObject()
        writer.field("advancedCommerceInfo", advancedCommerceInfo)
        writer.field("appAccountToken", appAccountToken)
        writer.field("appTransactionId", appTransactionId)
        writer.field("autoRenewProductId", autoRenewProductId)
        writer.field("autoRenewStatus", autoRenewStatus)
        writer.field("commitmentInfo", commitmentInfo)
        writer.field("currency", currency)
        writer.field("eligibleWinBackOfferIds", eligibleWinBackOfferIds)
        writer.field("environment", environment)
        writer.field("expirationIntent", expirationIntent)
        writer.field("gracePeriodExpiresDate", gracePeriodExpiresDate)
        writer.field("isInBillingRetryPeriod", isInBillingRetryPeriod)
        writer.field("offerDiscountType", offerDiscountType)
        writer.field("offerIdentifier", offerIdentifier)
        writer.field("offerPeriod", offerPeriod)
        writer.field("offerType", offerType)
        writer.field("originalTransactionId", originalTransactionId)
        writer.field("priceIncreaseStatus", priceIncreaseStatus)
        writer.field("productId", productId)
        writer.field("recentSubscriptionStartDate", recentSubscriptionStartDate)
        writer.field("renewalBillingPlanType", renewalBillingPlanType)
        writer.field("renewalDate", renewalDate)
        writer.field("renewalPrice", renewalPrice)
        writer.field("signedDate", signedDate)
        writer.endObject()
    }
}

extension RenewalCommitmentInfo: AppStoreJSONWritable {
    /// Appends this value as a JSON object, keys sorted, absent fields omitted.
    public func writeJSON(to writer: inout JSONWriter) {
        writer.beginObject()
        writer.field("commitmentAutoRenewProductId", commitmentAutoRenewProductId)
        writer.field("commitmentAutoRenewStatus", commitmentAutoRenewStatus)
        writer.field("commitmentRenewalBillingPlanType", commitmentRenewalBillingPlanType)
        writer.field("commitmentRenewalDate", commitmentRenewalDate)
        writer.field("commitmentRenewalPrice", commitmentRenewalPrice)
        writer.endObject()
    }
}

extension AppTransaction: AppStoreJSONWritable {
    /// Appends this value as a JSON object, keys sorted, absent fields omitted.
    public func writeJSON(to writer: inout JSONWriter) {
        writer.beginObject()
        writer.field("appAppleId", appAppleId)
        writer.field("appTransactionId", appTransactionId)
        writer.field("applicationVersion", applicationVersion)
        writer.field("bundleId", bundleId)
        writer.field("deviceVerification", deviceVerification)
        writer.field("deviceVerificationNonce", deviceVerificationNonce)
        writer.field("originalApplicationVersion", originalApplicationVersion)
        writer.field("originalPlatform", originalPlatform)
        writer.field("originalPurchaseDate", originalPurchaseDate)
        writer.field("preorderDate", preorderDate)
        writer.field("receiptCreationDate", receiptCreationDate)
        writer.field("receiptType", receiptType)
        writer.field("versionExternalIdentifier", versionExternalIdentifier)
        writer.endObject()
    }
}
