internal import AppStoreModel
import Primitives
internal import Profile

// The Apple payloads the world signs (transactions, renewal info, notifications) and the truth of subscriptions.

extension World {
    func appTransactionId(_ account: Int) -> String { String(identities.transactionBase / 10 + UInt64(account)) }

    /// The `appAccountToken` a purchase carries: the account's, or none for the share of purchases the app makes
    /// without one (`population.withoutAccountTokenFraction`).
    ///
    /// Decided by the purchase's original transaction, so its renewals, refunds and every later signing agree,
    /// and derived from the seed alone (as Family Sharing partners are), not drawn from the generator: the
    /// share changes which payloads carry a token and nothing else, and a share of 0 leaves worlds as they were.
    func token(_ account: Int, purchase original: UInt64) -> String? {
        let share = profile.population.withoutAccountTokenFraction
        guard share > 0 else { return token(account) }
        // The purchase's number in the run, the same in every namespace.
        let number = original &- identities.transactionBase
        let draw = Double(SplitMix64.mix(profile.seed ^ 0x70CE_0000_0000_0A70 ^ number) >> 11) * 0x1.0p-53
        return draw < share ? nil : token(account)
    }

    mutating func transaction(
        account: Int,
        product index: Int,
        id: UInt64,
        original: UInt64,
        originalMs: Int64,
        purchaseMs: Int64,
        quantity: Int32,
        price: Int64,
        signedMs: Int64
    ) -> TransactionFacts {
        let product = products[index]
        let target = profile.target
        let catalog = profile.catalog
        return TransactionFacts(
            JWSTransactionDecodedPayload(
                originalTransactionId: String(original),
                transactionId: String(id),
                bundleId: target.bundleId,
                productId: product.id,
                purchaseDate: purchaseMs,
                originalPurchaseDate: originalMs,
                quantity: quantity,
                type: product.type.productType,
                appAccountToken: token(account, purchase: original),
                inAppOwnershipType: .purchased,
                signedDate: signedMs,
                environment: target.environment,
                storefront: catalog.storefront,
                storefrontId: catalog.storefrontId,
                transactionReason: .purchase,
                currency: catalog.currency,
                price: price,
                appTransactionId: appTransactionId(account)
            )
        )
    }

    mutating func purchaseTransaction(account: Int, ref: OneTimePurchase, signedMs: Int64) -> TransactionFacts {
        let product = products[Int(ref.product)]
        return transaction(
            account: account,
            product: Int(ref.product),
            id: ref.transaction,
            original: ref.transaction,
            originalMs: ref.purchaseMs,
            purchaseMs: ref.purchaseMs,
            quantity: ref.quantity,
            price: product.priceMilli * Int64(ref.quantity),
            signedMs: signedMs
        )
    }

    mutating func subscriptionTransaction(
        account: Int,
        group: Int,
        reason: TransactionReason?,
        signedMs: Int64
    )
        -> TransactionFacts
    {
        subscriptionTransaction(
            account: account,
            group: group,
            sub: accounts[account].sub(group)!,
            reason: reason,
            signedMs: signedMs
        )
    }

    /// The transaction of the period before the current one, as Apple signs it at `signedMs`.
    mutating func previousTransaction(account: Int, group: Int, signedMs: Int64) -> TransactionFacts? {
        guard let old = accounts[account].sub(group)?.previousPeriod else { return nil }
        return subscriptionTransaction(account: account, group: group, sub: old, reason: nil, signedMs: signedMs)
    }

    mutating func subscriptionTransaction(
        account: Int,
        group: Int,
        sub: SubscriptionLifecycle,
        reason: TransactionReason?,
        signedMs: Int64
    ) -> TransactionFacts {
        let index = groupProducts[group][Int(sub.position)]
        let product = products[index]
        var price = product.priceMilli
        if sub.priceBumped { price = price * 6 / 5 }
        var facts = transaction(
            account: account,
            product: index,
            id: sub.transaction,
            original: sub.original,
            originalMs: sub.originalMs,
            purchaseMs: sub.purchaseMs,
            quantity: 1,
            price: price,
            signedMs: signedMs
        )
        facts.payload.webOrderLineItemId = String(sub.webOrder)
        facts.payload.subscriptionGroupIdentifier = profile.catalog.groups[group].id
        facts.payload.expiresDate = sub.expiresMs
        facts.payload.transactionReason =
            reason ?? (sub.transaction == sub.original || sub.upgradedFrom != nil ? .purchase : .renewal)
        if let index = sub.offer, Int(index) < product.offers.count {
            let offer = product.offers[Int(index)]
            facts.payload.offerType = offer.kind.offerType
            facts.payload.offerIdentifier = offer.kind == .introductory ? nil : offer.id
            facts.payload.offerDiscountType = offer.discount.offerDiscountType
            facts.payload.offerPeriod = "P\(offer.periods)M"
            facts.payload.price = offer.priceMilli
        }
        if sub.status == .revoked {
            facts.payload.revocationDate = sub.revocationMs
            facts.payload.revocationReason = sub.revocationReason
            facts.payload.revocationType = .refundFull
            facts.payload.revocationPercentage = 100_000
        }
        return facts
    }

    func renewal(account: Int, group: Int, signedMs: Int64) -> JWSRenewalInfoDecodedPayload {
        let sub = accounts[account].sub(group)!
        let current = products[groupProducts[group][Int(sub.position)]]
        let next = products[groupProducts[group][Int(sub.autoRenewPosition)]]
        var renewalPrice = next.priceMilli
        if sub.priceBumped || sub.priceIncrease != .notAnnounced { renewalPrice = renewalPrice * 6 / 5 }
        var facts = JWSRenewalInfoDecodedPayload(
            originalTransactionId: String(sub.original),
            autoRenewProductId: next.id,
            productId: current.id,
            autoRenewStatus: sub.autoRenew ? 1 : 0,
            signedDate: signedMs,
            environment: profile.target.environment,
            recentSubscriptionStartDate: sub.recentStartMs,
            renewalDate: sub.isOver ? nil : sub.expiresMs,
            currency: profile.catalog.currency,
            renewalPrice: renewalPrice,
            appAccountToken: token(account, purchase: sub.original),
            appTransactionId: appTransactionId(account)
        )
        switch sub.status {
        case .gracePeriod:
            facts.isInBillingRetryPeriod = true
            facts.gracePeriodExpiresDate = sub.graceExpiresMs
            facts.expirationIntent = ExpirationIntent.billingError
        case .billingRetry:
            facts.isInBillingRetryPeriod = true
            facts.expirationIntent = ExpirationIntent.billingError
        case .expired:
            facts.isInBillingRetryPeriod = false
            facts.expirationIntent = sub.expirationIntent
            // A lapsed subscriber is eligible for the product's win-back offers (a resubscription may redeem one).
            let winBack = current.offers.filter { $0.kind == .winBack }.map(\.id)
            facts.eligibleWinBackOfferIds = winBack.isEmpty ? nil : winBack
        case .active, .revoked:
            // Apple says so outright rather than leaving the key out, as `paystorm mint` does.
            facts.isInBillingRetryPeriod = false
        }
        switch sub.priceIncrease {
        case .notAnnounced: break
        case .pending: facts.priceIncreaseStatus = 0
        case .accepted: facts.priceIncreaseStatus = 1
        }
        if let index = sub.pendingOffer, Int(index) < next.offers.count {
            let offer = next.offers[Int(index)]
            facts.offerType = offer.kind.offerType
            facts.offerIdentifier = offer.id
            facts.offerDiscountType = offer.discount.offerDiscountType
            facts.renewalPrice = offer.priceMilli
        }
        return facts
    }

    func subscriptionTruth(account: Int, group: Int, kind: Truth.Kind, signedMs: Int64) -> Truth {
        let sub = accounts[account].sub(group)!
        let product = products[groupProducts[group][Int(sub.position)]]
        var truth = Truth(kind: kind, effectiveDate: signedMs)
        truth.productId = product.id
        truth.productType = .autoRenewable
        truth.transactionId = String(sub.transaction)
        truth.originalTransactionId = String(sub.original)
        truth.groupId = profile.catalog.groups[group].id
        truth.expiresDate = sub.expiresMs
        truth.gracePeriodExpiresDate = sub.status == .gracePeriod ? sub.graceExpiresMs : nil
        truth.status = sub.status
        return truth
    }

    mutating func notification(
        type: NotificationTypeV2,
        subtype: Subtype?,
        signedMs: Int64,
        status: Status?,
        _ transaction: TransactionFacts?,
        _ renewal: JWSRenewalInfoDecodedPayload?
    ) -> NotificationFacts {
        let target = profile.target
        let data = NotificationData(
            appAppleId: target.appAppleId,
            bundleId: target.bundleId,
            environment: target.environment,
            status: status
        )
        return NotificationFacts(
            ResponseBodyV2DecodedPayload(
                notificationType: type,
                subtype: subtype,
                notificationUUID: newUUID(),
                data: data,
                version: "2.0",
                signedDate: signedMs
            ),
            transaction: transaction,
            renewal: renewal
        )
    }
}
