internal import AppStoreModel
import Primitives
internal import Profile

// Carrying out what a subscription's lifecycle asks for: the world draws, numbers and schedules; the machine
// only says what happens next.

extension World {
    /// The billing settings of `group`.
    func billing(_ group: Int) -> SubscriptionLifecycle.Billing {
        let config = profile.catalog.groups[group]
        return SubscriptionLifecycle.Billing(
            gracePeriodSeconds: config.gracePeriodSeconds,
            billingRetrySeconds: config.billingRetrySeconds
        )
    }

    /// Puts an event to the account's subscription in `group`, stores the machine, then plays its effects.
    mutating func drive(
        account: Int,
        group: Int,
        at t: Double,
        _ event: (inout SubscriptionLifecycle) -> [SubscriptionLifecycle.Effect]
    ) {
        guard var sub = accounts[account].sub(group) else { return }
        let effects = event(&sub)
        accounts[account].setSub(group, sub)
        play(effects, account: account, group: group, at: t)
    }

    /// Carries out a lifecycle's effects in order (the machine is already stored).
    mutating func play(_ effects: [SubscriptionLifecycle.Effect], account: Int, group: Int, at t: Double) {
        for effect in effects {
            switch effect {
            case .setAlarm(let alarm):
                setAlarm(alarm, account: account, group: group)
            case .notify(let notice):
                subscriptionNotification(account: account, group: group, notice, at: t)
            case .mark(let lifecycle):
                emit(
                    lifecycle,
                    account: account,
                    event: newEvent(),
                    at: t,
                    .marker,
                    Truth(kind: .none, effectiveDate: millis(t))
                )
            case .renew(let recovery):
                renew(account: account, group: group, at: t, recovery: recovery)
            case .drawRecovery:
                let billing = billing(group)
                // Half of the failed renewals recover during the billing retry period.
                let recovery = rng.chance(0.5) ? rng.between(0.1, 0.9) * billing.billingRetrySeconds : nil
                guard let sub = accounts[account].sub(group) else { continue }
                play(sub.retryAlarms(recoveryAfter: recovery, billing: billing), account: account, group: group, at: t)
            case .askConsent:
                // The customer accepts a pending price increase half of the time.
                let accepted = rng.chance(0.5)
                drive(account: account, group: group, at: t) { $0.answerPriceIncrease(accepted: accepted) }
            case .drawConsentTime(let version, let periodEndMs):
                let remaining = seconds(periodEndMs) - t
                schedule(
                    .subscription(account: account, group: group, timer: .priceConsent, version: version),
                    at: t + remaining * rng.between(0.2, 0.8)
                )
            }
        }
    }

    /// Schedules a subscription's timer.
    mutating func setAlarm(_ alarm: SubscriptionLifecycle.Alarm, account: Int, group: Int) {
        schedule(
            .subscription(account: account, group: group, timer: alarm.timer, version: alarm.version),
            at: seconds(alarm.periodEndMs) + alarm.secondsAfterPeriodEnd
        )
    }
}
