internal import AppStoreModel
import Primitives
internal import Profile

// Carrying out what a one-time purchase asks for: the world signs, numbers, draws and schedules; the machine
// only says what happens next.

extension World {
    /// Carries out a one-time purchase's effects in order; `purchase` is the machine after its event.
    mutating func play(
        _ effects: [OneTimePurchase.Effect],
        of purchase: OneTimePurchase,
        account: Int,
        at t: Double,
        cause: String?
    ) {
        var purchase = purchase
        let index = Int(purchase.product)
        // The purchaser's revoked (or reinstated) transaction, which the partner's copy repeats.
        var revokedFacts: TransactionFacts?
        var reinstatedFacts: TransactionFacts?
        for effect in effects {
            switch effect {
            case .announce(let event, let device, let approved):
                announce(purchase, account: account, event: event, purchaser: approved ? nil : device, at: t)
            case .holdOwnership:
                accounts[account].setOwned(index, true)
            case .releaseOwnership:
                accounts[account].setOwned(index, false)
            case .shareWithFamily:
                guard let partner = Self.familyPartner(of: account, seed: profile.seed, population: profile.population)
                else { continue }
                let facts = purchaseTransaction(account: account, ref: purchase, signedMs: purchase.purchaseMs)
                purchase.recordFamilyCopy(share(product: index, from: facts, to: partner, at: t))
            case .remember:
                accounts[account].remember(purchase)
            case .drawMidStreamRefund:
                if let mid = profile.faults.refundMidStream, rng.chance(mid.probability) {
                    schedule(.refund(account: account), at: t + rng.between(0, 1.0))
                }
            case .moveToRefunded:
                accounts[account].forget(purchase.transaction)
                accounts[account].rememberRefund(purchase)
            case .notifyRefund:
                var facts = purchaseTransaction(account: account, ref: purchase, signedMs: millis(t))
                revoked(&facts, at: millis(t))
                revokeNotification(
                    account: account,
                    facts: facts,
                    type: .refund,
                    lifecycle: .refund,
                    at: t,
                    cause: cause
                )
                revokedFacts = facts
            case .revokeFamilyCopy(let shared):
                guard let revokedFacts else { continue }
                revokeShared(shared, product: index, from: revokedFacts, purchaser: account, at: t, cause: cause)
            case .restore:
                accounts[account].restore(purchase)
            case .notifyReversal:
                reinstatedFacts = announceReversal(purchase, account: account, at: t)
            case .reinstateFamilyCopy(let shared):
                guard let reinstatedFacts else { continue }
                reinstateShared(shared, product: index, from: reinstatedFacts, purchaser: account, at: t)
            }
        }
    }

    /// The purchase on the account's devices (the purchaser's own result on `purchaser`) and its
    /// `ONE_TIME_CHARGE`; an Ask to Buy approval has no purchaser device and is caused by the request.
    private mutating func announce(
        _ purchase: OneTimePurchase,
        account: Int,
        event: UInt64,
        purchaser: Int?,
        at t: Double
    ) {
        let product = products[Int(purchase.product)]
        let now = purchase.purchaseMs
        let facts = purchaseTransaction(account: account, ref: purchase, signedMs: now)
        let truth = purchaseTruth(.grant, of: purchase, facts, signedMs: now)
        let lifecycle: Lifecycle = purchaser == nil ? .askToBuyApproved : .purchase
        let cause = purchaser == nil ? "askToBuy" : nil
        deliverToDevices(
            facts,
            account: account,
            purchaser: purchaser,
            everyDevice: product.type != .consumable,
            lifecycle: lifecycle,
            event: event,
            truth: truth,
            at: t,
            cause: cause
        )
        let note = notification(type: .oneTimeCharge, subtype: nil, signedMs: now, status: nil, facts, nil)
        emit(
            lifecycle,
            account: account,
            event: event,
            at: t + rng.between(0.05, 0.5),
            .notification(note),
            truth,
            cause: cause
        )
    }

    /// A reversed refund's `REFUND_REVERSED`: the purchase is owed again (a non-renewing subscription for
    /// what remains of its catalog period).
    /// - Returns: the reinstated transaction, which a partner's shared copy repeats.
    private mutating func announceReversal(
        _ purchase: OneTimePurchase,
        account: Int,
        at t: Double
    ) -> TransactionFacts {
        let now = millis(t)
        let facts = purchaseTransaction(account: account, ref: purchase, signedMs: now)
        let truth = purchaseTruth(.reinstate, of: purchase, facts, signedMs: now)
        let note = notification(type: .refundReversed, subtype: nil, signedMs: now, status: nil, facts, nil)
        emit(.refundReversal, account: account, event: newEvent(), at: t, .notification(note), truth)
        return facts
    }

    /// What a purchase owes from `signedMs` (a grant, a reinstatement): its units, and a non-renewing
    /// subscription until the end of its catalog period from the purchase.
    private func purchaseTruth(
        _ kind: Truth.Kind,
        of purchase: OneTimePurchase,
        _ facts: TransactionFacts,
        signedMs: Int64
    ) -> Truth {
        let product = products[Int(purchase.product)]
        var truth = Truth(kind: kind, effectiveDate: signedMs)
        truth.productId = product.id
        truth.productType = product.type
        truth.transactionId = facts.transactionId
        truth.originalTransactionId = facts.originalTransactionId
        truth.quantity = Int(purchase.quantity)
        if product.type == .nonRenewing {
            truth.expiresDate = purchase.purchaseMs + Int64(product.periodSeconds * 1000)
        }
        return truth
    }
}
