internal import AppStoreModel
import Primitives
internal import Profile

// Family Sharing of non-consumables: the partner's own FAMILY_SHARED transaction, its revocation when the
// purchaser's transaction is refunded, and its reinstatement when that refund is reversed.

extension World {
    /// Family Sharing: the partner gets its own FAMILY_SHARED transaction for the product.
    mutating func share(
        product index: Int,
        from facts: TransactionFacts,
        to partner: Int,
        at t: Double
    ) -> UInt64 {
        let event = newEvent()
        let tx = newTransaction()
        let shared = sharedCopy(of: facts, transaction: tx, partner: partner)
        var truth = Truth(kind: .grant, effectiveDate: facts.signedDate)
        truth.productId = facts.productId
        truth.productType = products[index].type
        truth.transactionId = shared.transactionId
        truth.originalTransactionId = shared.originalTransactionId
        let note = notification(
            type: .oneTimeCharge,
            subtype: nil,
            signedMs: facts.signedDate,
            status: nil,
            shared,
            nil
        )
        emit(.familyShare, account: partner, event: event, at: t + rng.between(0.1, 0.6), .notification(note), truth)
        deliverToDevices(
            shared,
            account: partner,
            purchaser: nil,
            everyDevice: true,
            lifecycle: .familyShare,
            event: event,
            truth: truth,
            at: t,
            cause: nil
        )
        accounts[partner].setOwned(index, true)
        return tx
    }

    /// The purchaser's refund of a shared purchase revokes the partner's `FAMILY_SHARED` transaction too
    /// (`REVOKE`, `FAMILY_REVOKE`): `facts` is the purchaser's revoked transaction.
    mutating func revokeShared(
        _ sharedTransaction: UInt64,
        product index: Int,
        from facts: TransactionFacts,
        purchaser account: Int,
        at t: Double,
        cause: String?
    ) {
        guard let partner = Self.familyPartner(of: account, seed: profile.seed, population: profile.population)
        else { return }
        var shared = sharedCopy(of: facts, transaction: sharedTransaction, partner: partner)
        shared.payload.revocationType = .familyRevoke
        shared.payload.revocationPercentage = nil
        accounts[partner].setOwned(index, false)
        revokeNotification(
            account: partner,
            facts: shared,
            type: .revoke,
            lifecycle: .familyRevoke,
            at: t,
            cause: cause
        )
    }

    /// The reversal of the purchaser's refund reinstates the partner's revoked `FAMILY_SHARED` copy too: the
    /// partner's own `REFUND_REVERSED` for its own transaction, and the product is the partner's again.
    /// `facts` is the purchaser's reinstated transaction.
    mutating func reinstateShared(
        _ sharedTransaction: UInt64,
        product index: Int,
        from facts: TransactionFacts,
        purchaser account: Int,
        at t: Double
    ) {
        guard let partner = Self.familyPartner(of: account, seed: profile.seed, population: profile.population)
        else { return }
        let shared = sharedCopy(of: facts, transaction: sharedTransaction, partner: partner)
        var truth = Truth(kind: .reinstate, effectiveDate: shared.signedDate)
        truth.productId = shared.productId
        truth.productType = products[index].type
        truth.transactionId = shared.transactionId
        truth.originalTransactionId = shared.originalTransactionId
        truth.quantity = Int(shared.quantity)
        accounts[partner].setOwned(index, true)
        let note = notification(
            type: .refundReversed,
            subtype: nil,
            signedMs: shared.signedDate,
            status: nil,
            shared,
            nil
        )
        emit(.refundReversal, account: partner, event: newEvent(), at: t, .notification(note), truth)
    }

    /// The partner's own `FAMILY_SHARED` copy of the purchaser's transaction: its own id, free.
    /// For a subscription, `original` is the partner's own series (its first shared transaction).
    func sharedCopy(
        of facts: TransactionFacts,
        transaction: UInt64,
        original: UInt64? = nil,
        partner: Int
    ) -> TransactionFacts {
        var shared = facts
        shared.transactionId = String(transaction)
        shared.originalTransactionId = String(original ?? transaction)
        shared.payload.inAppOwnershipType = .familyShared
        shared.payload.appAccountToken = token(partner, purchase: original ?? transaction)
        shared.payload.appTransactionId = appTransactionId(partner)
        shared.payload.price = 0
        return shared
    }
}
