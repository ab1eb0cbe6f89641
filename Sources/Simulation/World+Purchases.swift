internal import AppStoreModel
import Primitives
internal import Profile

// Consumables, non-consumables and non-renewing subscriptions: purchases (also through Ask to Buy), their
// delivery to the account's devices, and device reports that carry no transaction.

extension World {
    /// Buys a product for an account, through Ask to Buy when the fault draws it; false when the account
    /// cannot buy it now (it owns the non-consumable, or is subscribed in the group).
    mutating func buy(product index: Int, account: Int, at t: Double) -> Bool {
        let product = products[index]
        if product.type == .nonConsumable && accounts[account].owns(index) { return false }
        if product.type == .autoRenewable, let group = groupIndex(of: index),
            accounts[account].sub(group).map({ !$0.isOver }) == true || accounts[account].familyMember.contains(group)
        {
            // Subscribed in the group already, by itself or through Family Sharing.
            return false
        }
        let device = rng.below(profile.population.devicesPerAccount)
        if let ask = profile.faults.askToBuy, rng.chance(ask.probability) {
            let (request, effects) = AskToBuy.request(
                product: index,
                device: device,
                approve: rng.chance(ask.approveProbability),
                nonConsumable: product.type == .nonConsumable,
                pendingSeconds: ask.pendingSeconds
            )
            play(effects, of: request, account: account, at: t)
            return true
        }
        return complete(product: index, account: account, device: device, at: t, approval: false)
    }

    /// The group of an auto-renewable product, by index.
    func groupIndex(of product: Int) -> Int? { groupProducts.firstIndex { $0.contains(product) } }

    /// The purchase goes through (directly or after an Ask to Buy approval).
    mutating func complete(product index: Int, account: Int, device: Int, at t: Double, approval: Bool) -> Bool {
        let product = products[index]
        if product.type == .autoRenewable, let group = groupIndex(of: index) {
            if accounts[account].sub(group).map({ !$0.isOver }) == true
                || accounts[account].familyMember.contains(group)
            {
                return false
            }
            subscribe(account: account, group: group, product: index, device: device, at: t, approval: approval)
            return true
        }
        let event = newEvent()
        let tx = newTransaction()
        let quantity: Int32 = product.type == .consumable ? Int32(1 + rng.below(3)) : 1
        let partner = Self.familyPartner(of: account, seed: profile.seed, population: profile.population)
        let (purchase, effects) = OneTimePurchase.purchase(
            product: Int32(index),
            kind: product.type,
            transaction: tx,
            event: event,
            purchaseMs: millis(t),
            quantity: quantity,
            device: device,
            approved: approval,
            familyShares: product.familyShareable && partner != nil
        )
        play(effects, of: purchase, account: account, at: t, cause: approval ? "askToBuy" : nil)
        return true
    }

    /// The transaction on the account's devices: the purchaser's own purchase result at once, and the
    /// `Transaction.updates` of the other devices (of every device when `everyDevice`) a little later.
    mutating func deliverToDevices(
        _ facts: TransactionFacts,
        account: Int,
        purchaser: Int?,
        everyDevice: Bool,
        lifecycle: Lifecycle,
        event: UInt64,
        truth: Truth,
        at t: Double,
        cause: String?
    ) {
        for device in 0..<profile.population.devicesPerAccount {
            let own = device == purchaser
            guard own || everyDevice else { continue }
            let delivery = DeviceDelivery(device: device, source: own ? .purchaseResult : .updates, transaction: facts)
            let when = own ? t : t + rng.between(0.05, 1.0)
            emit(lifecycle, account: account, event: event, at: when, .device(delivery), truth, cause: cause)
        }
    }

    /// A device reports a pending or cancelled purchase: no transaction, nothing to grant.
    mutating func report(account: Int, at t: Double) -> Bool {
        let product = products[rng.below(products.count)]
        let pending = rng.chance(0.5)
        let report = DeviceReport(
            device: rng.below(profile.population.devicesPerAccount),
            purchaseResult: pending ? "pending" : "userCancelled",
            productId: product.id,
            appAccountToken: token(account)
        )
        var truth = Truth(kind: pending ? .pending : .none, effectiveDate: millis(t))
        truth.productId = product.id
        truth.productType = product.type
        emit(.deviceReport, account: account, event: newEvent(), at: t, .report(report), truth)
        return true
    }

}

extension World {
    /// Carries out an Ask to Buy request's effects in order.
    mutating func play(_ effects: [AskToBuy.Effect], of request: AskToBuy, account: Int, at t: Double) {
        let product = products[request.product]
        for effect in effects {
            switch effect {
            case .reportPending:
                let event = newEvent()
                let report = DeviceReport(
                    device: request.device,
                    purchaseResult: "pending",
                    productId: product.id,
                    appAccountToken: token(account)
                )
                emit(
                    .askToBuyPending,
                    account: account,
                    event: event,
                    at: t,
                    .report(report),
                    pending(product, at: t),
                    cause: "askToBuy"
                )
            case .awaitAnswer(let seconds):
                schedule(.askToBuy(account: account, request: request), at: t + seconds)
            case .holdOwnership:
                accounts[account].setOwned(request.product, true)
            case .complete:
                // An answer takes an event number either way.
                _ = newEvent()
                _ = complete(product: request.product, account: account, device: request.device, at: t, approval: true)
            case .markDeclined:
                let event = newEvent()
                emit(
                    .askToBuyDeclined,
                    account: account,
                    event: event,
                    at: t,
                    .marker,
                    pending(product, at: t),
                    cause: "askToBuy"
                )
            }
        }
    }

    /// The truth of an Ask to Buy request that is not answered yet: nothing owed.
    private func pending(_ product: Product, at t: Double) -> Truth {
        var truth = Truth(kind: .pending, effectiveDate: millis(t))
        truth.productId = product.id
        truth.productType = product.type
        return truth
    }
}
