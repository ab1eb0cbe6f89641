internal import AppStoreModel
import Primitives
internal import Profile

// What customers and Apple change on a running subscription: auto-renew, levels, offers, billing failures,
// price increases and renewal extensions.

extension World {
    mutating func changeAutoRenew(account: Int, enable: Bool, at t: Double) -> Bool {
        guard let group = pickEntitled(account, where: { sub, _ in sub.autoRenew != enable }) else { return false }
        drive(account: account, group: group, at: t) { $0.setAutoRenew(enable) }
        return true
    }

    /// An upgrade (at once) or a downgrade (from the next renewal) to a level drawn at random.
    mutating func changeLevel(account: Int, upgrade: Bool, at t: Double) -> Bool {
        let sizes = groupProducts.map(\.count)
        let candidate = pickEntitled(account) { sub, group in
            upgrade ? sub.position > 0 && sub.status == .active : Int(sub.position) < sizes[group] - 1
        }
        guard let group = candidate, let sub = accounts[account].sub(group) else { return false }
        if !upgrade {
            let lower = sub.position + 1 + Int32(rng.below(sizes[group] - Int(sub.position) - 1))
            drive(account: account, group: group, at: t) { $0.downgrade(to: lower) }
            return true
        }
        upgradeNow(
            account: account,
            group: group,
            to: Int32(rng.below(Int(sub.position))),
            offer: nil,
            notificationType: .didChangeRenewalPref,
            lifecycle: .upgrade,
            at: t
        )
        return true
    }

    /// An upgrade takes effect at once: a new transaction for the higher level starts a full period now and
    /// supersedes the current one (Apple refunds its unused part).
    mutating func upgradeNow(
        account: Int,
        group: Int,
        to position: Int32,
        offer: Int8?,
        notificationType: NotificationTypeV2,
        lifecycle: Lifecycle,
        at t: Double
    ) {
        guard var sub = accounts[account].sub(group) else { return }
        let now = millis(t)
        let replaced = sub.transaction
        let effects = sub.upgrade(
            to: position,
            level: groupLevels[group][Int(position)],
            offer: offer,
            transaction: newTransaction(),
            webOrder: newWebOrder(),
            nowMs: now
        )
        accounts[account].setSub(group, sub)
        play(effects, account: account, group: group, at: t)
        let event = newEvent()
        let facts = subscriptionTransaction(account: account, group: group, reason: .purchase, signedMs: now)
        var truth = subscriptionTruth(account: account, group: group, kind: .grant, signedMs: now)
        truth.supersedes = String(replaced)
        announceNewPeriod(
            facts,
            truth,
            account: account,
            group: group,
            event: event,
            lifecycle: lifecycle,
            purchaser: rng.below(profile.population.devicesPerAccount),
            cause: nil,
            type: notificationType,
            subtype: .upgrade,
            notifiedWithin: (0.05, 0.5),
            at: t
        )
    }

    mutating func armBillingFailure(account: Int, at t: Double) -> Bool {
        guard
            let group = pickEntitled(
                account,
                where: { sub, _ in sub.autoRenew && !sub.failNext && sub.status == .active }
            )
        else { return false }
        drive(account: account, group: group, at: t) { $0.armBillingFailure() }
        return true
    }

    /// An active subscriber redeems a promotional offer (or an offer code): for the current product it applies
    /// from the next renewal (`OFFER_REDEEMED` without subtype); for a higher level it is an upgrade that takes
    /// effect at once (`UPGRADE`: a new transaction the backend must grant now); for a lower level, a downgrade
    /// from the next renewal (`DOWNGRADE`: the current product stays owed until then).
    mutating func redeemOffer(account: Int, at t: Double) -> Bool {
        var choices: [(group: Int, position: Int32, offer: Int8)] = []
        for group in entitledGroups(account) {
            guard let sub = accounts[account].sub(group), sub.status == .active, sub.pendingOffer == nil else {
                continue
            }
            for (position, index) in groupProducts[group].enumerated() {
                for (offer, kind) in products[index].offers.map(\.kind).enumerated() where kind == .promotional {
                    choices.append((group, Int32(position), Int8(offer)))
                }
            }
        }
        guard !choices.isEmpty else { return false }
        let choice = choices[rng.below(choices.count)]
        guard let sub = accounts[account].sub(choice.group) else { return false }
        if choice.position < sub.position {
            upgradeNow(
                account: account,
                group: choice.group,
                to: choice.position,
                offer: choice.offer,
                notificationType: .offerRedeemed,
                lifecycle: .offerRedeemed,
                at: t
            )
            return true
        }
        drive(account: account, group: choice.group, at: t) { $0.redeemOffer(choice.offer, at: choice.position) }
        return true
    }

    /// Apple extends the renewal dates of a product's subscribers at once (a mass extension, customer-service
    /// compensation of 1 to 30 days compressed): per subscriber `RENEWAL_EXTENDED`, the same transaction ending
    /// later and owed until then, or for one in ten `RENEWAL_EXTENSION`/`FAILURE`, which changes nothing; then
    /// one `RENEWAL_EXTENSION`/`SUMMARY` with the counts and no account, which a backend must accept (2xx) and
    /// which grants nothing. Besides the drawn account, two accounts drawn at random join when they are active
    /// subscribers of the same product, so the population is never scanned.
    mutating func extendRenewal(account: Int, at t: Double) -> Bool {
        let now = millis(t)
        guard changesSettled(account: account, at: t),
            let group = pickEntitled(account, where: { sub, _ in Self.extendable(sub, at: now) }),
            let position = accounts[account].sub(group)?.position
        else { return false }
        let days = Double(1 + rng.below(30))
        let extra = Int64((profile.timeCompression.seconds(days: days) * 1000).rounded())
        var subscribers = [account]
        for _ in 0..<2 {
            let other = rng.below(accounts.count)
            if !subscribers.contains(other), changesSettled(account: other, at: t),
                let sub = accounts[other].sub(group),
                sub.position == position, Self.extendable(sub, at: now)
            {
                subscribers.append(other)
            }
        }
        var succeeded: Int64 = 0
        for subscriber in subscribers {
            if extend(account: subscriber, group: group, byMillis: extra, at: t) { succeeded += 1 }
        }
        let at = t + rng.between(0.5, 1.5)
        var note = notification(
            type: .renewalExtension,
            subtype: .summary,
            signedMs: millis(at),
            status: nil,
            nil,
            nil
        )
        // Apple's payload carries exactly one of `data` and `summary`.
        note.payload.data = nil
        note.payload.summary = Summary(
            environment: profile.target.environment,
            appAppleId: profile.target.appAppleId,
            bundleId: profile.target.bundleId,
            productId: products[groupProducts[group][Int(position)]].id,
            requestIdentifier: newUUID(),
            storefrontCountryCodes: [profile.catalog.storefront],
            succeededCount: succeeded,
            failedCount: Int64(subscribers.count) - succeeded
        )
        // The summary names no account; it rides on the drawn one's book, where it grants nothing.
        let truth = Truth(kind: .none, effectiveDate: note.signedDate)
        emit(.renewalExtensionSummary, account: account, event: newEvent(), at: at, .notification(note), truth)
        return true
    }

    /// Whether a subscription can be extended at `nowMs`: active, with no pending price consent or armed billing
    /// failure, which would be lost with the timers a new version drops, and its transaction signed before
    /// (an extension in the millisecond of the purchase or renewal it extends could not be ordered after it).
    static func extendable(_ sub: SubscriptionLifecycle, at nowMs: Int64) -> Bool {
        sub.status == .active && sub.priceIncrease != .pending && !sub.failNext && sub.purchaseMs < nowMs
    }

    /// One subscriber's part of a mass extension: true when it was extended, false for a `FAILURE`.
    private mutating func extend(account: Int, group: Int, byMillis extra: Int64, at t: Double) -> Bool {
        accounts[account].changedMs = millis(t)
        guard rng.chance(0.9), var sub = accounts[account].sub(group) else {
            let failure = SubscriptionLifecycle.Notice(
                type: .renewalExtension,
                subtype: .failure,
                lifecycle: .renewalExtensionFailed,
                truth: .none
            )
            subscriptionNotification(account: account, group: group, failure, at: t)
            return false
        }
        let effects = sub.extendRenewal(byMillis: extra)
        accounts[account].setSub(group, sub)
        play(effects, account: account, group: group, at: t)
        return true
    }

    /// Apple announces a price increase; the customer answers before the period ends.
    mutating func announcePriceIncrease(account: Int, at t: Double) -> Bool {
        guard
            let group = pickEntitled(
                account,
                where: { sub, _ in sub.priceIncrease == .notAnnounced && sub.autoRenew && sub.status == .active }
            )
        else { return false }
        drive(account: account, group: group, at: t) { $0.announcePriceIncrease() }
        return true
    }
}
