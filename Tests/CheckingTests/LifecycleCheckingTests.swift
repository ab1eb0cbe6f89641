import AppStoreModel
import Chaos
import Checking
import Foundation
import Profile
import Simulation
import Testing

/// What the oracle owes after the lifecycles that change a subscription without a plain purchase: an offer
/// that upgrades (owed at once) or downgrades (owed only at the next renewal), the refund of an older period
/// (the current one stays owed), and the reversal of a subscription's refund (owed again).
struct LifecycleCheckingTests {
    /// Subscriptions only, with long periods so that a probe a few seconds after an event is far from any
    /// boundary.
    func profile() throws -> Profile {
        let text = """
            {
              name: "lifecycles", seed: 4,
              target: { embeddedLedger: true, bundleId: "com.example.test" },
              catalog: {
                groups: [{ id: "g", billingRetrySeconds: 10 }],
                products: [
                  { id: "gold", type: "autoRenewable", group: "g", level: 1, priceMilli: 9990, periodSeconds: 20,
                    offers: [{ id: "gold.promo", kind: "promotional", discount: "payAsYouGo", priceMilli: 4990 }] },
                  { id: "silver", type: "autoRenewable", group: "g", level: 2, priceMilli: 4990, periodSeconds: 20,
                    offers: [{ id: "silver.promo", kind: "promotional", discount: "payUpFront", priceMilli: 1990 }] },
                ],
              },
              population: { accounts: 30, devicesPerAccount: 1 },
              actionMix: { subscribe: 3, offerRedemption: 2, refund: 2, refundReversal: 3, renewalExtension: 2 },
              timeCompression: { secondsPerMonth: 20 },
              schedule: [{ kind: "constant", rate: 4, seconds: 90 }],
            }
            """
        return try Profile.decode(Data(text.utf8), file: "lifecycles.json5")
    }

    /// A decisive moment after a delivery: the checker and an ideal target fed every delivery up to `probe`
    /// (by default 4 s later), when nothing else happened to the account in between and its period ends well
    /// after.
    struct Moment {
        var checker: Checker
        var ideal: IdealTarget
        var delivery: PlannedDelivery
        var t: Double
    }

    func moment(
        after match: (PlannedDelivery) -> Bool,
        probe: (PlannedDelivery, [PlannedDelivery]) -> Double? = { delivery, _ in delivery.at + 4 }
    ) throws -> Moment {
        let profile = try self.profile()
        let planned = Array(ChaosStream(World(profile: profile, startMillis: start), profile: profile))
        let found = planned.first { candidate in
            guard match(candidate), case .notification(let note) = candidate.action.delivery,
                let expires = note.renewal?.renewalDate, let t = probe(candidate, planned)
            else { return false }
            let quiet = !planned.contains {
                $0.action.appAccountToken == candidate.action.appAccountToken
                    && $0.action.event != candidate.action.event
                    && $0.at > candidate.at - 2 && $0.at <= t + 2
            }
            return quiet && Double(expires - start) / 1000 > t + 3
        }
        let delivery = try #require(found)
        let t = try #require(probe(delivery, planned))
        let checker = Checker(profile: profile, startMillis: start)
        var ideal = IdealTarget()
        for item in planned where item.at <= t {
            checker.sent(item, at: item.at)
            ideal.apply(item)
            if item.sends { checker.record(item, outcome: .acknowledged(status: 200), at: item.at) }
        }
        return Moment(checker: checker, ideal: ideal, delivery: delivery, t: t)
    }

    func notification(_ delivery: PlannedDelivery, _ type: NotificationTypeV2, _ subtype: Subtype?) -> Bool {
        guard case .notification(let note) = delivery.action.delivery else { return false }
        return note.notificationType == type && note.payload.subtype == subtype
    }

    /// The subscription-state outcome of a final probe showing `state`.
    func subscriptionState(_ m: Moment, _ state: AccountState) -> [Invariant] {
        failures(m.checker.check(account: m.delivery.action.appAccountToken, state: state, at: m.t, final: true))
    }

    @Test func anUpgradeOfferTheTargetDidNotStoreFailsSubscriptionState() throws {
        let m = try moment { notification($0, "OFFER_REDEEMED", "UPGRADE") }
        let token = m.delivery.action.appAccountToken
        let truth = m.delivery.action.truth
        let correct = m.ideal.state(token, at: m.t)
        #expect(correct.entitlements.map(\.productId) == [truth.productId!])
        #expect(subscriptionState(m, correct).isEmpty)
        // Answered 200 and stored nothing: still the lower level, through the superseded transaction.
        var stale = correct
        stale.entitlements = [.init(productId: "silver", transactionId: truth.supersedes)]
        #expect(subscriptionState(m, stale).contains(.subscriptionState))
    }

    @Test func aDowngradeOfferAppliedAtOnceFailsSubscriptionState() throws {
        let m = try moment { notification($0, "OFFER_REDEEMED", "DOWNGRADE") }
        let token = m.delivery.action.appAccountToken
        let correct = m.ideal.state(token, at: m.t)
        let current = try #require(m.delivery.action.transaction)
        #expect(correct.entitlements.map(\.productId) == [current.productId])
        #expect(subscriptionState(m, correct).isEmpty)
        var early = correct
        early.entitlements[0].productId = current.productId == "gold" ? "silver" : "gold"
        #expect(subscriptionState(m, early).contains(.subscriptionState))
    }

    @Test func anOlderPeriodRefundedLeavesTheCurrentOneOwed() throws {
        let m = try moment {
            $0.action.truth.kind == .revoke && $0.action.truth.status == nil && notification($0, "REFUND", nil)
        }
        let token = m.delivery.action.appAccountToken
        let correct = m.ideal.state(token, at: m.t)
        #expect(!correct.entitlements.isEmpty)
        #expect(!correct.entitlements.contains { $0.transactionId == m.delivery.action.truth.transactionId })
        #expect(subscriptionState(m, correct).isEmpty)
        // Refunded "the product": the current period ended with the older one.
        var byProduct = correct
        byProduct.entitlements = []
        #expect(subscriptionState(m, byProduct).contains(.subscriptionState))
    }

    @Test func aReversedSubscriptionRefundIsOwedAgain() throws {
        let m = try moment {
            $0.action.truth.kind == .reinstate && $0.action.truth.status == .active
                && notification($0, "REFUND_REVERSED", nil)
        }
        let token = m.delivery.action.appAccountToken
        let correct = m.ideal.state(token, at: m.t)
        #expect(correct.entitlements.map(\.transactionId) == [m.delivery.action.truth.transactionId])
        #expect(subscriptionState(m, correct).isEmpty)
        var ignored = correct
        ignored.entitlements = []
        #expect(subscriptionState(m, ignored).contains(.subscriptionState))
    }

    @Test func anIgnoredRenewalExtensionFailsSubscriptionState() throws {
        // Probed 3 s after the end the extension moved: owed still, but not by a target that ignored it.
        let extended = { (delivery: PlannedDelivery) in notification(delivery, "RENEWAL_EXTENDED", nil) }
        let m = try moment(after: extended) { extended, planned in
            let id = extended.action.truth.transactionId
            let ends = planned.filter { $0.action.truth.kind == .grant && $0.action.truth.transactionId == id }
                .compactMap(\.action.truth.expiresDate)
            guard let before = ends.min(), before < extended.action.truth.expiresDate ?? 0 else { return nil }
            return max(extended.at + 3, Double(before - start) / 1000 + 3)
        }
        let token = m.delivery.action.appAccountToken
        let correct = m.ideal.state(token, at: m.t)
        #expect(correct.entitlements.map(\.expiresDate) == [m.delivery.action.truth.expiresDate])
        #expect(subscriptionState(m, correct).isEmpty)
        #expect(subscriptionState(m, AccountState()).contains(.subscriptionState))
    }

    /// A subscription's transaction refunded and the series resubscribed in the same millisecond, the refunded
    /// transaction's device delivery dispatched after the resubscription: at equal signed dates, a refund of another
    /// transaction does not end the current one's state, so a target that entitles the new transaction (as the
    /// reference ledger, which keeps the stored state at equal signed dates) passes.
    @Test func refundOfAnotherTransactionAtTheSameMillisecondLeavesTheNewPeriod() throws {
        var script = try Script(try scriptProfile())
        script.play(.grant, "1500", "gold", .autoRenewable, at: 1, expires: 100, original: "1000")
        script.play(.revoke, "1500", "gold", .autoRenewable, at: 5, expires: 100, original: "1000")
        script.play(.grant, "2000", "gold", .autoRenewable, at: 5, expires: 105, original: "1000")
        // The device's delivery of the refunded transaction, dispatched last, signed with the refund.
        script.play(.revoke, "1500", "gold", .autoRenewable, at: 5, onDevice: true, expires: 100, original: "1000")
        let entitled = AccountState(
            entitlements: [.init(productId: "gold", transactionId: "2000", expiresDate: start + 105_000)]
        )
        #expect(failures(script.check(entitled, at: 10)).isEmpty)
        // The refunded transaction itself is still no entitlement.
        let refunded = AccountState(
            entitlements: [.init(productId: "gold", transactionId: "1500", expiresDate: start + 100_000)]
        )
        #expect(failures(script.check(refunded, at: 11)).contains(.revocationHonored))
    }
}
