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
            type: AppStoreModel.ProductType(rawValue: type),
            appAccountToken: appAccountToken
        )
        p.inAppOwnershipType = InAppOwnershipType(rawValue: inAppOwnershipType)
        p.signedDate = signedDate
        p.revocationReason = revocationReason.map { RevocationReason(rawValue: Int($0)) }
        p.revocationDate = revocationDate
        p.isUpgraded = isUpgraded
        p.offerType = offerType.map { OfferType(rawValue: Int($0)) }
        p.offerIdentifier = offerIdentifier
        p.environment = Environment(rawValue: environment)
        p.storefront = storefront
        p.storefrontId = storefrontId
        p.transactionReason = TransactionReason(rawValue: transactionReason)
        p.currency = currency
        p.price = price
        p.offerDiscountType = offerDiscountType.map { OfferDiscountType(rawValue: $0) }
        p.appTransactionId = appTransactionId
        p.offerPeriod = offerPeriod
        p.revocationType = revocationType.map { RevocationType(rawValue: $0) }
        p.revocationPercentage = revocationPercentage
        return p
    }
}

extension RenewalFacts {
    /// The payload to sign as `signedRenewalInfo`.
    public var payload: JWSRenewalInfoDecodedPayload {
        var p = JWSRenewalInfoDecodedPayload()
        p.expirationIntent = expirationIntent.map { ExpirationIntent(rawValue: Int($0)) }
        p.originalTransactionId = originalTransactionId
        p.autoRenewProductId = autoRenewProductId
        p.productId = productId
        p.autoRenewStatus = AutoRenewStatus(rawValue: Int(autoRenewStatus))
        p.isInBillingRetryPeriod = isInBillingRetryPeriod
        p.priceIncreaseStatus = priceIncreaseStatus.map { PriceIncreaseStatus(rawValue: Int($0)) }
        p.gracePeriodExpiresDate = gracePeriodExpiresDate
        p.offerType = offerType.map { OfferType(rawValue: Int($0)) }
        p.offerIdentifier = offerIdentifier
        p.offerDiscountType = offerDiscountType.map { OfferDiscountType(rawValue: $0) }
        p.signedDate = signedDate
        p.environment = Environment(rawValue: environment)
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
            environment: Environment(rawValue: environment)
        )
        data.signedTransactionInfo = signedTransactionInfo
        data.signedRenewalInfo = signedRenewalInfo
        data.status = status.map { Status(rawValue: Int($0)) }
        data.consumptionRequestReason = consumptionRequestReason.map { ConsumptionRequestReason(rawValue: $0) }
        var p = ResponseBodyV2DecodedPayload(
            notificationType: NotificationTypeV2(rawValue: notificationType),
            subtype: subtype.map { Subtype(rawValue: $0) },
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
