internal import AppStoreModel
internal import Minting
internal import Primitives
internal import Simulation

/// What `verifyReceipt` adds to the receipt as sent: the App Store's view of its customer at the world's current
/// time, with the renewals and refunds the receipt does not hold yet.
extension AppStoreServerAPI {
    /// `latest_receipt_info` (the newest transaction of each original purchase only when `excludingOld`),
    /// `pending_renewal_info` and `latest_receipt`, a receipt of the current state minted now.
    func latestAnswer(_ receipt: ReadAppReceipt, excludingOld: Bool, now: Int64) -> [String: JSONValue] {
        let (purchases, renewals) = latestState(of: receipt, now: now)
        var latest = purchases
        if excludingOld {
            var newest: [String: JWSTransactionDecodedPayload] = [:]
            for transaction in latest {
                let key = transaction.originalTransactionId ?? transaction.transactionId ?? ""
                if (newest[key]?.purchaseDate ?? .min) <= (transaction.purchaseDate ?? .min) {
                    newest[key] = transaction
                }
            }
            latest = latest.filter { newest[$0.originalTransactionId ?? $0.transactionId ?? ""] == $0 }
        }
        var answer: [String: JSONValue] = [
            "latest_receipt_info": .array(latest.map(Self.receiptPurchase).map(JSONValue.object))
        ]
        if !renewals.isEmpty {
            answer["pending_renewal_info"] = .array(renewals.map(Self.pendingRenewal).map(JSONValue.object))
        }
        let fresh = AppReceipt(
            app: receipt.app,
            inApp: purchases,
            creationDate: now,
            originalApplicationVersion: receipt.originalApplicationVersion ?? "1.0"
        )
        if let base64 = try? fresh.base64(signedBy: minter.pki) { answer["latest_receipt"] = .string(base64) }
        return answer
    }

    /// The purchases of the receipt's customer as the store knows them at `now` (its newest view of each, the
    /// receipt's own view of one it does not know), consumables only those the receipt lists (a finished one
    /// leaves the receipt), in purchase order; and the renewal infos of their subscriptions.
    func latestState(
        of receipt: ReadAppReceipt,
        now: Int64
    ) -> (purchases: [JWSTransactionDecodedPayload], renewals: [JWSRenewalInfoDecodedPayload]) {
        let listed = Set(receipt.inApp.compactMap(\.transactionId))
        return store.withState { state in
            let ids = receipt.inApp.compactMap(\.transactionId)
            let customer = ids.first { state.customerOf[$0] != nil }.flatMap { state.customerOf[$0] }
            let known = customer.map { customer in
                (state.byCustomer[customer] ?? []).compactMap { state.transaction($0, at: now)?.facts.payload }
            }
            var purchases = (known ?? []).filter { $0.type != .consumable || listed.contains($0.transactionId ?? "") }
            let knownIds = Set(purchases.compactMap(\.transactionId))
            purchases += receipt.inApp.filter { !knownIds.contains($0.transactionId ?? "") }
            purchases.sort {
                ($0.purchaseDate ?? 0, $0.transactionId ?? "") < ($1.purchaseDate ?? 0, $1.transactionId ?? "")
            }
            var originals: [String] = []
            var seen: Set<String> = []
            for purchase in purchases where purchase.expiresDate != nil {
                if let original = purchase.originalTransactionId, seen.insert(original).inserted {
                    originals.append(original)
                }
            }
            return (purchases, originals.compactMap { state.renewal($0, at: now) })
        }
    }

    /// One subscription's `pending_renewal_info`: every value a string, flags as `1` or `0`, as Apple writes them.
    static func pendingRenewal(_ renewal: JWSRenewalInfoDecodedPayload) -> [String: JSONValue] {
        var item: [String: JSONValue] = [
            "original_transaction_id": .string(renewal.originalTransactionId ?? ""),
            "product_id": .string(renewal.productId ?? renewal.autoRenewProductId ?? ""),
            "auto_renew_product_id": .string(renewal.autoRenewProductId ?? renewal.productId ?? ""),
            "auto_renew_status": .string(renewal.autoRenewStatus == .on ? "1" : "0"),
        ]
        if let intent = renewal.expirationIntent { item["expiration_intent"] = .string(String(intent.rawValue)) }
        if let retrying = renewal.isInBillingRetryPeriod {
            item["is_in_billing_retry_period"] = .string(retrying ? "1" : "0")
        }
        if let grace = renewal.gracePeriodExpiresDate {
            item.merge(dates("grace_period_expires_date", grace)) { first, _ in first }
        }
        if let consent = renewal.priceIncreaseStatus {
            item["price_consent_status"] = .string(String(consent.rawValue))
        }
        if renewal.offerType == .promotionalOffer, let offer = renewal.offerIdentifier {
            item["promotional_offer_id"] = .string(offer)
        }
        return item
    }
}
