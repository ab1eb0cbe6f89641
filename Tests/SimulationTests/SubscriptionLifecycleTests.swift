import AppStoreModel
import Profile
import Testing

@testable import Simulation

/// The subscription lifecycle driven as a value, without a world: events in, effects out.
struct SubscriptionLifecycleTests {
    typealias Machine = SubscriptionLifecycle

    static let levels = [
        Machine.Level(periodMillis: 4_000, offerPeriods: [2]),
        Machine.Level(periodMillis: 4_000, offerPeriods: [1]),
    ]
    static let grace = Machine.Billing(gracePeriodSeconds: 2, billingRetrySeconds: 6)
    static let noGrace = Machine.Billing(gracePeriodSeconds: 0, billingRetrySeconds: 6)

    /// A subscription bought at t = 10 s at the lower level, without offer; its period ends at 14 s.
    static func subscribed() -> (Machine, [Machine.Effect]) {
        var machine = Machine(original: 100, originalMs: 10_000)
        let effects = machine.subscribe(
            position: 1,
            level: levels[1],
            transaction: 100,
            webOrder: 1,
            nowMs: 10_000,
            offer: nil,
            resubscribing: false,
            lapseMillis: 60_000
        )
        return (machine, effects)
    }

    static func fire(
        _ machine: inout Machine,
        _ timer: Machine.Timer,
        billing: Machine.Billing = grace
    ) -> [Machine.Effect] {
        machine.fire(timer, version: machine.version, billing: billing)
    }

    /// The alarms among `effects`.
    static func alarms(_ effects: [Machine.Effect]) -> [Machine.Alarm] {
        effects.compactMap {
            if case .setAlarm(let alarm) = $0 { return alarm }
            return nil
        }
    }

    @Test func aSubscriptionSetsItsRenewalAtThePeriodEnd() {
        let (machine, effects) = Self.subscribed()
        #expect(machine.status == .active && machine.isEntitled)
        let renewal = Machine.Alarm(
            timer: .renewal,
            version: machine.version,
            periodEndMs: 14_000,
            secondsAfterPeriodEnd: 0
        )
        #expect(effects == [.setAlarm(renewal)])
    }

    @Test func aStaleTimerChangesNothing() {
        var (machine, effects) = Self.subscribed()
        _ = machine.setAutoRenew(false)
        _ = machine.extendRenewal(byMillis: 1_000)
        let before = machine
        let stale = Self.alarms(effects)[0].version
        #expect(machine.fire(.renewal, version: stale, billing: Self.grace).isEmpty)
        #expect(machine == before)
    }

    @Test(arguments: [(grace, Machine.Status.gracePeriod), (noGrace, .billingRetry)])
    func aFailedRenewalEntersGraceOnlyWhenTheGroupHasOne(billing: Machine.Billing, status: Machine.Status) {
        var (machine, _) = Self.subscribed()
        _ = machine.armBillingFailure()
        _ = Self.fire(&machine, .renewal, billing: billing)
        #expect(machine.status == status && !machine.failNext)
        #expect(machine.isEntitled == (status == .gracePeriod))
        let timers = Self.alarms(machine.retryAlarms(recoveryAfter: nil, billing: billing)).map(\.timer)
        #expect(timers == (status == .gracePeriod ? [.retryEnd, .graceEnd] : [.retryEnd]))
        let recovery = Self.alarms(machine.retryAlarms(recoveryAfter: 1.5, billing: billing)).first
        #expect(recovery?.timer == .recovery && recovery?.secondsAfterPeriodEnd == 1.5)
    }

    @Test func aRecoveryRenewsFromItsOwnDate() {
        var (machine, _) = Self.subscribed()
        _ = machine.armBillingFailure()
        _ = Self.fire(&machine, .renewal)
        let effects = machine.renew(transaction: 101, webOrder: 2, nowMs: 16_000, recovery: true, levels: Self.levels)
        #expect(machine.purchaseMs == 16_000 && machine.expiresMs == 20_000)
        #expect(Self.alarms(effects).map(\.periodEndMs) == [20_000])
        #expect(machine.status == .active && machine.graceExpiresMs == 0)
    }

    @Test func anAcceptedPriceIncreaseBillsFromTheNextRenewal() {
        var (machine, _) = Self.subscribed()
        _ = machine.announcePriceIncrease()
        _ = machine.answerPriceIncrease(accepted: true)
        #expect(machine.priceIncrease == .accepted && !machine.priceBumped)
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
        let effects = machine.downgrade(to: 1)
        let notice = Machine.Notice(
            type: "DID_CHANGE_RENEWAL_PREF",
            subtype: "DOWNGRADE",
            lifecycle: .downgrade,
            truth: .none
        )
        #expect(effects == [.notify(notice)] && machine.pendingOffer == nil)
        #expect(machine.position == 0 && machine.autoRenewPosition == 1)
    }

    @Test func anUpgradeReplacesTheCurrentTransactionAtOnce() {
        var (machine, _) = Self.subscribed()
        let effects = machine.upgrade(
            to: 0,
            level: Self.levels[0],
            offer: 0,
            transaction: 101,
            webOrder: 2,
            nowMs: 11_000
        )
        #expect(machine.upgradedFrom == 100 && machine.transaction == 101)
        #expect(machine.position == 0 && machine.offer == 0 && machine.offerRemaining == 2)
        #expect(Self.alarms(effects).map(\.periodEndMs) == [15_000] && machine.previous == nil)
    }
}
