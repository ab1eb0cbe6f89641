import AppStoreModel
import Foundation
import Profile
import Simulation
import Testing

/// Family Sharing of subscriptions, mass renewal extensions' summaries and win-back eligibility: what the world
/// sends for each, and the truth the oracle takes from it.
struct FamilySubscriptionTests {
    static let autoRenewable = ProductKind.autoRenewable.productType

    /// A rich run (its gold subscription is family-shareable, half of the accounts share) with its notifications.
    func notifications(seed: UInt64 = 8) throws -> [(action: Action, note: NotificationFacts)] {
        run(try richProfile(seed: seed, accounts: 30, seconds: 200)).compactMap { action in
            guard case .notification(let note) = action.delivery else { return nil }
            return (action, note)
        }
    }

    /// The member's subscription notifications (FAMILY_SHARED auto-renewable transactions).
    func shared(_ notes: [(action: Action, note: NotificationFacts)]) -> [(action: Action, note: NotificationFacts)] {
        notes.filter {
            $0.note.transaction?.payload.inAppOwnershipType == "FAMILY_SHARED"
                && $0.note.transaction?.type == Self.autoRenewable
        }
    }

    @Test func aSharedSubscriptionGivesThePartnerItsOwnTransactions() throws {
        let notes = try notifications()
        let members = shared(notes)
        let starts = members.filter { $0.action.lifecycle == .familySubscribe }
        #expect(!starts.isEmpty)
        #expect(members.contains { $0.note.notificationType == "DID_RENEW" })
        let purchased = Set(
            notes.compactMap { $0.note.transaction }.filter { $0.payload.inAppOwnershipType == "PURCHASED" }.map(
                \.transactionId
            )
        )
        for (action, note) in members {
            let transaction = try #require(note.transaction)
            #expect(transaction.payload.appAccountToken == action.appAccountToken)
            #expect(transaction.payload.price == 0 && transaction.payload.offerType == nil)
            #expect(!purchased.contains(transaction.transactionId))
            #expect(note.renewal?.originalTransactionId == transaction.originalTransactionId)
            #expect(note.renewal?.appAccountToken == action.appAccountToken)
            #expect(action.truth.transactionId == transaction.transactionId)
            #expect(action.truth.originalTransactionId == transaction.originalTransactionId)
            #expect(action.truth.groupId != nil && action.truth.status != nil)
        }
        for (action, note) in starts {
            #expect(note.notificationType == "SUBSCRIBED")
            #expect(note.payload.subtype == "INITIAL_BUY" || note.payload.subtype == "RESUBSCRIBE")
            #expect(action.truth.kind == .grant && action.truth.status == .active)
        }
        // Each of the member's periods is its own transaction in the member's own series.
        let grants = members.filter { $0.action.truth.kind == .grant && $0.note.notificationType != "RENEWAL_EXTENDED" }
        let ids = grants.compactMap { $0.note.transaction?.transactionId }
        #expect(Set(ids).count == ids.count)
        for (_, note) in grants where note.notificationType == "DID_RENEW" {
            let original = note.transaction?.originalTransactionId
            #expect(starts.contains { $0.note.transaction?.transactionId == original })
        }
    }

    @Test func aRevokedShareEndsThePartnersSubscription() throws {
        let notes = try notifications()
        let revokes = shared(notes).filter { $0.action.lifecycle == .familyRevoke }
        #expect(!revokes.isEmpty)
        for (action, note) in revokes {
            #expect(note.notificationType == "REVOKE" && note.payload.subtype == nil)
            #expect(note.transaction?.payload.revocationType == "FAMILY_REVOKE")
            #expect(note.transaction?.payload.revocationDate == note.signedDate)
            #expect(note.payload.data?.status == SubscriptionStatus.revoked.wire)
            #expect(action.truth.kind == .revoke && action.truth.status == .revoked)
            // Nothing renews the revoked series until the purchaser shares a new subscription.
            let original = note.transaction?.originalTransactionId
            let later = shared(notes).filter {
                $0.action.at > action.at && $0.note.transaction?.originalTransactionId == original
            }
            if let next = later.first {
                #expect(next.action.lifecycle == .familySubscribe && next.note.payload.subtype == "RESUBSCRIBE")
            }
        }
    }

    @Test func aMassExtensionEndsWithASummaryForNoAccount() throws {
        let notes = try notifications()
        let summaries = notes.filter { $0.action.lifecycle == .renewalExtensionSummary }
        #expect(!summaries.isEmpty)
        for (action, note) in summaries {
            #expect(note.notificationType == "RENEWAL_EXTENSION" && note.payload.subtype == "SUMMARY")
            #expect(note.transaction == nil && note.renewal == nil && note.payload.data?.status == nil)
            let summary = try #require(note.payload.summary)
            #expect(summary.requestIdentifier != nil && summary.bundleId == "com.example.test")
            let total = (summary.succeededCount ?? 0) + (summary.failedCount ?? 0)
            #expect((1...3).contains(total))
            // It grants nothing, and it follows the extensions it sums up.
            #expect(action.truth.kind == .none && action.truth.transactionId == nil)
            let extended = notes.filter {
                $0.action.lifecycle == .renewalExtended && $0.action.at <= action.at
                    && $0.note.transaction?.productId == summary.productId
            }
            #expect(extended.count >= Int(summary.succeededCount ?? 0))
            // Signed as Apple does: `summary` in place of `data`.
            #expect(note.payload.data == nil && note.payload.summary == summary)
        }
    }

    @Test func aLapsedSubscriberIsToldItsWinBackOffers() throws {
        let notes = try LifecycleTests().subscriptionsOnly().compactMap { action -> NotificationFacts? in
            guard case .notification(let note) = action.delivery else { return nil }
            return note
        }
        let expired = notes.filter { $0.notificationType == "EXPIRED" }
        #expect(!expired.isEmpty)
        #expect(expired.allSatisfy { $0.renewal?.eligibleWinBackOfferIds == ["gold.winback"] })
        let active = notes.filter { $0.payload.data?.status == SubscriptionStatus.active.wire }
        #expect(!active.isEmpty)
        #expect(active.allSatisfy { $0.renewal?.eligibleWinBackOfferIds == nil })
    }

    /// A run of one family-shared subscription, refunds and reversals (every account shares with its partner).
    func sharedRefunds(seed: UInt64) throws -> [(action: Action, note: NotificationFacts)] {
        let text = """
            {
              name: "shared-refunds", seed: \(seed),
              target: { embeddedLedger: true, bundleId: "com.example.test" },
              catalog: {
                groups: [{ id: "premium" }],
                products: [
                  { id: "gold", type: "autoRenewable", group: "premium", level: 1, priceMilli: 9990, periodSeconds: 30,
                    familyShareable: true },
                ],
              },
              population: { accounts: 20, devicesPerAccount: 1, familySharingFraction: 1 },
              actionMix: { subscribe: 2, refund: 2, refundReversal: 2 },
              timeCompression: { secondsPerMonth: 30 },
              schedule: [{ kind: "constant", rate: 5, seconds: 60 }],
            }
            """
        let profile = try Profile.decode(Data(text.utf8), file: "shared-refunds.json5")
        return run(profile).compactMap { action in
            guard case .notification(let note) = action.delivery else { return nil }
            return (action, note)
        }
    }

    /// A reversed refund of the purchaser's period gives the partner back its transaction of that period, which
    /// the refund revoked: its own `REFUND_REVERSED`, in the same instant; and no partner is reinstated otherwise.
    @Test(arguments: [3, 8] as [UInt64])
    func aReversedRefundReinstatesThePartnersRevokedPeriod(seed: UInt64) throws {
        let notes = try sharedRefunds(seed: seed)
        let members = shared(notes)
        let purchaserReversals = notes.filter {
            $0.note.notificationType == "REFUND_REVERSED"
                && $0.note.transaction?.payload.inAppOwnershipType == "PURCHASED"
        }
        let reinstated = members.filter { $0.note.notificationType == "REFUND_REVERSED" }
        #expect(!reinstated.isEmpty, "no partner of seed \(seed) was reinstated")
        for (action, note) in reinstated {
            let transaction = try #require(note.transaction)
            #expect(
                purchaserReversals.contains { $0.action.at == action.at && $0.action.account == action.account ^ 1 }
            )
            let revoke = members.last {
                $0.action.at < action.at && $0.action.lifecycle == .familyRevoke
                    && $0.note.transaction?.transactionId == transaction.transactionId
            }
            #expect(revoke != nil, "transaction \(transaction.transactionId) was reinstated without a revocation")
            #expect(action.truth.kind == .reinstate && action.truth.status == .active)
            #expect(transaction.payload.revocationDate == nil && transaction.payload.price == 0)
            #expect(note.payload.data?.status == SubscriptionStatus.active.wire)
        }
    }
}
