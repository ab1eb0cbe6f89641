import AppStoreModel
import Profile
import Testing

@testable import Simulation

/// The subscription lifecycle driven as a value, without a world: events in, notices and timers out.
struct SubscriptionLifecycleTests {
    typealias Machine = SubscriptionLifecycle

    static let levels = [
        Machine.Level(periodMillis: 4_000, offerPeriods: [2]),
        Machine.Level(periodMillis: 4_000, offerPeriods: [1]),
    ]
    static let grace = Machine.Billing(gracePeriodSeconds: 2, billingRetrySeconds: 6)
    static let noGrace = Machine.Billing(gracePeriodSeconds: 0, billingRetrySeconds: 6)

    /// A subscription bought at t = 10 s at the lower level, without offer.
    static func subscribed() -> (Machine, Machine.Alarm) {
        var machine = Machine(original: 100, originalMs: 10_000)
        let alarm = machine.subscribe(
            position: 1,
            level: levels[1],
            transaction: 100,
            webOrder: 1,
            nowMs: 10_000,
            offer: nil,
            resubscribing: false,
            lapseMillis: 60_000
        )
        return (machine, alarm)
    }

    static func fire(
        _ machine: inout Machine,
        _ timer: Machine.Timer,
        billing: Machine.Billing = grace
    ) -> Machine.Output {
        machine.fire(timer, version: machine.version, billing: billing, consents: { true })
    }

    @Test func aSubscriptionSetsItsRenewalAtThePeriodEnd() {
        let (machine, alarm) = Self.subscribed()
        #expect(machine.status == .active && machine.isEntitled)
        #expect(
            alarm
                == Machine.Alarm(
                    timer: .renewal,
                    version: machine.version,
                    periodEndMs: 14_000,
                    secondsAfterPeriodEnd: 0
                )
        )
    }

    @Test func aStaleTimerChangesNothing() {
        var (machine, alarm) = Self.subscribed()
        _ = machine.setAutoRenew(false)
        _ = machine.extendRenewal(byMillis: 1_000)
        let before = machine
        #expect(machine.fire(.renewal, version: alarm.version, billing: Self.grace, consents: { true }) == .ignored)
        #expect(machine == before)
    }

    @Test(
        arguments: [
            (false, false, false, Machine.Output.renew(recovery: false)),
            (
                true, false, false,
                .notify(
                    Machine.Notice(
                        type: "EXPIRED",
                        subtype: "VOLUNTARY",
                        lifecycle: .expiry,
                        truth: .subscriptionStatus
                    )
                )
            ),
            (
                false, true, false,
                .notify(
                    Machine.Notice(
                        type: "EXPIRED",
                        subtype: "PRICE_INCREASE",
                        lifecycle: .expiry,
                        truth: .subscriptionStatus
                    )
                )
            ),
            (
                false, false, true,
                .renewalFailed(
                    Machine.Notice(
                        type: "DID_FAIL_TO_RENEW",
                        subtype: "GRACE_PERIOD",
                        lifecycle: .renewalFailure,
                        truth: .subscriptionStatus
                    )
                )
            ),
        ]
    )
    func theRenewalTimerRenewsExpiresOrFails(
        cancelled: Bool,
        priceIncrease: Bool,
        failing: Bool,
        expected: Machine.Output
    ) {
        var (machine, _) = Self.subscribed()
        if cancelled { _ = machine.setAutoRenew(false) }
        if priceIncrease { _ = machine.announcePriceIncrease() }
        if failing { machine.armBillingFailure() }
        #expect(Self.fire(&machine, .renewal) == expected)
    }

    @Test func anExpiryEndsTheEntitlementAndAllowsAResubscribe() {
        var (machine, _) = Self.subscribed()
        _ = machine.setAutoRenew(false)
        _ = Self.fire(&machine, .renewal)
        #expect(machine.status == .expired && machine.expirationIntent == 1 && machine.isOver && !machine.isEntitled)
    }

    @Test(arguments: [(grace, Machine.Status.gracePeriod), (noGrace, .billingRetry)])
    func aFailedRenewalEntersGraceOnlyWhenTheGroupHasOne(billing: Machine.Billing, status: Machine.Status) {
        var (machine, _) = Self.subscribed()
        machine.armBillingFailure()
        _ = Self.fire(&machine, .renewal, billing: billing)
        #expect(machine.status == status && !machine.failNext)
        #expect(machine.isEntitled == (status == .gracePeriod))
        let timers = machine.billingAlarms(recoveryAfter: nil, billing: billing).map(\.timer)
        #expect(timers == (status == .gracePeriod ? [.retryEnd, .graceEnd] : [.retryEnd]))
        #expect(machine.billingAlarms(recoveryAfter: 1.5, billing: billing).first?.secondsAfterPeriodEnd == 1.5)
    }

    @Test func graceEndsInBillingRetryAndTheRetryEndExpires() {
        var (machine, _) = Self.subscribed()
        machine.armBillingFailure()
        _ = Self.fire(&machine, .renewal)
        guard case .notify(let grace) = Self.fire(&machine, .graceEnd) else {
            Issue.record("no GRACE_PERIOD_EXPIRED")
            return
        }
        #expect(grace.type == "GRACE_PERIOD_EXPIRED" && machine.status == .billingRetry)
        #expect(Self.fire(&machine, .graceEnd) == .ignored)
        guard case .notify(let expiry) = Self.fire(&machine, .retryEnd) else {
            Issue.record("no EXPIRED")
            return
        }
        #expect(expiry.subtype == "BILLING_RETRY" && machine.status == .expired && machine.expirationIntent == 2)
        #expect(Self.fire(&machine, .recovery) == .ignored)
    }

    @Test func aRecoveryRenewsFromItsOwnDate() {
        var (machine, _) = Self.subscribed()
        machine.armBillingFailure()
        _ = Self.fire(&machine, .renewal)
        #expect(Self.fire(&machine, .recovery) == .renew(recovery: true))
        let alarm = machine.renew(transaction: 101, webOrder: 2, nowMs: 16_000, recovery: true, levels: Self.levels)
        #expect(machine.purchaseMs == 16_000 && machine.expiresMs == 20_000 && alarm.periodEndMs == 20_000)
        #expect(machine.status == .active && machine.graceExpiresMs == 0)
    }

    @Test func aPriceIncreaseIsAskedOnlyWhilePendingAndBillsFromTheNextRenewal() {
        var (machine, _) = Self.subscribed()
        var asked = 0
        #expect(
            machine.fire(.priceConsent, version: machine.version, billing: Self.grace) {
                asked += 1
                return true
            } == .ignored
        )
        #expect(asked == 0)
        _ = machine.announcePriceIncrease()
        #expect(
            machine.fire(.priceConsent, version: machine.version, billing: Self.grace) {
                asked += 1
                return false
            } == .ignored
        )
        #expect(asked == 1 && machine.priceIncrease == .pending)
        guard case .notify(let accepted) = Self.fire(&machine, .priceConsent) else {
            Issue.record("no PRICE_INCREASE/ACCEPTED")
            return
        }
        #expect(accepted.subtype == "ACCEPTED" && machine.priceIncrease == .accepted && !machine.priceBumped)
        _ = machine.renew(transaction: 101, webOrder: 2, nowMs: 14_000, recovery: false, levels: Self.levels)
        #expect(machine.priceBumped && machine.priceIncrease == .notAnnounced)
    }

    @Test func aRenewalKeepsThePreviousPeriodAndAppliesAPendingOffer() {
        var (machine, _) = Self.subscribed()
        _ = machine.redeemOffer(0, at: 1)
        #expect(machine.pendingOffer == 0)
        _ = machine.renew(transaction: 101, webOrder: 2, nowMs: 14_000, recovery: false, levels: Self.levels)
        #expect(machine.previous?.transaction == 100 && machine.previous?.expiresMs == 14_000)
        #expect(machine.transaction == 101 && machine.purchaseMs == 14_000 && machine.expiresMs == 18_000)
        #expect(machine.offer == 0 && machine.offerRemaining == 1 && machine.pendingOffer == nil)
        #expect(machine.previousPeriod?.transaction == 100 && machine.previousPeriod?.offer == nil)
        #expect(machine.refundPrevious()?.transaction == 100 && machine.previous == nil)
        // The offer lasts one period: the next renewal is at full price.
        _ = machine.renew(transaction: 102, webOrder: 3, nowMs: 18_000, recovery: false, levels: Self.levels)
        #expect(machine.offer == nil && machine.offerRemaining == 0)
    }

    @Test func aDowngradeDropsAPendingOfferAndWaitsForTheRenewal() {
        var (machine, _) = Self.subscribed()
        _ = machine.upgrade(to: 0, level: Self.levels[0], offer: nil, transaction: 101, webOrder: 2, nowMs: 11_000)
        _ = machine.redeemOffer(0, at: 0)
        let notice = machine.downgrade(to: 1)
        #expect(notice.subtype == "DOWNGRADE" && machine.pendingOffer == nil)
        #expect(machine.position == 0 && machine.autoRenewPosition == 1)
    }

    @Test func anUpgradeReplacesTheCurrentTransactionAtOnce() {
        var (machine, _) = Self.subscribed()
        let (replaced, alarm) = machine.upgrade(
            to: 0,
            level: Self.levels[0],
            offer: 0,
            transaction: 101,
            webOrder: 2,
            nowMs: 11_000
        )
        #expect(replaced == 100 && machine.upgradedFrom == 100 && machine.transaction == 101)
        #expect(machine.position == 0 && machine.offer == 0 && machine.offerRemaining == 2)
        #expect(alarm.periodEndMs == 15_000 && machine.previous == nil)
    }

    @Test(arguments: [(12_000 as Int64, Machine.Status.active), (20_000, .expired)])
    func aReversedRefundOwesTheRestOfThePeriod(nowMs: Int64, status: Machine.Status) {
        var (machine, _) = Self.subscribed()
        machine.revoke(nowMs: 11_000, reason: 1)
        #expect(machine.status == .revoked && !machine.autoRenew && machine.isOver)
        let alarm = machine.reinstate(nowMs: nowMs)
        #expect(machine.status == status && machine.revocationMs == 0)
        #expect((alarm != nil) == (status == .active))
    }
}
