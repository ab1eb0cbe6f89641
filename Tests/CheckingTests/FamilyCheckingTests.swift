import AppStoreModel
import Chaos
import Checking
import Foundation
import Profile
import Simulation
import Testing

/// What the oracle owes a Family Sharing member of a subscription (its own transaction while shared, nothing after
/// `REVOKE`), and what it asks of a mass extension's `RENEWAL_EXTENSION`/`SUMMARY` (a 2xx, and no grant).
struct FamilyCheckingTests {
    /// Every pair shares, the gold subscription is family-shareable, periods are long (a probe a few seconds after
    /// an event is far from any boundary), and the App Store gives up on a notification after two retries.
    func profile() throws -> Profile {
        let text = """
            {
              name: "family", seed: 5,
              target: { embeddedLedger: true, bundleId: "com.example.test" },
              catalog: {
                groups: [{ id: "g", billingRetrySeconds: 10 }],
                products: [
                  { id: "gold", type: "autoRenewable", group: "g", level: 1, priceMilli: 9990, periodSeconds: 20,
                    familyShareable: true },
                ],
              },
              population: { accounts: 30, devicesPerAccount: 1, familySharingFraction: 1 },
              actionMix: { subscribe: 3, refund: 1, renewalExtension: 2 },
              timeCompression: { secondsPerMonth: 20 },
              schedule: [{ kind: "constant", rate: 4, seconds: 90 }],
            }
            """
        return try Profile.decode(Data(text.utf8), file: "family.json5")
    }

    /// A decisive moment: the checker and an ideal target fed every delivery of the run up to 4 s after the first
    /// one that `match`es, all acknowledged except those `refuse` picks (rejected with 500, and so is each retry
    /// the App Store makes).
    struct Moment {
        var checker: Checker
        var ideal: IdealTarget
        var delivery: PlannedDelivery
        var t: Double

        var token: String { delivery.action.appAccountToken }

        /// The invariants a final probe showing `state` fails.
        func failed(_ state: AccountState) -> [Invariant] {
            failures(checker.check(account: token, state: state, at: t, final: true))
        }
    }

    func moment(
        after match: (PlannedDelivery) -> Bool,
        refuse: (PlannedDelivery) -> Bool = { _ in false }
    ) throws -> Moment {
        let profile = try self.profile()
        let planned = Array(ChaosStream(World(profile: profile, startMillis: start), profile: profile))
        let found = planned.first { match($0) }
        let delivery = try #require(found)
        let t = delivery.at + 4
        let checker = Checker(profile: profile, startMillis: start)
        let policy = ChaosPolicy(profile: profile)
        var ideal = IdealTarget()
        for item in planned where item.at <= t {
            checker.sent(item, at: item.at)
            guard item.sends else { continue }
            guard refuse(item) else {
                ideal.apply(item)
                checker.record(item, outcome: .acknowledged(status: 200), at: item.at)
                continue
            }
            var attempt: PlannedDelivery? = item
            while let current = attempt {
                checker.record(current, outcome: .rejected(status: 500), at: current.at)
                attempt = policy.followUps(after: current, outcome: .rejected(status: 500), at: current.at).first {
                    $0.copy == .retry
                }
            }
        }
        return Moment(checker: checker, ideal: ideal, delivery: delivery, t: t)
    }

    func isMember(_ delivery: PlannedDelivery, _ lifecycle: Lifecycle) -> Bool {
        guard case .notification(let note) = delivery.action.delivery else { return false }
        return delivery.action.lifecycle == lifecycle && note.transaction?.payload.inAppOwnershipType == .familyShared
            && note.transaction?.type == .autoRenewableSubscription
    }

    @Test func aMemberIsOwedItsSharedSubscription() throws {
        let m = try moment { isMember($0, .familySubscribe) }
        let truth = m.delivery.action.truth
        #expect(truth.kind == .grant && truth.status == .active)
        let correct = m.ideal.state(m.token, at: m.t)
        #expect(correct.entitlements.contains { $0.transactionId == truth.transactionId })
        #expect(m.failed(correct).isEmpty)
        // A backend that does not grant FAMILY_SHARED transactions leaves the member without its subscription.
        var missing = correct
        missing.entitlements.removeAll { $0.transactionId == truth.transactionId }
        missing.grants?.removeAll { $0.transactionId == truth.transactionId }
        #expect(!m.failed(missing).isEmpty)
    }

    @Test func aMemberKeepsNothingAfterRevoke() throws {
        let m = try moment { isMember($0, .familyRevoke) }
        let truth = m.delivery.action.truth
        #expect(truth.kind == .revoke && truth.status == .revoked)
        let correct = m.ideal.state(m.token, at: m.t)
        #expect(!correct.entitlements.contains { $0.transactionId == truth.transactionId })
        #expect(m.failed(correct).isEmpty)
        // A backend that ignores REVOKE keeps the member's shared subscription.
        var kept = correct
        kept.entitlements.append(.init(productId: truth.productId!, transactionId: truth.transactionId))
        #expect(m.failed(kept).contains(.revocationHonored))
    }

    @Test func aMassExtensionSummaryMustBeAcknowledgedAndGrantsNothing() throws {
        let isSummary: (PlannedDelivery) -> Bool = { $0.action.lifecycle == .renewalExtensionSummary }
        let accepted = try moment(after: isSummary)
        #expect(accepted.failed(accepted.ideal.state(accepted.token, at: accepted.t)).isEmpty)
        // Refused on every attempt the App Store makes: the backend lost it, though it grants nothing. Its
        // refusals prove it: no probe is needed.
        let refused = try moment(after: isSummary, refuse: isSummary)
        #expect(refused.failed(refused.ideal.state(refused.token, at: refused.t)).isEmpty)
        let verdict = refused.checker.verdict(unchecked: [])
        // Every summary until then was refused: each is one lost notification.
        let lost = try #require(verdict.lostNotifications["RENEWAL_EXTENSION/SUMMARY"])
        #expect(lost >= 1 && verdict.lostNotifications.count == 1)
        #expect(verdict.tallies[.noLostNotification]?.failed == lost)
    }
    /// A member whose shared series ended (revoked or expired) and who then subscribed itself holds two series in
    /// one group: the entitlement of its own series is no violation of the ended one's.
    @Test func twoSeriesInOneGroupRaiseNoFalseAlarm() throws {
        let (checker, ideal, planned) = play(try profile())
        let members = Set(planned.filter { isMember($0, .familyRevoke) }.map(\.action.appAccountToken))
        let ownAfterShare = Set(
            planned.filter { delivery in
                delivery.action.lifecycle == .subscribe || delivery.action.lifecycle == .resubscribe
            }.map(\.action.appAccountToken)
        ).intersection(members)
        #expect(!ownAfterShare.isEmpty)
        let end = (planned.last?.at ?? 0) + 1
        for token in checker.knownAccounts() {
            let results = checker.check(account: token, state: ideal.state(token, at: end), at: end, final: true)
            #expect(failures(results).isEmpty, "\(token): \(results)")
        }
    }
}
