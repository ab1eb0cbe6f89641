public import Profile

/// The seeded, deterministic App Store and its devices: a lazy, time-ordered stream of ``Action``s.
///
/// Memory grows with the number of accounts (a few dozen bytes each, more for active subscriptions) and with
/// the events in flight, never with the number of actions already produced, so a run of 1,000,000 accounts
/// and 10,000,000 actions streams in constant memory per account.
///
/// Time is real time with compressed periods: an action's ``Action/at`` is seconds since the run started,
/// and every minted date is `startMillis + at`, so the target's clock agrees with the payloads.
///
/// ```swift
/// var world = World(profile: profile, startMillis: Int64(Date().timeIntervalSince1970 * 1000))
/// while let action = world.next() { send(action) }
/// ```
public struct World: Sequence, IteratorProtocol, Sendable {
    /// The profile the world was made from.
    public let profile: Profile
    /// Wall-clock milliseconds at the start of the run (t = 0).
    public let startMillis: Int64

    private var rng: SplitMix64
    private var accounts: [AccountState]
    private var queue = Heap<TimedEntry<Job>>()
    private var arrivals: ArrivalTimes
    private var nextArrival: Double
    private var order: UInt64 = 0
    private var emitted: UInt64 = 0
    private var events: UInt64 = 0
    private var transactions: UInt64 = 0
    private var webOrders: UInt64 = 0
    private let transactionBase: UInt64
    private let duration: Double
    private let products: [Product]
    private let groupProducts: [[Int]]
    private let buyKinds: [(Int, ProductKind)]

    /// Creates the world of a profile.
    /// - Parameters:
    ///   - profile: the validated profile (its seed seeds the generator).
    ///   - startMillis: wall-clock milliseconds of t = 0; pass a fixed value to reproduce a stream exactly.
    public init(profile: Profile, startMillis: Int64) {
        self.profile = profile
        self.startMillis = startMillis
        rng = SplitMix64(seed: profile.seed)
        accounts = Array(repeating: AccountState(), count: profile.population.accounts)
        duration = profile.durationSeconds
        arrivals = ArrivalTimes(profile.schedule)
        nextArrival = arrivals.next() ?? .infinity
        products = profile.catalog.products
        groupProducts = profile.catalog.groups.map { group in
            profile.catalog.products.indices.filter {
                profile.catalog.products[$0].type == .autoRenewable && profile.catalog.products[$0].group == group.id
            }.sorted { profile.catalog.products[$0].level < profile.catalog.products[$1].level }
        }
        buyKinds = [(0, .consumable), (1, .nonConsumable), (2, .autoRenewable), (3, .nonRenewing)]
        transactionBase = 1_000_000_000_000_000 + (SplitMix64.mix(profile.seed) % 900_000) * 1_000_000_000
    }

    /// The `appAccountToken` of an account: a UUID derived from the seed and the index, without storage.
    public static func appAccountToken(seed: UInt64, account: Int) -> String {
        let a = SplitMix64.mix(seed ^ 0x5EED_0F0A_CC00_0000 ^ UInt64(account))
        return SplitMix64.uuid(a, SplitMix64.mix(a ^ UInt64(account)))
    }

    /// The account index of a token of this world, if it is one (searches linearly; for tests and replay).
    public func account(of token: String) -> Int? {
        accounts.indices.first { Self.appAccountToken(seed: profile.seed, account: $0) == token }
    }

    /// The Family Sharing partner of an account, if it shares (accounts pair as 2k and 2k+1).
    public static func familyPartner(of account: Int, seed: UInt64, population: Population) -> Int? {
        let pair = account / 2
        let partner = account ^ 1
        guard partner < population.accounts else { return nil }
        let draw = Double(SplitMix64.mix(seed ^ 0xFA41_1700 ^ UInt64(pair)) >> 11) * 0x1.0p-53
        return draw < population.familySharingFraction ? partner : nil
    }

    /// Milliseconds of wall-clock time at `t` seconds into the run.
    public func millis(_ t: Double) -> Int64 { startMillis + Int64((t * 1000).rounded()) }

    /// The next action in time order, or nil when the schedule is over.
    public mutating func next() -> Action? {
        while true {
            let arrivalDue = nextArrival < duration
            if let top = queue.first, !arrivalDue || top.at <= nextArrival {
                let item = queue.pop()!
                if case .emit(var action) = item.payload {
                    action.sequence = emitted
                    emitted += 1
                    return action
                }
                run(item.payload, at: item.at)
                continue
            }
            guard arrivalDue else { return nil }
            let t = nextArrival
            nextArrival = arrivals.next() ?? .infinity
            arrive(at: t)
        }
    }

    // MARK: - Arrivals

    private mutating func arrive(at t: Double) {
        let account = rng.below(accounts.count)
        let choice = rng.weighted(profile.actionMix.weights)
        if perform(choice, account: account, at: t) { return }
        // Not possible for this account now (nothing to cancel, already subscribed...): buy something instead.
        let mix = profile.actionMix
        let buyWeights = [mix.consumable, mix.nonConsumable, mix.subscribe, mix.nonRenewing]
        guard buyWeights.contains(where: { $0 > 0 }) else { return }
        _ = perform(rng.weighted(buyWeights), account: account, at: t)
    }

    /// Performs the action of `ActionMix.keys[choice]`; false when it does not apply to the account now.
    private mutating func perform(_ choice: Int, account: Int, at t: Double) -> Bool {
        switch choice {
        case 0...3:
            let type = buyKinds[choice].1
            let candidates = products.indices.filter { products[$0].type == type }
            guard !candidates.isEmpty else { return false }
            return buy(product: candidates[rng.below(candidates.count)], account: account, at: t)
        case 4: return changeAutoRenew(account: account, enable: false, at: t)
        case 5: return changeAutoRenew(account: account, enable: true, at: t)
        case 6: return changeLevel(account: account, upgrade: true, at: t)
        case 7: return changeLevel(account: account, upgrade: false, at: t)
        case 8: return refund(account: account, at: t, cause: nil)
        case 9: return reverseRefund(account: account, at: t)
        case 10: return armBillingFailure(account: account, at: t)
        case 11: return redeemOffer(account: account, at: t)
        case 12: return announcePriceIncrease(account: account, at: t)
        case 13: return report(account: account, at: t)
        default: return extendRenewal(account: account, at: t)
        }
    }

    // MARK: - Scheduling

    private mutating func schedule(_ job: Job, at t: Double) {
        if case .emit = job {} else if t >= duration { return }
        order += 1
        queue.push(TimedEntry(at: t, order: order, payload: job))
    }

    private mutating func emit(
        _ lifecycle: Lifecycle,
        account: Int,
        event: UInt64,
        at t: Double,
        _ delivery: Delivery,
        _ truth: Truth,
        cause: String? = nil
    ) {
        let action = Action(
            sequence: 0,
            event: event,
            at: t,
            account: account,
            appAccountToken: token(account),
            lifecycle: lifecycle,
            delivery: delivery,
            truth: truth,
            causedBy: cause
        )
        schedule(.emit(action), at: t)
    }

    private mutating func newEvent() -> UInt64 {
        events += 1
        return events
    }

    private mutating func newTransaction() -> UInt64 {
        transactions += 1
        return transactionBase + transactions
    }

    private mutating func newWebOrder() -> UInt64 {
        webOrders += 1
        return transactionBase / 1000 + webOrders
    }

    private func token(_ account: Int) -> String { Self.appAccountToken(seed: profile.seed, account: account) }

    private mutating func run(_ job: Job, at t: Double) {
        switch job {
        case .emit: break
        case .renew(let account, let group, let version):
            guard let sub = accounts[account].sub(group), sub.version == version else { return }
            if !sub.autoRenew {
                expire(account: account, group: group, intent: 1, subtype: "VOLUNTARY", at: t)
            } else if sub.priceIncrease == 1 {
                expire(account: account, group: group, intent: 3, subtype: "PRICE_INCREASE", at: t)
            } else if sub.failNext {
                failRenewal(account: account, group: group, at: t)
            } else {
                renew(account: account, group: group, at: t, recovery: false)
            }
        case .recover(let account, let group, let version):
            guard let sub = accounts[account].sub(group), sub.version == version,
                sub.status == .billingRetry || sub.status == .gracePeriod
            else { return }
            renew(account: account, group: group, at: t, recovery: true)
        case .graceEnd(let account, let group, let version):
            guard var sub = accounts[account].sub(group), sub.version == version, sub.status == .gracePeriod else {
                return
            }
            sub.status = .billingRetry
            accounts[account].setSub(group, sub)
            subscriptionNotification(
                account: account,
                group: group,
                type: "GRACE_PERIOD_EXPIRED",
                subtype: nil,
                lifecycle: .gracePeriodExpired,
                truth: .subscriptionStatus,
                at: t
            )
        case .retryEnd(let account, let group, let version):
            guard let sub = accounts[account].sub(group), sub.version == version,
                sub.status == .billingRetry || sub.status == .gracePeriod
            else { return }
            expire(account: account, group: group, intent: 2, subtype: "BILLING_RETRY", at: t)
        case .priceConsent(let account, let group, let version):
            guard var sub = accounts[account].sub(group), sub.version == version, sub.priceIncrease == 1,
                rng.chance(0.5)
            else { return }
            sub.priceIncrease = 2
            accounts[account].setSub(group, sub)
            subscriptionNotification(
                account: account,
                group: group,
                type: "PRICE_INCREASE",
                subtype: "ACCEPTED",
                lifecycle: .priceIncreaseAccepted,
                truth: .none,
                at: t
            )
        case .askToBuy(let account, let product, let device, let approve):
            let event = newEvent()
            guard approve else {
                var truth = Truth(kind: .pending, effectiveDate: millis(t))
                truth.productId = products[product].id
                truth.productType = products[product].type
                emit(.askToBuyDeclined, account: account, event: event, at: t, .marker, truth, cause: "askToBuy")
                return
            }
            _ = complete(product: product, account: account, device: device, at: t, approval: true)
        case .refund(let account):
            _ = refund(account: account, at: t, cause: "refundMidStream", latestOnly: true)
        case .refundDecision(let account, let group, let transaction, let approve):
            decideRefund(account: account, group: group, transaction: transaction, approve: approve, at: t)
        }
    }

    // MARK: - Purchases

    private mutating func buy(product index: Int, account: Int, at t: Double) -> Bool {
        let product = products[index]
        if product.type == .nonConsumable && accounts[account].owns(index) { return false }
        if product.type == .autoRenewable, let group = groupIndex(of: index),
            let sub = accounts[account].sub(group), sub.status != .expired && sub.status != .revoked
        {
            return false
        }
        let device = rng.below(profile.population.devicesPerAccount)
        if let ask = profile.faults.askToBuy, rng.chance(ask.probability) {
            let approve = rng.chance(ask.approveProbability)
            let event = newEvent()
            var truth = Truth(kind: .pending, effectiveDate: millis(t))
            truth.productId = product.id
            truth.productType = product.type
            let report = DeviceReport(
                device: device,
                purchaseResult: "pending",
                productId: product.id,
                appAccountToken: token(account)
            )
            emit(.askToBuyPending, account: account, event: event, at: t, .report(report), truth, cause: "askToBuy")
            schedule(
                .askToBuy(account: account, product: index, device: device, approve: approve),
                at: t + ask.pendingSeconds
            )
            if product.type == .nonConsumable { accounts[account].setOwned(index, true) }
            return true
        }
        return complete(product: index, account: account, device: device, at: t, approval: false)
    }

    private func groupIndex(of product: Int) -> Int? { groupProducts.firstIndex { $0.contains(product) } }

    /// The purchase goes through (directly or after an Ask to Buy approval).
    private mutating func complete(product index: Int, account: Int, device: Int, at t: Double, approval: Bool) -> Bool
    {
        let product = products[index]
        if product.type == .autoRenewable, let group = groupIndex(of: index) {
            if let sub = accounts[account].sub(group), sub.status != .expired && sub.status != .revoked {
                return false
            }
            subscribe(account: account, group: group, product: index, device: device, at: t, approval: approval)
            return true
        }
        let event = newEvent()
        let tx = newTransaction()
        let quantity: Int32 = product.type == .consumable ? Int32(1 + rng.below(3)) : 1
        let now = millis(t)
        let facts = transaction(
            account: account,
            product: index,
            id: tx,
            original: tx,
            originalMs: now,
            purchaseMs: now,
            quantity: quantity,
            price: product.priceMilli * Int64(quantity),
            signedMs: now
        )
        var truth = Truth(kind: .grant, effectiveDate: now)
        truth.productId = product.id
        truth.productType = product.type
        truth.transactionId = facts.transactionId
        truth.originalTransactionId = facts.originalTransactionId
        truth.quantity = Int(quantity)
        if product.type == .nonRenewing { truth.expiresDate = now + Int64(product.periodSeconds * 1000) }
        let lifecycle: Lifecycle = approval ? .askToBuyApproved : .purchase
        let cause = approval ? "askToBuy" : nil
        deliverToDevices(
            facts,
            account: account,
            purchaser: approval ? nil : device,
            everyDevice: product.type != .consumable,
            lifecycle: lifecycle,
            event: event,
            truth: truth,
            at: t,
            cause: cause
        )
        let note = notification(type: "ONE_TIME_CHARGE", subtype: nil, signedMs: now, status: nil, facts, nil)
        emit(
            lifecycle,
            account: account,
            event: event,
            at: t + rng.between(0.05, 0.5),
            .notification(note),
            truth,
            cause: cause
        )
        var ref = PurchaseRef(product: Int32(index), transaction: tx, purchaseMs: now, quantity: quantity, shared: 0)
        if product.type == .nonConsumable {
            accounts[account].setOwned(index, true)
            if product.familyShareable,
                let partner = Self.familyPartner(of: account, seed: profile.seed, population: profile.population)
            {
                ref.shared = share(product: index, from: facts, to: partner, at: t)
            }
        }
        accounts[account].remember(ref)
        if let mid = profile.faults.refundMidStream, rng.chance(mid.probability) {
            schedule(.refund(account: account), at: t + rng.between(0, 1.0))
        }
        return true
    }

    /// Family Sharing: the partner gets its own FAMILY_SHARED transaction for the product.
    private mutating func share(
        product index: Int,
        from facts: TransactionFacts,
        to partner: Int,
        at t: Double
    ) -> UInt64 {
        let event = newEvent()
        let tx = newTransaction()
        var shared = facts
        shared.transactionId = String(tx)
        shared.originalTransactionId = String(tx)
        shared.inAppOwnershipType = "FAMILY_SHARED"
        shared.appAccountToken = token(partner)
        shared.appTransactionId = appTransactionId(partner)
        shared.price = 0
        var truth = Truth(kind: .grant, effectiveDate: facts.signedDate)
        truth.productId = facts.productId
        truth.productType = products[index].type
        truth.transactionId = shared.transactionId
        truth.originalTransactionId = shared.originalTransactionId
        let note = notification(
            type: "ONE_TIME_CHARGE",
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

    private mutating func deliverToDevices(
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

    // MARK: - Subscriptions

    private mutating func subscribe(account: Int, group: Int, product: Int, device: Int, at t: Double, approval: Bool) {
        let previous = accounts[account].sub(group)
        let now = millis(t)
        let tx = newTransaction()
        var sub = previous ?? SubState(original: tx, originalMs: now)
        if previous != nil, now - sub.expiresMs > Int64(profile.timeCompression.seconds(days: 60) * 1000) {
            sub.recentStartMs = now
        }
        sub.position = Int32(groupProducts[group].firstIndex(of: product)!)
        sub.autoRenewPosition = sub.position
        sub.autoRenew = true
        sub.status = .active
        sub.failNext = false
        sub.priceIncrease = 0
        sub.transaction = tx
        sub.webOrder = newWebOrder()
        sub.purchaseMs = now
        sub.expiresMs = now + Int64(products[product].periodSeconds * 1000)
        sub.offer = -1
        sub.offerRemaining = 0
        sub.pendingOffer = -1
        sub.upgradedFrom = 0
        sub.previous = nil
        if !accounts[account].introUsed(group),
            let intro = products[product].offers.firstIndex(where: { $0.kind == .introductory })
        {
            sub.offer = Int8(intro)
            sub.offerRemaining = Int8(products[product].offers[intro].periods)
            accounts[account].setIntroUsed(group)
        }
        if previous != nil, sub.offer < 0,
            let winBack = products[product].offers.firstIndex(where: { $0.kind == .winBack }), rng.chance(0.5)
        {
            // A win-back offer brings a lapsed subscriber back at a discount (RESUBSCRIBE, offerType 4).
            sub.offer = Int8(winBack)
            sub.offerRemaining = Int8(products[product].offers[winBack].periods)
        }
        sub.version &+= 1
        accounts[account].setSub(group, sub)
        schedule(.renew(account: account, group: group, version: sub.version), at: seconds(sub.expiresMs))
        let subtype = previous == nil ? "INITIAL_BUY" : "RESUBSCRIBE"
        let lifecycle: Lifecycle = approval ? .askToBuyApproved : (previous == nil ? .subscribe : .resubscribe)
        let event = newEvent()
        let facts = subscriptionTransaction(account: account, group: group, reason: "PURCHASE", signedMs: now)
        let truth = subscriptionTruth(account: account, group: group, kind: .grant, signedMs: now)
        deliverToDevices(
            facts,
            account: account,
            purchaser: approval ? nil : device,
            everyDevice: true,
            lifecycle: lifecycle,
            event: event,
            truth: truth,
            at: t,
            cause: approval ? "askToBuy" : nil
        )
        let note = notification(
            type: "SUBSCRIBED",
            subtype: subtype,
            signedMs: now,
            status: SubscriptionStatus.active.rawValue,
            facts,
            renewal(account: account, group: group, signedMs: now)
        )
        emit(
            lifecycle,
            account: account,
            event: event,
            at: t + rng.between(0.05, 0.5),
            .notification(note),
            truth,
            cause: approval ? "askToBuy" : nil
        )
        if let mid = profile.faults.refundMidStream, rng.chance(mid.probability) {
            schedule(.refund(account: account), at: t + rng.between(0, 1.0))
        }
    }

    private func seconds(_ ms: Int64) -> Double { Double(ms - startMillis) / 1000 }

    private mutating func renew(account: Int, group: Int, at t: Double, recovery: Bool) {
        guard var sub = accounts[account].sub(group) else { return }
        let now = millis(t)
        sub.previous = Period(
            transaction: sub.transaction,
            webOrder: sub.webOrder,
            purchaseMs: sub.purchaseMs,
            expiresMs: sub.expiresMs,
            position: sub.position,
            offer: sub.offer,
            priceBumped: sub.priceBumped
        )
        // A pending offer belongs to the auto-renew product, which the renewal makes current.
        sub.position = sub.autoRenewPosition
        sub.transaction = newTransaction()
        sub.webOrder = newWebOrder()
        sub.purchaseMs = recovery ? now : sub.expiresMs
        let product = groupProducts[group][Int(sub.position)]
        sub.expiresMs = sub.purchaseMs + Int64(products[product].periodSeconds * 1000)
        sub.status = .active
        sub.graceExpiresMs = 0
        sub.upgradedFrom = 0
        if sub.pendingOffer >= 0 {
            sub.offer = sub.pendingOffer
            sub.offerRemaining = Int8(products[product].offers[Int(sub.pendingOffer)].periods)
            sub.pendingOffer = -1
        } else if sub.offerRemaining > 1 {
            sub.offerRemaining -= 1
        } else {
            sub.offer = -1
            sub.offerRemaining = 0
        }
        if sub.priceIncrease == 2 { sub.priceBumped = true }
        sub.priceIncrease = 0
        sub.version &+= 1
        accounts[account].setSub(group, sub)
        schedule(.renew(account: account, group: group, version: sub.version), at: seconds(sub.expiresMs))
        let event = newEvent()
        let facts = subscriptionTransaction(account: account, group: group, reason: "RENEWAL", signedMs: now)
        let truth = subscriptionTruth(account: account, group: group, kind: .grant, signedMs: now)
        let lifecycle: Lifecycle = recovery ? .billingRecovery : .renewal
        deliverToDevices(
            facts,
            account: account,
            purchaser: nil,
            everyDevice: true,
            lifecycle: lifecycle,
            event: event,
            truth: truth,
            at: t,
            cause: nil
        )
        let note = notification(
            type: "DID_RENEW",
            subtype: recovery ? "BILLING_RECOVERY" : nil,
            signedMs: now,
            status: SubscriptionStatus.active.rawValue,
            facts,
            renewal(account: account, group: group, signedMs: now)
        )
        emit(lifecycle, account: account, event: event, at: t + rng.between(0.0, 0.3), .notification(note), truth)
    }

    private mutating func failRenewal(account: Int, group: Int, at t: Double) {
        guard var sub = accounts[account].sub(group) else { return }
        let config = profile.catalog.groups[group]
        sub.failNext = false
        let grace = config.gracePeriodSeconds > 0
        sub.status = grace ? .gracePeriod : .billingRetry
        sub.graceExpiresMs = grace ? sub.expiresMs + Int64(config.gracePeriodSeconds * 1000) : 0
        sub.version &+= 1
        accounts[account].setSub(group, sub)
        let start = seconds(sub.expiresMs)
        if rng.chance(0.5) {
            schedule(
                .recover(account: account, group: group, version: sub.version),
                at: start + rng.between(0.1, 0.9) * config.billingRetrySeconds
            )
        } else {
            schedule(
                .retryEnd(account: account, group: group, version: sub.version),
                at: start + config.billingRetrySeconds
            )
        }
        if grace {
            schedule(
                .graceEnd(account: account, group: group, version: sub.version),
                at: start + config.gracePeriodSeconds
            )
        }
        subscriptionNotification(
            account: account,
            group: group,
            type: "DID_FAIL_TO_RENEW",
            subtype: grace ? "GRACE_PERIOD" : nil,
            lifecycle: .renewalFailure,
            truth: .subscriptionStatus,
            at: t
        )
    }

    private mutating func expire(account: Int, group: Int, intent: Int32, subtype: String, at t: Double) {
        guard var sub = accounts[account].sub(group) else { return }
        sub.status = .expired
        sub.expirationIntent = intent
        sub.autoRenew = false
        sub.graceExpiresMs = 0
        sub.version &+= 1
        accounts[account].setSub(group, sub)
        subscriptionNotification(
            account: account,
            group: group,
            type: "EXPIRED",
            subtype: subtype,
            lifecycle: .expiry,
            truth: .subscriptionStatus,
            at: t
        )
    }

    /// A notification about the current subscription transaction (no new transaction), to the webhook only.
    private mutating func subscriptionNotification(
        account: Int,
        group: Int,
        type: String,
        subtype: String?,
        lifecycle: Lifecycle,
        truth kind: Truth.Kind,
        at t: Double,
        cause: String? = nil
    ) {
        guard let sub = accounts[account].sub(group) else { return }
        let now = millis(t)
        let facts = subscriptionTransaction(account: account, group: group, reason: nil, signedMs: now)
        let truth = subscriptionTruth(account: account, group: group, kind: kind, signedMs: now)
        let note = notification(
            type: type,
            subtype: subtype,
            signedMs: now,
            status: sub.status.rawValue,
            facts,
            renewal(account: account, group: group, signedMs: now)
        )
        emit(lifecycle, account: account, event: newEvent(), at: t, .notification(note), truth, cause: cause)
    }

    private func activeGroups(_ account: Int) -> [Int] {
        accounts[account].subs.indices.filter {
            guard let sub = accounts[account].subs[$0] else { return false }
            return sub.status == .active || sub.status == .gracePeriod
        }
    }

    private mutating func pickActive(_ account: Int, where condition: (SubState, Int) -> Bool) -> Int? {
        let groups = activeGroups(account).filter { condition(accounts[account].subs[$0]!, $0) }
        return groups.isEmpty ? nil : groups[rng.below(groups.count)]
    }

    private mutating func changeAutoRenew(account: Int, enable: Bool, at t: Double) -> Bool {
        guard let group = pickActive(account, where: { sub, _ in sub.autoRenew != enable }) else { return false }
        var sub = accounts[account].sub(group)!
        sub.autoRenew = enable
        accounts[account].setSub(group, sub)
        subscriptionNotification(
            account: account,
            group: group,
            type: "DID_CHANGE_RENEWAL_STATUS",
            subtype: enable ? "AUTO_RENEW_ENABLED" : "AUTO_RENEW_DISABLED",
            lifecycle: enable ? .autoRenewEnabled : .autoRenewDisabled,
            truth: .none,
            at: t
        )
        return true
    }

    private mutating func changeLevel(account: Int, upgrade: Bool, at t: Double) -> Bool {
        let sizes = groupProducts.map(\.count)
        let candidate = pickActive(account) { sub, group in
            upgrade ? sub.position > 0 && sub.status == .active : Int(sub.position) < sizes[group] - 1
        }
        guard let group = candidate, var sub = accounts[account].sub(group) else { return false }
        if !upgrade {
            sub.autoRenewPosition =
                sub.position + 1 + Int32(rng.below(groupProducts[group].count - Int(sub.position) - 1))
            // An offer redeemed for the former renewal product does not carry over.
            sub.pendingOffer = -1
            accounts[account].setSub(group, sub)
            subscriptionNotification(
                account: account,
                group: group,
                type: "DID_CHANGE_RENEWAL_PREF",
                subtype: "DOWNGRADE",
                lifecycle: .downgrade,
                truth: .none,
                at: t
            )
            return true
        }
        upgradeNow(
            account: account,
            group: group,
            to: Int32(rng.below(Int(sub.position))),
            offer: -1,
            notificationType: "DID_CHANGE_RENEWAL_PREF",
            lifecycle: .upgrade,
            at: t
        )
        return true
    }

    /// An upgrade takes effect at once: a new transaction for the higher level starts a full period now and
    /// supersedes the current one (Apple refunds its unused part).
    private mutating func upgradeNow(
        account: Int,
        group: Int,
        to position: Int32,
        offer: Int8,
        notificationType: String,
        lifecycle: Lifecycle,
        at t: Double
    ) {
        guard var sub = accounts[account].sub(group) else { return }
        let now = millis(t)
        let old = sub.transaction
        let product = groupProducts[group][Int(position)]
        sub.position = position
        sub.autoRenewPosition = position
        sub.transaction = newTransaction()
        sub.webOrder = newWebOrder()
        sub.purchaseMs = now
        sub.expiresMs = now + Int64(products[product].periodSeconds * 1000)
        sub.offer = offer
        sub.offerRemaining = offer >= 0 ? Int8(products[product].offers[Int(offer)].periods) : 0
        sub.pendingOffer = -1
        sub.upgradedFrom = old
        sub.previous = nil
        sub.version &+= 1
        accounts[account].setSub(group, sub)
        schedule(.renew(account: account, group: group, version: sub.version), at: seconds(sub.expiresMs))
        let event = newEvent()
        let facts = subscriptionTransaction(account: account, group: group, reason: "PURCHASE", signedMs: now)
        var truth = subscriptionTruth(account: account, group: group, kind: .grant, signedMs: now)
        truth.supersedes = String(old)
        deliverToDevices(
            facts,
            account: account,
            purchaser: rng.below(profile.population.devicesPerAccount),
            everyDevice: true,
            lifecycle: lifecycle,
            event: event,
            truth: truth,
            at: t,
            cause: nil
        )
        let note = notification(
            type: notificationType,
            subtype: "UPGRADE",
            signedMs: now,
            status: SubscriptionStatus.active.rawValue,
            facts,
            renewal(account: account, group: group, signedMs: now)
        )
        emit(lifecycle, account: account, event: event, at: t + rng.between(0.05, 0.5), .notification(note), truth)
    }

    private mutating func armBillingFailure(account: Int, at t: Double) -> Bool {
        guard
            let group = pickActive(
                account,
                where: { sub, _ in sub.autoRenew && !sub.failNext && sub.status == .active }
            )
        else { return false }
        var sub = accounts[account].sub(group)!
        sub.failNext = true
        accounts[account].setSub(group, sub)
        emit(
            .billingFailureArmed,
            account: account,
            event: newEvent(),
            at: t,
            .marker,
            Truth(kind: .none, effectiveDate: millis(t))
        )
        return true
    }

    /// An active subscriber redeems a promotional offer (or an offer code): for the current product it applies
    /// from the next renewal (`OFFER_REDEEMED` without subtype); for a higher level it is an upgrade that takes
    /// effect at once (`UPGRADE`: a new transaction the backend must grant now); for a lower level, a downgrade
    /// from the next renewal (`DOWNGRADE`: the current product stays owed until then).
    private mutating func redeemOffer(account: Int, at t: Double) -> Bool {
        var choices: [(group: Int, position: Int32, offer: Int8)] = []
        for group in activeGroups(account) {
            guard let sub = accounts[account].sub(group), sub.status == .active, sub.pendingOffer < 0 else { continue }
            for (position, index) in groupProducts[group].enumerated() {
                for (offer, kind) in products[index].offers.map(\.kind).enumerated() where kind == .promotional {
                    choices.append((group, Int32(position), Int8(offer)))
                }
            }
        }
        guard !choices.isEmpty else { return false }
        let choice = choices[rng.below(choices.count)]
        guard var sub = accounts[account].sub(choice.group) else { return false }
        if choice.position < sub.position {
            upgradeNow(
                account: account,
                group: choice.group,
                to: choice.position,
                offer: choice.offer,
                notificationType: "OFFER_REDEEMED",
                lifecycle: .offerRedeemed,
                at: t
            )
            return true
        }
        sub.autoRenewPosition = choice.position
        sub.pendingOffer = choice.offer
        accounts[account].setSub(choice.group, sub)
        subscriptionNotification(
            account: account,
            group: choice.group,
            type: "OFFER_REDEEMED",
            subtype: choice.position > sub.position ? "DOWNGRADE" : nil,
            lifecycle: .offerRedeemed,
            truth: .none,
            at: t
        )
        return true
    }

    /// Apple extends the renewal date of an active subscription (customer-service compensation, 1 to 30 days
    /// compressed): `RENEWAL_EXTENDED` with the same transaction ending later, owed until then. One in ten
    /// fails (`RENEWAL_EXTENSION`/`FAILURE`: nothing changes).
    private mutating func extendRenewal(account: Int, at t: Double) -> Bool {
        // A pending price consent or an armed billing failure would be lost with the jobs a new version drops.
        guard
            let group = pickActive(
                account,
                where: { sub, _ in sub.status == .active && sub.priceIncrease != 1 && !sub.failNext }
            ), var sub = accounts[account].sub(group)
        else { return false }
        guard rng.chance(0.9) else {
            subscriptionNotification(
                account: account,
                group: group,
                type: "RENEWAL_EXTENSION",
                subtype: "FAILURE",
                lifecycle: .renewalExtensionFailed,
                truth: .none,
                at: t
            )
            return true
        }
        sub.expiresMs += Int64((profile.timeCompression.seconds(days: Double(1 + rng.below(30))) * 1000).rounded())
        sub.version &+= 1
        accounts[account].setSub(group, sub)
        schedule(.renew(account: account, group: group, version: sub.version), at: seconds(sub.expiresMs))
        // A grant of the same transaction, with its new end: the backend owes the subscription until then.
        subscriptionNotification(
            account: account,
            group: group,
            type: "RENEWAL_EXTENDED",
            subtype: nil,
            lifecycle: .renewalExtended,
            truth: .grant,
            at: t
        )
        return true
    }

    private mutating func announcePriceIncrease(account: Int, at t: Double) -> Bool {
        guard
            let group = pickActive(
                account,
                where: { sub, _ in sub.priceIncrease == 0 && sub.autoRenew && sub.status == .active }
            )
        else { return false }
        var sub = accounts[account].sub(group)!
        sub.priceIncrease = 1
        accounts[account].setSub(group, sub)
        let remaining = seconds(sub.expiresMs) - t
        schedule(
            .priceConsent(account: account, group: group, version: sub.version),
            at: t + remaining * rng.between(0.2, 0.8)
        )
        subscriptionNotification(
            account: account,
            group: group,
            type: "PRICE_INCREASE",
            subtype: "PENDING",
            lifecycle: .priceIncreasePending,
            truth: .none,
            at: t
        )
        return true
    }

    private mutating func report(account: Int, at t: Double) -> Bool {
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

    // MARK: - Refunds

    /// Refunds one of the account's refundable purchases or subscription periods; false when it has none.
    /// Any past period of a subscription may be refunded, not only the current one; mid-stream refunds
    /// (`latestOnly`) follow their purchase. A third of the refunds are requested from inside the app first
    /// (see `requestRefund`).
    private mutating func refund(account: Int, at t: Double, cause: String?, latestOnly: Bool = false) -> Bool {
        let purchases = accounts[account].purchases
        let subs = activeGroups(account)
        let total = purchases.count + subs.count
        guard total > 0 else { return false }
        var pick = latestOnly ? total - 1 : rng.below(total)
        if latestOnly, let latestPurchase = purchases.last,
            let latestSub = subs.max(by: {
                accounts[account].subs[$0]!.purchaseMs < accounts[account].subs[$1]!.purchaseMs
            })
        {
            // The most recent purchase of either kind (mid-stream refunds follow their purchase).
            let subMs = accounts[account].subs[latestSub]!.purchaseMs
            pick =
                latestPurchase.purchaseMs >= subMs
                ? purchases.count - 1 : purchases.count + subs.firstIndex(of: latestSub)!
        }
        let requested = !latestOnly && rng.chance(0.3)
        if pick < purchases.count {
            let ref = purchases[pick]
            if requested {
                requestRefund(account: account, group: -1, transaction: ref.transaction, at: t)
            } else {
                refundPurchase(account: account, ref: ref, at: t, cause: cause)
            }
            return true
        }
        let group = subs[pick - purchases.count]
        let sub = accounts[account].sub(group)!
        let older = !latestOnly && sub.previous != nil && rng.chance(0.5)
        if requested {
            let transaction = older ? sub.previous!.transaction : sub.transaction
            requestRefund(account: account, group: group, transaction: transaction, at: t)
        } else if older {
            refundPreviousPeriod(account: account, group: group, at: t, cause: cause)
        } else {
            refundSubscription(account: account, group: group, at: t, cause: cause)
        }
        return true
    }

    private mutating func refundPurchase(account: Int, ref: PurchaseRef, at t: Double, cause: String?) {
        let now = millis(t)
        accounts[account].forget(ref.transaction)
        accounts[account].rememberRefund(ref)
        let index = Int(ref.product)
        if products[index].type == .nonConsumable { accounts[account].setOwned(index, false) }
        var facts = purchaseTransaction(account: account, ref: ref, signedMs: now)
        revoked(&facts, at: now)
        revokeNotification(account: account, facts: facts, type: "REFUND", lifecycle: .refund, at: t, cause: cause)
        guard ref.shared != 0,
            let partner = Self.familyPartner(of: account, seed: profile.seed, population: profile.population)
        else { return }
        var shared = facts
        shared.transactionId = String(ref.shared)
        shared.originalTransactionId = String(ref.shared)
        shared.inAppOwnershipType = "FAMILY_SHARED"
        shared.appAccountToken = token(partner)
        shared.appTransactionId = appTransactionId(partner)
        shared.price = 0
        shared.revocationType = "FAMILY_REVOKE"
        shared.revocationPercentage = nil
        accounts[partner].setOwned(index, false)
        revokeNotification(
            account: partner,
            facts: shared,
            type: "REVOKE",
            lifecycle: .familyRevoke,
            at: t,
            cause: cause
        )
    }

    /// Fills the revocation fields of a fully refunded transaction.
    private mutating func revoked(_ facts: inout TransactionFacts, at now: Int64) {
        facts.revocationDate = now
        facts.revocationReason = rng.chance(0.5) ? 1 : 0
        facts.revocationType = "REFUND_FULL"
        facts.revocationPercentage = 100_000
    }

    /// Refunds the current period: the subscription is revoked and stops renewing.
    private mutating func refundSubscription(account: Int, group: Int, at t: Double, cause: String?) {
        let now = millis(t)
        var sub = accounts[account].sub(group)!
        let reason: Int32 = rng.chance(0.5) ? 1 : 0
        sub.status = .revoked
        sub.autoRenew = false
        sub.revocationMs = now
        sub.revocationReason = reason
        sub.version &+= 1
        accounts[account].setSub(group, sub)
        // subscriptionTransaction fills the revocation from the revoked state.
        let facts = subscriptionTransaction(account: account, group: group, reason: nil, signedMs: now)
        let truth = subscriptionTruth(account: account, group: group, kind: .revoke, signedMs: now)
        subscriptionRefundNotification(account: account, group: group, facts: facts, truth: truth, at: t, cause: cause)
    }

    /// Refunds the period before the current one: only that transaction is revoked; the current period is
    /// still owed, so a backend that refunds "the product" (its latest transaction) ends a period it must not.
    private mutating func refundPreviousPeriod(account: Int, group: Int, at t: Double, cause: String?) {
        let now = millis(t)
        guard var facts = previousTransaction(account: account, group: group, signedMs: now),
            var sub = accounts[account].sub(group), let period = sub.previous
        else { return }
        sub.previous = nil
        accounts[account].setSub(group, sub)
        revoked(&facts, at: now)
        var truth = Truth(kind: .revoke, effectiveDate: now)
        truth.productId = facts.productId
        truth.productType = .autoRenewable
        truth.transactionId = facts.transactionId
        truth.originalTransactionId = facts.originalTransactionId
        truth.groupId = profile.catalog.groups[group].id
        truth.expiresDate = period.expiresMs
        // No status: the subscription's state is its current period's, which this refund leaves alone.
        subscriptionRefundNotification(account: account, group: group, facts: facts, truth: truth, at: t, cause: cause)
    }

    /// A subscription's `REFUND` (status and renewal info as of now) and the revoked transaction on every device.
    private mutating func subscriptionRefundNotification(
        account: Int,
        group: Int,
        facts: TransactionFacts,
        truth: Truth,
        at t: Double,
        cause: String?
    ) {
        let now = millis(t)
        let event = newEvent()
        let note = notification(
            type: "REFUND",
            subtype: nil,
            signedMs: now,
            status: accounts[account].sub(group)!.status.rawValue,
            facts,
            renewal(account: account, group: group, signedMs: now)
        )
        emit(.refund, account: account, event: event, at: t, .notification(note), truth, cause: cause)
        deliverToDevices(
            facts,
            account: account,
            purchaser: nil,
            everyDevice: true,
            lifecycle: .refund,
            event: event,
            truth: truth,
            at: t,
            cause: cause
        )
    }

    /// A refund requested from inside the app: Apple asks for consumption data at once (consumables and
    /// auto-renewable subscriptions, `CONSUMPTION_REQUEST`), then decides 12 to 48 hours later (compressed
    /// like every period): a refund, or `REFUND_DECLINED`.
    /// - Parameters:
    ///   - group: -1 for a one-time purchase, else the subscription group.
    ///   - transaction: the transaction asked about (for a subscription, the current or the previous period).
    private mutating func requestRefund(account: Int, group: Int, transaction: UInt64, at t: Double) {
        let now = millis(t)
        guard let subject = refundSubject(account: account, group: group, transaction: transaction, signedMs: now)
        else { return }
        let type = subject.facts.type
        if type == ProductKind.consumable.appleName || type == ProductKind.autoRenewable.appleName {
            var note = notification(
                type: "CONSUMPTION_REQUEST",
                subtype: nil,
                signedMs: now,
                status: subject.status,
                subject.facts,
                subject.renewal
            )
            note.consumptionRequestReason = "UNINTENDED_PURCHASE"
            var truth = Truth(kind: .none, effectiveDate: now)
            truth.transactionId = subject.facts.transactionId
            emit(.consumptionRequest, account: account, event: newEvent(), at: t, .notification(note), truth)
        }
        let approve = rng.chance(0.5)
        let hours = rng.between(12, 48)
        schedule(
            .refundDecision(account: account, group: group, transaction: transaction, approve: approve),
            at: t + profile.timeCompression.seconds(days: hours / 24)
        )
    }

    /// Apple's decision on a refund request, if the transaction is still refundable (not refunded meanwhile, and
    /// for a subscription still its current or previous period).
    private mutating func decideRefund(account: Int, group: Int, transaction: UInt64, approve: Bool, at t: Double) {
        let now = millis(t)
        guard let subject = refundSubject(account: account, group: group, transaction: transaction, signedMs: now)
        else { return }
        if approve {
            if group < 0, let ref = accounts[account].purchases.first(where: { $0.transaction == transaction }) {
                refundPurchase(account: account, ref: ref, at: t, cause: nil)
            } else if accounts[account].sub(group)?.transaction == transaction {
                refundSubscription(account: account, group: group, at: t, cause: nil)
            } else {
                refundPreviousPeriod(account: account, group: group, at: t, cause: nil)
            }
            return
        }
        let declined = notification(
            type: "REFUND_DECLINED",
            subtype: nil,
            signedMs: now,
            status: subject.status,
            subject.facts,
            subject.renewal
        )
        var truth = Truth(kind: .none, effectiveDate: now)
        truth.transactionId = subject.facts.transactionId
        emit(.refundDeclined, account: account, event: newEvent(), at: t, .notification(declined), truth)
    }

    /// The transaction a refund request is about, signed at `signedMs`, with its subscription's renewal info and
    /// status; nil when it can no longer be refunded.
    private mutating func refundSubject(
        account: Int,
        group: Int,
        transaction: UInt64,
        signedMs: Int64
    ) -> (facts: TransactionFacts, renewal: RenewalFacts?, status: Int32?)? {
        if group < 0 {
            guard let ref = accounts[account].purchases.first(where: { $0.transaction == transaction }) else {
                return nil
            }
            return (purchaseTransaction(account: account, ref: ref, signedMs: signedMs), nil, nil)
        }
        guard let sub = accounts[account].sub(group), sub.status == .active || sub.status == .gracePeriod else {
            return nil
        }
        let facts: TransactionFacts?
        if sub.transaction == transaction {
            facts = subscriptionTransaction(account: account, group: group, reason: nil, signedMs: signedMs)
        } else if sub.previous?.transaction == transaction {
            facts = previousTransaction(account: account, group: group, signedMs: signedMs)
        } else {
            facts = nil
        }
        guard let facts else { return nil }
        return (facts, renewal(account: account, group: group, signedMs: signedMs), sub.status.rawValue)
    }

    private mutating func revokeNotification(
        account: Int,
        facts: TransactionFacts,
        type: String,
        lifecycle: Lifecycle,
        at t: Double,
        cause: String?
    ) {
        let event = newEvent()
        var truth = Truth(kind: .revoke, effectiveDate: facts.signedDate)
        truth.productId = facts.productId
        truth.productType = ProductKind.allCases.first { $0.appleName == facts.type }
        truth.transactionId = facts.transactionId
        truth.originalTransactionId = facts.originalTransactionId
        truth.quantity = Int(facts.quantity)
        let note = notification(type: type, subtype: nil, signedMs: facts.signedDate, status: nil, facts, nil)
        emit(lifecycle, account: account, event: event, at: t, .notification(note), truth, cause: cause)
        let everyDevice = truth.productType != .consumable
        deliverToDevices(
            facts,
            account: account,
            purchaser: everyDevice ? nil : 0,
            everyDevice: everyDevice,
            lifecycle: lifecycle,
            event: event,
            truth: truth,
            at: t,
            cause: cause
        )
    }

    /// Reverses an earlier refund: of a one-time purchase, or of a subscription's current period.
    private mutating func reverseRefund(account: Int, at t: Double) -> Bool {
        let revokedGroups = accounts[account].subs.indices.filter { accounts[account].subs[$0]?.status == .revoked }
        var purchase = accounts[account].refunded.last
        if let ref = purchase, products[Int(ref.product)].type == .nonConsumable,
            accounts[account].owns(Int(ref.product))
        {
            purchase = nil
        }
        let choices = revokedGroups.count + (purchase == nil ? 0 : 1)
        guard choices > 0 else { return false }
        let pick = choices > 1 ? rng.below(choices) : 0
        guard let ref = purchase, pick == revokedGroups.count else {
            reverseSubscriptionRefund(account: account, group: revokedGroups[pick], at: t)
            return true
        }
        let index = Int(ref.product)
        accounts[account].refunded.removeLast()
        accounts[account].remember(ref)
        if products[index].type == .nonConsumable { accounts[account].setOwned(index, true) }
        let now = millis(t)
        let facts = purchaseTransaction(account: account, ref: ref, signedMs: now)
        var truth = Truth(kind: .reinstate, effectiveDate: now)
        truth.productId = facts.productId
        truth.productType = products[index].type
        truth.transactionId = facts.transactionId
        truth.originalTransactionId = facts.originalTransactionId
        truth.quantity = Int(ref.quantity)
        let note = notification(type: "REFUND_REVERSED", subtype: nil, signedMs: now, status: nil, facts, nil)
        emit(.refundReversal, account: account, event: newEvent(), at: t, .notification(note), truth)
        return true
    }

    /// Apple reverses the refund of a subscription's current period: the period is owed again until its
    /// unchanged end; auto-renew stays off (the refund turned it off), so the subscription then expires.
    private mutating func reverseSubscriptionRefund(account: Int, group: Int, at t: Double) {
        guard var sub = accounts[account].sub(group) else { return }
        let now = millis(t)
        let ongoing = sub.expiresMs > now
        sub.status = ongoing ? .active : .expired
        if !ongoing { sub.expirationIntent = 1 }
        sub.revocationMs = 0
        sub.version &+= 1
        accounts[account].setSub(group, sub)
        if ongoing {
            schedule(.renew(account: account, group: group, version: sub.version), at: seconds(sub.expiresMs))
        }
        let facts = subscriptionTransaction(account: account, group: group, reason: nil, signedMs: now)
        let truth = subscriptionTruth(account: account, group: group, kind: .reinstate, signedMs: now)
        let note = notification(
            type: "REFUND_REVERSED",
            subtype: nil,
            signedMs: now,
            status: sub.status.rawValue,
            facts,
            renewal(account: account, group: group, signedMs: now)
        )
        emit(.refundReversal, account: account, event: newEvent(), at: t, .notification(note), truth)
    }

    // MARK: - Payload facts

    private func appTransactionId(_ account: Int) -> String { String(transactionBase / 10 + UInt64(account)) }

    private mutating func transaction(
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
            transactionId: String(id),
            originalTransactionId: String(original),
            webOrderLineItemId: nil,
            bundleId: target.bundleId,
            productId: product.id,
            subscriptionGroupIdentifier: nil,
            purchaseDate: purchaseMs,
            originalPurchaseDate: originalMs,
            expiresDate: nil,
            quantity: quantity,
            type: product.type.appleName,
            appAccountToken: token(account),
            inAppOwnershipType: "PURCHASED",
            signedDate: signedMs,
            environment: target.environment,
            storefront: catalog.storefront,
            storefrontId: catalog.storefrontId,
            transactionReason: "PURCHASE",
            currency: catalog.currency,
            price: price,
            appTransactionId: appTransactionId(account)
        )
    }

    private mutating func purchaseTransaction(account: Int, ref: PurchaseRef, signedMs: Int64) -> TransactionFacts {
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

    private mutating func subscriptionTransaction(
        account: Int,
        group: Int,
        reason: String?,
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
    private mutating func previousTransaction(account: Int, group: Int, signedMs: Int64) -> TransactionFacts? {
        guard var old = accounts[account].sub(group), let period = old.previous else { return nil }
        old.transaction = period.transaction
        old.webOrder = period.webOrder
        old.purchaseMs = period.purchaseMs
        old.expiresMs = period.expiresMs
        old.position = period.position
        old.offer = period.offer
        old.priceBumped = period.priceBumped
        old.upgradedFrom = 0
        old.status = .active
        return subscriptionTransaction(account: account, group: group, sub: old, reason: nil, signedMs: signedMs)
    }

    private mutating func subscriptionTransaction(
        account: Int,
        group: Int,
        sub: SubState,
        reason: String?,
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
        facts.webOrderLineItemId = String(sub.webOrder)
        facts.subscriptionGroupIdentifier = profile.catalog.groups[group].id
        facts.expiresDate = sub.expiresMs
        facts.transactionReason =
            reason ?? (sub.transaction == sub.original || sub.upgradedFrom != 0 ? "PURCHASE" : "RENEWAL")
        if sub.offer >= 0, Int(sub.offer) < product.offers.count {
            let offer = product.offers[Int(sub.offer)]
            facts.offerType = offer.kind.appleNumber
            facts.offerIdentifier = offer.kind == .introductory ? nil : offer.id
            facts.offerDiscountType = offer.discount.appleName
            facts.offerPeriod = "P\(offer.periods)M"
            facts.price = offer.priceMilli
        }
        if sub.status == .revoked {
            facts.revocationDate = sub.revocationMs
            facts.revocationReason = sub.revocationReason
            facts.revocationType = "REFUND_FULL"
            facts.revocationPercentage = 100_000
        }
        return facts
    }

    private func renewal(account: Int, group: Int, signedMs: Int64) -> RenewalFacts {
        let sub = accounts[account].sub(group)!
        let current = products[groupProducts[group][Int(sub.position)]]
        let next = products[groupProducts[group][Int(sub.autoRenewPosition)]]
        var renewalPrice = next.priceMilli
        if sub.priceBumped || sub.priceIncrease != 0 { renewalPrice = renewalPrice * 6 / 5 }
        var facts = RenewalFacts(
            originalTransactionId: String(sub.original),
            autoRenewProductId: next.id,
            productId: current.id,
            autoRenewStatus: sub.autoRenew ? 1 : 0,
            signedDate: signedMs,
            environment: profile.target.environment,
            recentSubscriptionStartDate: sub.recentStartMs,
            renewalDate: sub.status == .expired || sub.status == .revoked ? nil : sub.expiresMs,
            currency: profile.catalog.currency,
            renewalPrice: renewalPrice,
            appAccountToken: token(account),
            appTransactionId: appTransactionId(account)
        )
        switch sub.status {
        case .gracePeriod:
            facts.isInBillingRetryPeriod = true
            facts.gracePeriodExpiresDate = sub.graceExpiresMs
            facts.expirationIntent = 2
        case .billingRetry:
            facts.isInBillingRetryPeriod = true
            facts.expirationIntent = 2
        case .expired:
            facts.isInBillingRetryPeriod = false
            facts.expirationIntent = sub.expirationIntent
        case .active, .revoked:
            // Apple says so outright rather than leaving the key out, as `paystorm mint` does.
            facts.isInBillingRetryPeriod = false
        }
        if sub.priceIncrease != 0 { facts.priceIncreaseStatus = sub.priceIncrease == 2 ? 1 : 0 }
        if sub.pendingOffer >= 0, Int(sub.pendingOffer) < next.offers.count {
            let offer = next.offers[Int(sub.pendingOffer)]
            facts.offerType = offer.kind.appleNumber
            facts.offerIdentifier = offer.id
            facts.offerDiscountType = offer.discount.appleName
            facts.renewalPrice = offer.priceMilli
        }
        return facts
    }

    private func subscriptionTruth(account: Int, group: Int, kind: Truth.Kind, signedMs: Int64) -> Truth {
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

    private mutating func notification(
        type: String,
        subtype: String?,
        signedMs: Int64,
        status: Int32?,
        _ transaction: TransactionFacts?,
        _ renewal: RenewalFacts?
    ) -> NotificationFacts {
        NotificationFacts(
            notificationType: type,
            subtype: subtype,
            notificationUUID: rng.uuid(),
            signedDate: signedMs,
            version: "2.0",
            bundleId: profile.target.bundleId,
            appAppleId: profile.target.appAppleId,
            environment: profile.target.environment,
            status: status,
            consumptionRequestReason: nil,
            transaction: transaction,
            renewal: renewal
        )
    }
}

// MARK: - Per-account state (compact: it is what the world's memory grows with)

private enum Job: Sendable {
    indirect case emit(Action)
    case renew(account: Int, group: Int, version: UInt32)
    case recover(account: Int, group: Int, version: UInt32)
    case graceEnd(account: Int, group: Int, version: UInt32)
    case retryEnd(account: Int, group: Int, version: UInt32)
    case priceConsent(account: Int, group: Int, version: UInt32)
    case askToBuy(account: Int, product: Int, device: Int, approve: Bool)
    case refund(account: Int)
    /// Apple's answer to a refund request, hours after its `CONSUMPTION_REQUEST`: `group` is -1 for a one-time
    /// purchase, else the subscription group whose period `transaction` was asked about.
    case refundDecision(account: Int, group: Int, transaction: UInt64, approve: Bool)
}

/// A subscription period that is no longer current, kept so that a refund of an older renewal can be played.
private struct Period: Sendable {
    var transaction: UInt64
    var webOrder: UInt64
    var purchaseMs: Int64
    var expiresMs: Int64
    var position: Int32
    var offer: Int8
    var priceBumped: Bool
}

private struct PurchaseRef: Sendable {
    var product: Int32
    var transaction: UInt64
    var purchaseMs: Int64
    var quantity: Int32
    var shared: UInt64
}

private struct SubState: Sendable {
    var original: UInt64
    var originalMs: Int64
    var recentStartMs: Int64
    var transaction: UInt64 = 0
    var webOrder: UInt64 = 0
    var purchaseMs: Int64 = 0
    var expiresMs: Int64 = 0
    var graceExpiresMs: Int64 = 0
    var revocationMs: Int64 = 0
    var upgradedFrom: UInt64 = 0
    var version: UInt32 = 0
    var position: Int32 = 0
    var autoRenewPosition: Int32 = 0
    var status: SubscriptionStatus = .active
    var autoRenew = true
    var failNext = false
    var priceBumped = false
    /// 0 none, 1 pending consent, 2 accepted.
    var priceIncrease: Int8 = 0
    var offer: Int8 = -1
    var offerRemaining: Int8 = 0
    /// An offer redeemed for the next renewal: an index into the offers of the auto-renew product.
    var pendingOffer: Int8 = -1
    var expirationIntent: Int32 = 0
    var revocationReason: Int32 = 0
    /// The period before the current one (renewed from, never refunded), if any.
    var previous: Period?

    init(original: UInt64, originalMs: Int64) {
        self.original = original
        self.originalMs = originalMs
        self.recentStartMs = originalMs
    }
}

private struct AccountState: Sendable {
    var subs: [SubState?] = []
    var purchases: [PurchaseRef] = []
    var refunded: [PurchaseRef] = []
    var owned: UInt64 = 0
    var intro: UInt64 = 0

    func sub(_ group: Int) -> SubState? { group < subs.count ? subs[group] : nil }

    mutating func setSub(_ group: Int, _ sub: SubState) {
        while subs.count <= group { subs.append(nil) }
        subs[group] = sub
    }

    func owns(_ product: Int) -> Bool { product < 64 && owned & (1 << UInt64(product)) != 0 }

    mutating func setOwned(_ product: Int, _ value: Bool) {
        guard product < 64 else { return }
        if value { owned |= 1 << UInt64(product) } else { owned &= ~(1 << UInt64(product)) }
    }

    func introUsed(_ group: Int) -> Bool { group < 64 && intro & (1 << UInt64(group)) != 0 }

    mutating func setIntroUsed(_ group: Int) { if group < 64 { intro |= 1 << UInt64(group) } }

    /// Keeps the last four refundable purchases (bounded memory per account).
    mutating func remember(_ ref: PurchaseRef) {
        purchases.append(ref)
        if purchases.count > 4 { purchases.removeFirst() }
    }

    mutating func forget(_ transaction: UInt64) { purchases.removeAll { $0.transaction == transaction } }

    mutating func rememberRefund(_ ref: PurchaseRef) {
        refunded.append(ref)
        if refunded.count > 2 { refunded.removeFirst() }
    }
}
