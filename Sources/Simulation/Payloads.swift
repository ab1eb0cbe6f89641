public import AppStoreModel
import Foundation

extension TransactionFacts {
    /// The payload to sign as `signedTransactionInfo` (or as a device's transaction JWS).
    public var payload: JWSTransactionDecodedPayload {
        var p = JWSTransactionDecodedPayload(
            originalTransactionId: originalTransactionId,
            transactionId: transactionId,
            webOrderLineItemId: webOrderLineItemId,
            bundleId: bundleId,
            productId: productId,
            subscriptionGroupIdentifier: subscriptionGroupIdentifier,
            purchaseDate: purchaseDate,
            originalPurchaseDate: originalPurchaseDate,
            expiresDate: expiresDate,
            quantity: quantity,
            type: type,
            appAccountToken: appAccountToken
        )
        p.inAppOwnershipType = inAppOwnershipType
        p.signedDate = signedDate
        p.revocationReason = revocationReason
        p.revocationDate = revocationDate
        p.isUpgraded = isUpgraded
        p.offerType = offerType
        p.offerIdentifier = offerIdentifier
        p.environment = environment
        p.storefront = storefront
        p.storefrontId = storefrontId
        p.transactionReason = transactionReason
        p.currency = currency
        p.price = price
        p.offerDiscountType = offerDiscountType
        p.appTransactionId = appTransactionId
        p.offerPeriod = offerPeriod
        p.revocationType = revocationType
        p.revocationPercentage = revocationPercentage
        return p
    }
}

extension RenewalFacts {
    /// The payload to sign as `signedRenewalInfo`.
    public var payload: JWSRenewalInfoDecodedPayload {
        var p = JWSRenewalInfoDecodedPayload()
        p.expirationIntent = expirationIntent
        p.originalTransactionId = originalTransactionId
        p.autoRenewProductId = autoRenewProductId
        p.productId = productId
        p.autoRenewStatus = autoRenewStatus
        p.isInBillingRetryPeriod = isInBillingRetryPeriod
        p.priceIncreaseStatus = priceIncreaseStatus
        p.gracePeriodExpiresDate = gracePeriodExpiresDate
        p.offerType = offerType
        p.offerIdentifier = offerIdentifier
        p.offerDiscountType = offerDiscountType
        p.signedDate = signedDate
        p.environment = environment
        p.recentSubscriptionStartDate = recentSubscriptionStartDate
        p.renewalDate = renewalDate
        p.currency = currency
        p.renewalPrice = renewalPrice
        p.appAccountToken = appAccountToken
        p.appTransactionId = appTransactionId
        p.eligibleWinBackOfferIds = eligibleWinBackOfferIds
        return p
    }
}

extension NotificationFacts {
    /// The notification payload to sign as `signedPayload`, given the already signed nested objects
    /// (sign ``transaction``'s and ``renewal``'s payloads first).
    /// - Parameters:
    ///   - signedTransactionInfo: the JWS of `transaction?.payload`.
    ///   - signedRenewalInfo: the JWS of `renewal?.payload`.
    public func payload(signedTransactionInfo: String?, signedRenewalInfo: String?) -> ResponseBodyV2DecodedPayload {
        var data = NotificationData(
            appAppleId: appAppleId,
            bundleId: bundleId,
            environment: environment
        )
        data.signedTransactionInfo = signedTransactionInfo
        data.signedRenewalInfo = signedRenewalInfo
        data.status = status
        data.consumptionRequestReason = consumptionRequestReason
        var p = ResponseBodyV2DecodedPayload(
            notificationType: notificationType,
            subtype: subtype,
            notificationUUID: notificationUUID,
            version: version,
            signedDate: signedDate
        )
        // Apple's payload carries exactly one of `data` and `summary`.
        if let summary { p.summary = summary } else { p.data = data }
        return p
    }
}

extension DeviceReport {
    private struct Body: Encodable {
        var purchaseResult: String
        var productId: String
        var appAccountToken: String
        var transactionId: String?
    }

    /// The device endpoint body: `{"purchaseResult", "productId", "appAccountToken"}`, and
    /// `"transactionId"` when the report claims one.
    public var body: [UInt8] {
        let body = Body(
            purchaseResult: purchaseResult,
            productId: productId,
            appAccountToken: appAccountToken,
            transactionId: transactionId
        )
        return Array((try? AppStoreJSON.encoder().encode(body)) ?? Data())
    }
}
