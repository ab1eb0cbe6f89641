import AppStoreModel
import Chaos
import Foundation
import PayStorm
import Primitives
import Profile
import RunControl
import Simulation

extension TargetCheck {
    /// One request of the check.
    struct Step {
        enum Kind { case genuine, duplicate, forgery, pending }
        var kind: Kind
        var delivery: PlannedDelivery

        var role: String {
            switch delivery.action.delivery {
            case .notification: "webhook"
            case .device: "deviceDelivery"
            case .report: "deviceReport"
            case .marker: "marker"
            }
        }

        /// The role as a sentence says it.
        var roleWords: String {
            switch delivery.action.delivery {
            case .notification: "webhook"
            case .device: "device delivery"
            case .report: "device report"
            case .marker: "marker"
            }
        }

        var sends: String {
            switch kind {
            case .genuine: "genuine purchase"
            case .duplicate: "duplicate (same bytes)"
            case .forgery: "forgery (\(TargetCheck.forgery))"
            case .pending: "pending report"
            }
        }
    }

    /// The check's requests, taken from the run's own world: one account buys one product (a non-consumable
    /// when the catalog has one, else its first product) on one device, and the check derives the duplicate,
    /// the forgery and the pending report from that purchase the way Chaos derives its faults.
    struct Plan {
        var profile: Profile
        var startMillis: Int64
        var product: Product
        var steps: [Step]
        var accounts: (purchase: String, forgery: String, pending: String)
        /// The latest intended time of the plan, in seconds from `startMillis`.
        var latest: Double

        /// Seconds since `startMillis`: the checker's clock.
        func now() -> Double { Date().timeIntervalSince1970 - Double(startMillis) / 1000 }

        init(profile original: Profile) throws(RunError) {
            var profile = original
            // The accounts and transactions are new to a target that keeps its state even when the check runs
            // again: `PayStormRun.load` gave such a target's profile a fresh namespace, as it does for a run.
            let product = original.catalog.products.first { $0.type == .nonConsumable } ?? original.catalog.products[0]
            profile.catalog.products = [product]
            profile.actionMix = try Self.mix(buying: product)
            profile.population = Population(accounts: 3, devicesPerAccount: 1, familySharingFraction: 0)
            profile.faults = Faults()
            // Real time: nothing renews or expires while the check runs.
            profile.timeCompression.secondsPerMonth = 2_592_000
            profile.schedule = [RateSegment(.constant(rate: 1), seconds: 1)]
            self.profile = profile
            self.product = product
            startMillis = Int64(Date().timeIntervalSince1970 * 1000)

            let world = World(profile: profile, startMillis: startMillis)
            let planned = Array(ChaosStream(world, profile: profile).prefix(16))
            guard
                let webhook = planned.first(where: {
                    if case .notification = $0.action.delivery { true } else { false }
                })
            else { throw .internalError("the check's world made no purchase of \(product.id)") }
            let device = planned.first { if case .device = $0.action.delivery { true } else { false } }
            // The world's other two accounts: fresh, and never the buyer's.
            let buyer = webhook.action.account
            accounts = (
                webhook.action.appAccountToken,
                profile.identities.accountToken((buyer + 1) % 3),
                profile.identities.accountToken((buyer + 2) % 3)
            )
            var nextID = (planned.map(\.id).max() ?? 0) + 1
            func fresh() -> UInt64 {
                defer { nextID += 1 }
                return nextID
            }

            var steps: [Step] = []
            // The device posts the purchase result first, then the App Store's notification arrives.
            if let device { steps.append(Step(kind: .genuine, delivery: device)) }
            steps.append(Step(kind: .genuine, delivery: webhook))
            var duplicate = webhook
            duplicate.id = fresh()
            duplicate.copy = .delayedDuplicate
            duplicate.sameBytesAs = webhook.id
            steps.append(Step(kind: .duplicate, delivery: duplicate))
            steps.append(Step(kind: .forgery, delivery: Self.forged(webhook, id: fresh(), account: accounts.forgery)))
            steps.append(
                Step(kind: .pending, delivery: Self.pending(webhook, id: fresh(), account: accounts.pending))
            )
            self.steps = steps
            latest = planned.map(\.at).max() ?? 0
        }

        /// The action mix in which the only action is buying `product`.
        static func mix(buying product: Product) throws(RunError) -> ActionMix {
            // An empty object is the mix in which every action weighs 0 (see ActionMix's decoding).
            var mix: ActionMix
            do {
                mix = try JSONDecoder().decode(ActionMix.self, from: Data("{}".utf8))
            } catch {
                throw .internalError("cannot make an empty action mix: \(error)")
            }
            switch product.type {
            case .consumable: mix.consumable = 1
            case .nonConsumable: mix.nonConsumable = 1
            case .autoRenewable: mix.subscribe = 1
            case .nonRenewing: mix.nonRenewing = 1
            }
            return mix
        }

        /// The notification signed wrongly, for another account, with its own transaction: as Chaos forges.
        static func forged(_ delivery: PlannedDelivery, id: UInt64, account: String) -> PlannedDelivery {
            var forged = delivery
            forged.id = id
            forged.copy = .forged
            forged.forgery = TargetCheck.forgery
            let fakeID = String(9_000_000_000_000_000 + id)
            var action = delivery.action
            action.appAccountToken = account
            if case .notification(var note) = action.delivery {
                note.notificationUUID = UUID().uuidString.lowercased()
                note.transaction?.transactionId = fakeID
                note.transaction?.originalTransactionId = fakeID
                note.transaction?.payload.appAccountToken = account
                note.renewal?.appAccountToken = account
                action.delivery = .notification(note)
            }
            var truth = Truth(kind: .none, effectiveDate: action.truth.effectiveDate)
            truth.productId = action.truth.productId
            truth.productType = action.truth.productType
            truth.transactionId = fakeID
            action.truth = truth
            forged.action = action
            forged.faults = [AppliedFault(fault: "forgery", detail: "\(TargetCheck.forgery), transaction \(fakeID)")]
            return forged
        }

        /// An Ask to Buy: the device reports the purchase pending, for another account; nothing is owed.
        static func pending(_ delivery: PlannedDelivery, id: UInt64, account: String) -> PlannedDelivery {
            var pending = delivery
            pending.id = id
            var action = delivery.action
            let product = action.truth.productId ?? ""
            action.appAccountToken = account
            action.lifecycle = .askToBuyPending
            action.causedBy = "askToBuy"
            action.delivery = .report(
                DeviceReport(device: 0, purchaseResult: "pending", productId: product, appAccountToken: account)
            )
            var truth = Truth(kind: .pending, effectiveDate: action.truth.effectiveDate)
            truth.productId = action.truth.productId
            truth.productType = action.truth.productType
            action.truth = truth
            pending.action = action
            pending.faults = [AppliedFault(fault: "askToBuy", detail: "a pending purchase report")]
            return pending
        }
    }
}
