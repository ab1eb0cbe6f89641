import AppStoreModel
import Testing

@testable import Simulation

/// Every transition of the subscription lifecycle as one table: a state, an event, the state it leads to and
/// the effects the world must carry out, in order.
struct SubscriptionTransitionTests {
    typealias Machine = SubscriptionLifecycle

    /// Where a row starts: a subscription bought at 10 s whose period ends at 14 s, then led there.
    enum From: CaseIterable {
        case active, cancelled, failing, pricePending, gracePeriod, billingRetry, expired, revoked

        var machine: Machine {
            var (machine, _) = SubscriptionLifecycleTests.subscribed()
            let grace = SubscriptionLifecycleTests.grace
            switch self {
            case .active: break
            case .cancelled: _ = machine.setAutoRenew(false)
            case .failing: _ = machine.armBillingFailure()
            case .pricePending: _ = machine.announcePriceIncrease()
            case .gracePeriod, .billingRetry:
                _ = machine.armBillingFailure()
                _ = machine.fire(.renewal, version: machine.version, billing: grace)
                if self == .billingRetry { _ = machine.fire(.graceEnd, version: machine.version, billing: grace) }
            case .expired:
                _ = machine.setAutoRenew(false)
                _ = machine.fire(.renewal, version: machine.version, billing: grace)
            case .revoked: machine.revoke(nowMs: 11_000, reason: 1)
            }
            return machine
        }
    }

    /// An event put to the machine.
    enum Event {
        case fire(Machine.Timer)
        /// A timer set before the last transition.
        case fireStale(Machine.Timer)
        case answer(accepted: Bool)
        case autoRenew(Bool)
        case armBillingFailure
        case announcePriceIncrease
        case extend
        case revoke
        case reinstate(nowMs: Int64)
        case renew(recovery: Bool, nowMs: Int64)
        case resubscribe(nowMs: Int64)

        func apply(to machine: inout Machine) -> [Machine.Effect] {
            let grace = SubscriptionLifecycleTests.grace
            switch self {
            case .fire(let timer): return machine.fire(timer, version: machine.version, billing: grace)
            case .fireStale(let timer): return machine.fire(timer, version: machine.version &- 1, billing: grace)
            case .answer(let accepted): return machine.answerPriceIncrease(accepted: accepted)
            case .autoRenew(let enable): return machine.setAutoRenew(enable)
            case .armBillingFailure: return machine.armBillingFailure()
            case .announcePriceIncrease: return machine.announcePriceIncrease()
            case .extend: return machine.extendRenewal(byMillis: 1_000)
            case .revoke:
                machine.revoke(nowMs: 12_000, reason: 0)
                return []
            case .reinstate(let nowMs): return machine.reinstate(nowMs: nowMs)
            case .renew(let recovery, let nowMs):
                let levels = SubscriptionLifecycleTests.levels
                return machine.renew(transaction: 101, webOrder: 2, nowMs: nowMs, recovery: recovery, levels: levels)
            case .resubscribe(let nowMs):
                return machine.subscribe(
                    position: 1,
                    level: SubscriptionLifecycleTests.levels[1],
                    transaction: 101,
                    webOrder: 2,
                    nowMs: nowMs,
                    offer: nil,
                    resubscribing: true,
                    lapseMillis: 60_000
                )
            }
        }
    }

    /// A state with the data only it holds.
    enum To: Equatable {
        case active, billingRetry
        case gracePeriod(endsMs: Int64)
        case expired(intent: ExpirationIntent)
        case revoked(atMs: Int64, reason: RevocationReason)

        init(_ machine: Machine) {
            switch machine.status {
            case .active: self = .active
            case .billingRetry: self = .billingRetry
            case .gracePeriod: self = .gracePeriod(endsMs: machine.graceExpiresMs)
            case .expired: self = .expired(intent: machine.expirationIntent)
            case .revoked: self = .revoked(atMs: machine.revocationMs, reason: machine.revocationReason)
            }
        }
    }

    /// An effect, with an alarm's version left out (checked apart: it is always the machine's new one).
    enum Does: Equatable {
        case alarm(Machine.Timer, periodEndMs: Int64, after: Double)
        case notify(NotificationTypeV2, Subtype?)
        case mark(Lifecycle)
        case renew(recovery: Bool)
        case drawRecovery, askConsent
        case drawConsentTime(periodEndMs: Int64)

        init(_ effect: Machine.Effect) {
            switch effect {
            case .setAlarm(let alarm):
                self = .alarm(alarm.timer, periodEndMs: alarm.periodEndMs, after: alarm.secondsAfterPeriodEnd)
            case .notify(let notice): self = .notify(notice.type, notice.subtype)
            case .mark(let lifecycle): self = .mark(lifecycle)
            case .renew(let recovery): self = .renew(recovery: recovery)
            case .drawRecovery: self = .drawRecovery
            case .askConsent: self = .askConsent
            case .drawConsentTime(_, let periodEndMs): self = .drawConsentTime(periodEndMs: periodEndMs)
            }
        }
    }

    static let expired = Does.notify("EXPIRED", "VOLUNTARY")
    static let renewalAt18 = Does.alarm(.renewal, periodEndMs: 18_000, after: 0)
    static let renewalAt14 = Does.alarm(.renewal, periodEndMs: 14_000, after: 0)

    static let table: [(From, Event, To, [Does])] = [
        (.active, .fire(.renewal), .active, [.renew(recovery: false)]),
        (.active, .fireStale(.renewal), .active, []),
        (.active, .fire(.recovery), .active, []),
        (.active, .fire(.graceEnd), .active, []),
        (.active, .fire(.retryEnd), .active, []),
        (.active, .fire(.priceConsent), .active, []),
        (.active, .autoRenew(false), .active, [.notify("DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_DISABLED")]),
        (.active, .armBillingFailure, .active, [.mark(.billingFailureArmed)]),
        (
            .active, .announcePriceIncrease, .active,
            [.drawConsentTime(periodEndMs: 14_000), .notify("PRICE_INCREASE", "PENDING")]
        ),
        (
            .active, .extend, .active,
            [.alarm(.renewal, periodEndMs: 15_000, after: 0), .notify("RENEWAL_EXTENDED", nil)]
        ),
        (.active, .revoke, .revoked(atMs: 12_000, reason: 0), []),
        (.active, .renew(recovery: false, nowMs: 14_000), .active, [renewalAt18]),
        (.cancelled, .fire(.renewal), .expired(intent: .customerCancelled), [expired]),
        (.cancelled, .autoRenew(true), .active, [.notify("DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_ENABLED")]),
        (
            .failing, .fire(.renewal), .gracePeriod(endsMs: 16_000),
            [.drawRecovery, .notify("DID_FAIL_TO_RENEW", "GRACE_PERIOD")]
        ),
        (
            .pricePending, .fire(.renewal), .expired(intent: .customerDidNotConsentToPriceIncrease),
            [.notify("EXPIRED", "PRICE_INCREASE")]
        ),
        (.pricePending, .fire(.priceConsent), .active, [.askConsent]),
        (.pricePending, .answer(accepted: true), .active, [.notify("PRICE_INCREASE", "ACCEPTED")]),
        (.pricePending, .answer(accepted: false), .active, []),
        (.active, .answer(accepted: true), .active, []),
        (.gracePeriod, .fireStale(.renewal), .gracePeriod(endsMs: 16_000), []),
        (.gracePeriod, .fire(.recovery), .gracePeriod(endsMs: 16_000), [.renew(recovery: true)]),
        (.gracePeriod, .fire(.graceEnd), .billingRetry, [.notify("GRACE_PERIOD_EXPIRED", nil)]),
        (.gracePeriod, .fire(.retryEnd), .expired(intent: .billingError), [.notify("EXPIRED", "BILLING_RETRY")]),
        (
            .gracePeriod, .renew(recovery: true, nowMs: 15_000), .active,
            [.alarm(.renewal, periodEndMs: 19_000, after: 0)]
        ),
        (.gracePeriod, .revoke, .revoked(atMs: 12_000, reason: 0), []),
        (.billingRetry, .fire(.graceEnd), .billingRetry, []),
        (.billingRetry, .fire(.recovery), .billingRetry, [.renew(recovery: true)]),
        (.billingRetry, .fire(.retryEnd), .expired(intent: .billingError), [.notify("EXPIRED", "BILLING_RETRY")]),
        (.expired, .fire(.recovery), .expired(intent: .customerCancelled), []),
        (.expired, .fire(.retryEnd), .expired(intent: .customerCancelled), []),
        (.expired, .resubscribe(nowMs: 30_000), .active, [.alarm(.renewal, periodEndMs: 34_000, after: 0)]),
        (.revoked, .fireStale(.renewal), .revoked(atMs: 11_000, reason: 1), []),
        (.revoked, .reinstate(nowMs: 12_000), .active, [renewalAt14]),
        (.revoked, .reinstate(nowMs: 20_000), .expired(intent: .customerCancelled), []),
        (.revoked, .resubscribe(nowMs: 30_000), .active, [.alarm(.renewal, periodEndMs: 34_000, after: 0)]),
    ]

    @Test(arguments: table)
    func aTransitionLeadsToItsStateAndEffects(from: From, event: Event, to: To, does: [Does]) {
        var machine = from.machine
        let effects = event.apply(to: &machine)
        #expect(To(machine) == to)
        #expect(effects.map(Does.init) == does)
        for alarm in SubscriptionLifecycleTests.alarms(effects) { #expect(alarm.version == machine.version) }
    }

    @Test(arguments: From.allCases)
    func aStaleTimerLeavesEveryStateAlone(from: From) {
        let before = from.machine
        for timer in [Machine.Timer.renewal, .recovery, .graceEnd, .retryEnd, .priceConsent] {
            var machine = before
            #expect(Event.fireStale(timer).apply(to: &machine).isEmpty)
            #expect(machine == before)
        }
    }
}
