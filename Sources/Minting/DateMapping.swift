public import AppStoreModel

// Every date field of each payload, in one place, so the `dates-in-seconds` forgery cannot miss one.

extension JWSTransactionDecodedPayload {
    /// A copy with every date field passed through `transform`.
    public func mappingDates(_ transform: (Int64) -> Int64) -> Self {
        var copy = self
        copy.purchaseDate = purchaseDate.map(transform)
        copy.originalPurchaseDate = originalPurchaseDate.map(transform)
        copy.expiresDate = expiresDate.map(transform)
        copy.signedDate = signedDate.map(transform)
        copy.revocationDate = revocationDate.map(transform)
        copy.commitmentInfo?.commitmentExpiresDate = commitmentInfo?.commitmentExpiresDate.map(transform)
        return copy
    }
}

extension JWSRenewalInfoDecodedPayload {
    /// A copy with every date field passed through `transform`.
    public func mappingDates(_ transform: (Int64) -> Int64) -> Self {
        var copy = self
        copy.gracePeriodExpiresDate = gracePeriodExpiresDate.map(transform)
        copy.signedDate = signedDate.map(transform)
        copy.recentSubscriptionStartDate = recentSubscriptionStartDate.map(transform)
        copy.renewalDate = renewalDate.map(transform)
        copy.commitmentInfo?.commitmentRenewalDate = commitmentInfo?.commitmentRenewalDate.map(transform)
        return copy
    }
}

extension AppTransaction {
    /// A copy with every date field passed through `transform`.
    public func mappingDates(_ transform: (Int64) -> Int64) -> Self {
        var copy = self
        copy.receiptCreationDate = receiptCreationDate.map(transform)
        copy.originalPurchaseDate = originalPurchaseDate.map(transform)
        copy.preorderDate = preorderDate.map(transform)
        return copy
    }
}
