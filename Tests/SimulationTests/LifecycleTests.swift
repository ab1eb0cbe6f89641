import AppStoreModel
import Foundation
import Profile
import Simulation
import Testing

/// The lifecycles whose obligations the backend must act on: offers that change the level, refunds of older
/// periods, reversals and declines of subscription refunds, and refund requests decided hours later.
struct LifecycleTests {
    static let autoRenewable = ProductKind.autoRenewable.productType

    /// The OFFER_REDEEMED notifications of a rich run, by subtype ("" for none).
    func offers() throws -> [String: [Action]] {
        let actions = run(try richProfile(accounts: 30, seconds: 200))
        return Dictionary(
            grouping: actions.filter { action in
                guard case .notification(let note) = action.delivery else { return false }
                return note.notificationType == "OFFER_REDEEMED"
            }
        ) { action in
            guard case .notification(let note) = action.delivery else { return "" }
            return note.payload.subtype?.rawValue ?? ""
        }
    }

    @Test func offerRedemptionSendsEverySubtype() throws {
        #expect(Set(try offers().keys) == ["", "UPGRADE", "DOWNGRADE"])
    }

    @Test func anUpgradeOfferGrantsTheHigherLevelAtOnce() throws {
        let upgrades = try #require(try offers()["UPGRADE"])
        for action in upgrades {
            let tx = try #require(action.transaction)
            #expect(action.truth.kind == .grant)
            #expect(action.truth.transactionId == tx.transactionId)
            #expect(action.truth.supersedes != nil && action.truth.supersedes != tx.transactionId)
            #expect(tx.payload.offerType == 2 && tx.payload.offerIdentifier != nil)
            #expect(tx.purchaseDate == action.truth.effectiveDate)
            #expect(tx.payload.transactionReason == "PURCHASE")
        }
    }

    @Test func aDowngradeOfferChangesOnlyTheNextRenewal() throws {
        let profile = try richProfile(accounts: 30, seconds: 200)
        let downgrades = try #require(try offers()["DOWNGRADE"])
        for action in downgrades {
            guard case .notification(let note) = action.delivery else { continue }
            let tx = try #require(note.transaction)
            let renewal = try #require(note.renewal)
            // Nothing is owed differently now: the current product stays until the renewal.
            #expect(action.truth.kind == .none)
            #expect(renewal.productId == tx.productId)
            #expect(renewal.autoRenewProductId != tx.productId)
            let level = { (id: String) in profile.catalog.products.first { $0.id == id }!.level }
            #expect(level(try #require(renewal.autoRenewProductId)) > level(tx.productId))
            #expect(renewal.offerType == 2 && renewal.offerIdentifier != nil)
        }
    }

    /// A catalog of subscriptions only: refunds, their reversals and declines all concern subscriptions.
    func subscriptionsOnly(seed: UInt64 = 3) throws -> [Action] {
        let text = """
            {
              name: "subscriptions", seed: \(seed),
              target: { embeddedLedger: true, bundleId: "com.example.test" },
              catalog: {
                groups: [{ id: "premium", billingRetrySeconds: 4 }],
                products: [
                  { id: "gold", type: "autoRenewable", group: "premium", priceMilli: 9990, periodSeconds: 4,
                    offers: [{ id: "gold.winback", kind: "winBack", discount: "payUpFront", priceMilli: 4990 }] },
                ],
              },
              population: { accounts: 20, devicesPerAccount: 1 },
              actionMix: { subscribe: 3, refund: 2, refundReversal: 2 },
              timeCompression: { secondsPerMonth: 4 },
              schedule: [{ kind: "constant", rate: 5, seconds: 120 }],
            }
            """
        return run(try Profile.decode(Data(text.utf8), file: "subscriptions.json5"))
    }

    @Test func aSubscriptionOnlyCatalogGetsReversalsAndDeclines() throws {
        let actions = try subscriptionsOnly()
        let reversals = actions.filter { $0.lifecycle == .refundReversal }
        #expect(!reversals.isEmpty)
        for action in reversals {
            guard case .notification(let note) = action.delivery else { continue }
            #expect(note.notificationType == "REFUND_REVERSED")
            #expect(note.transaction?.type == Self.autoRenewable && note.transaction?.payload.revocationDate == nil)
            #expect(action.truth.kind == .reinstate)
            #expect(action.truth.status == .active || action.truth.status == .expired)
            #expect(note.payload.data?.status == action.truth.status?.wire)
            // The refunded transaction is the one reinstated.
            #expect(
                actions.contains {
                    $0.lifecycle == .refund && $0.at < action.at && $0.truth.transactionId == action.truth.transactionId
                }
            )
        }
        let declines = actions.filter { $0.lifecycle == .refundDeclined }
        #expect(!declines.isEmpty)
        #expect(declines.allSatisfy { $0.transaction?.type == Self.autoRenewable && $0.truth.kind == .none })
    }

    /// A refund and its reversal signed in one millisecond would leave a backend nothing to order them by; at a
    /// rate where an account's actions and its mid-stream refunds often share a millisecond, a reversal comes
    /// after the refund it undoes, a refund after the reversal before it, and a renewal extension after the
    /// purchase it extends and after the extension before it.
    @Test func refundsReversalsAndExtensionsOfATransactionAreSignedApart() throws {
        let text = """
            {
              name: "crowded", seed: 5,
              target: { embeddedLedger: true, bundleId: "com.example.test" },
              catalog: {
                groups: [{ id: "premium" }],
                products: [
                  { id: "gold", type: "autoRenewable", group: "premium", priceMilli: 9990, periodSeconds: 60 },
                  { id: "pass", type: "nonRenewing", priceMilli: 2990, periodSeconds: 60 },
                ],
              },
              population: { accounts: 2, devicesPerAccount: 1 },
              actionMix: { subscribe: 1, nonRenewing: 1, refund: 3, refundReversal: 3, renewalExtension: 3 },
              faults: { refundMidStream: { probability: 0.5 } },
              schedule: [{ kind: "constant", rate: 4000, seconds: 2 }],
            }
            """
        let actions = run(try Profile.decode(Data(text.utf8), file: "crowded.json5"))
        // The event signed at each instant, by transaction (an event's device and webhook copies share it):
        // refunds and reversals apart from each other, extensions apart from every grant of their transaction
        // (a purchase and its own mid-stream refund may share one: a refund always wins over its purchase).
        var changes: [String: [Int64: UInt64]] = [:]
        var grants: [String: [Int64: (UInt64, Bool)]] = [:]
        var (refunds, reversals, extensions) = (0, 0, 0)
        for action in actions {
            guard let id = action.truth.transactionId else { continue }
            let date = action.truth.effectiveDate
            switch action.truth.kind {
            case .revoke, .reinstate:
                if action.truth.kind == .revoke { refunds += 1 } else { reversals += 1 }
                if let other = changes[id]?[date] { #expect(other == action.event, "transaction \(id) at \(date)") }
                changes[id, default: [:]][date] = action.event
            case .grant:
                let extending = action.lifecycle == .renewalExtended
                if extending { extensions += 1 }
                if let (other, otherExtends) = grants[id]?[date], extending || otherExtends {
                    #expect(other == action.event, "transaction \(id) extended at \(date)")
                }
                grants[id, default: [:]][date] = (action.event, extending)
            default: continue
            }
        }
        #expect(refunds > 100 && reversals > 100 && extensions > 100)
        #expect(actions.contains { $0.causedBy == "refundMidStream" })
    }

    @Test func anOlderRenewalCanBeRefundedWithoutEndingTheCurrentPeriod() throws {
        let actions = try subscriptionsOnly()
        var olderRefunds = 0
        for action in actions where action.truth.kind == .revoke {
            let truth = action.truth
            guard case .notification(let note) = action.delivery, let id = truth.transactionId,
                let original = truth.originalTransactionId
            else { continue }
            #expect(note.notificationType == "REFUND")
            #expect(note.transaction?.payload.revocationDate != nil)
            guard truth.status == nil else {
                // The current period refunded: the subscription is revoked.
                #expect(truth.status == .revoked && note.payload.data?.status == SubscriptionStatus.revoked.wire)
                continue
            }
            olderRefunds += 1
            // A newer period of the series was already granted, and it stays: the subscription is not revoked.
            #expect(
                actions.contains {
                    $0.truth.kind == .grant && $0.truth.originalTransactionId == original
                        && UInt64($0.truth.transactionId ?? "0")! > UInt64(id)!
                        && $0.truth.effectiveDate <= truth.effectiveDate
                }
            )
            #expect(note.transaction?.payload.transactionReason == (id == original ? "PURCHASE" : "RENEWAL"))
            #expect(note.payload.data?.status != SubscriptionStatus.revoked.wire)
            #expect(note.transaction.map { ($0.payload.expiresDate ?? 0) <= (note.renewal?.renewalDate ?? 0) } == true)
        }
        #expect(olderRefunds > 0)
    }

    @Test func aConsumptionRequestComesHoursBeforeItsDecision() throws {
        let profile = try richProfile(accounts: 30, seconds: 200)
        let actions = run(profile)
        let notes = actions.compactMap { action -> (Double, NotificationFacts)? in
            guard case .notification(let note) = action.delivery else { return nil }
            return (action.at, note)
        }
        let hours12 = profile.timeCompression.seconds(days: 0.5)
        let hours48 = profile.timeCompression.seconds(days: 2)
        var decided = 0
        for (at, request) in notes where request.notificationType == "CONSUMPTION_REQUEST" {
            let id = request.transaction?.transactionId
            guard
                let decision = notes.first(where: {
                    $0.0 > at && $0.1.transaction?.transactionId == id
                        && ["REFUND", "REFUND_DECLINED"].contains($0.1.notificationType)
                })
            else { continue }
            decided += 1
            #expect(decision.0 - at >= hours12 - 1e-9 && decision.0 - at <= hours48 + 1e-9, "\(decision.0 - at)")
            #expect(decision.1.signedDate > request.signedDate)
        }
        #expect(decided > 0)
    }

    /// A refund request and its decline change nothing, but carry a signed purchase a target may credit: the
    /// truth names it, its product and its units.
    @Test func aRefundRequestNamesThePurchaseItCarries() throws {
        let actions = run(try richProfile(accounts: 30, seconds: 200))
        let carriers = actions.filter { $0.lifecycle == .consumptionRequest || $0.lifecycle == .refundDeclined }
        #expect(carriers.contains { $0.transaction?.type == .consumable })
        for action in carriers {
            let tx = try #require(action.transaction)
            #expect(action.truth.kind == .none && action.truth.transactionId == tx.transactionId)
            #expect(action.truth.productId == tx.productId && action.truth.quantity == Int(tx.quantity))
        }
    }

    @Test func aWinBackOfferBringsALapsedSubscriberBack() throws {
        let subscriptions = try subscriptionsOnly().compactMap { action -> NotificationFacts? in
            guard case .notification(let note) = action.delivery, note.notificationType == "SUBSCRIBED" else {
                return nil
            }
            return note
        }
        let winBacks = subscriptions.filter { $0.transaction?.payload.offerType == 4 }
        #expect(!winBacks.isEmpty)
        #expect(
            winBacks.allSatisfy {
                $0.payload.subtype == "RESUBSCRIBE" && $0.transaction?.payload.offerIdentifier == "gold.winback"
            }
        )
        #expect(winBacks.allSatisfy { $0.transaction?.payload.price == 4990 })
    }

    @Test func aRenewalExtensionEndsTheSameTransactionLater() throws {
        let grants = run(try richProfile(accounts: 30, seconds: 200)).filter { $0.truth.kind == .grant }
        let extensions = grants.filter { $0.lifecycle == .renewalExtended }
        #expect(!extensions.isEmpty)
        for action in extensions {
            guard case .notification(let note) = action.delivery else { continue }
            let expires = try #require(action.truth.expiresDate)
            // The same transaction was granted by its own purchase or renewal, ending earlier; the renewal date
            // moves with it.
            let before = grants.filter {
                $0.lifecycle != .renewalExtended && $0.truth.transactionId == action.truth.transactionId
            }.compactMap(\.truth.expiresDate).min()
            #expect(try #require(before) < expires)
            #expect(note.transaction?.payload.expiresDate == expires)
            #expect(note.renewal?.renewalDate == expires)
            #expect(note.payload.data?.status == SubscriptionStatus.active.wire)
        }
    }
}
