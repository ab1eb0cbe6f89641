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

        /// The product the delivery is about.
        var product: String { delivery.action.truth.productId ?? "" }

        /// The product's type, in words.
        var productKind: String { delivery.action.truth.productType?.rawValue ?? "these" }

        var sends: String {
            switch kind {
            case .genuine: "genuine purchase of \(product)"
            case .duplicate: "duplicate (same bytes)"
            case .forgery: "forgery (\(TargetCheck.forgery))"
            case .pending: "pending report"
            }
        }
    }

    /// The check's requests, taken from the run's own world: a purchase of each product type the catalog sells
    /// (its first product of that type), each on a device and then by the App Store's webhook, and the
    /// duplicate, the forgery and the pending report derived from the primary purchase (a non-consumable when the
    /// catalog has one, else its first product) the way Chaos derives its faults, on two accounts that bought
    /// nothing.
    struct Plan {
        var profile: Profile
        var startMillis: Int64
        /// The primary product: the one duplicated, forged and reported pending.
        var product: Product
        /// One product of each type the catalog sells, in the catalog's order.
        var products: [Product]
        var steps: [Step]
        var accounts: (buyers: [String], forgery: String, pending: String)
        /// The latest intended time of the plan, in seconds from `startMillis`.
        var latest: Double

        /// Seconds since `startMillis`: the checker's clock.
        func now() -> Double { Date().timeIntervalSince1970 - Double(startMillis) / 1000 }

        /// The plan of a profile whose accounts need no provisioning (tests, a target without provisioning).
        init(profile original: Profile) throws(RunError) {
            try self.init(checking: try Self.profile(original), original: original)
        }

        /// The plan over `profile`, the check's profile made by ``profile(_:)`` from `original` (with the
        /// tokens provisioning dictated, if any).
        init(checking profile: Profile, original: Profile) throws(RunError) {
            // The accounts and transactions are new to a target that keeps its state even when the check runs
            // again: `PayStormRun.load` gave such a target's profile a fresh namespace, as it does for a run.
            let primary = original.catalog.products.first { $0.type == .nonConsumable } ?? original.catalog.products[0]
            let products = profile.catalog.products
            self.profile = profile
            self.product = primary
            self.products = products
            startMillis = Int64(Date().timeIntervalSince1970 * 1000)

            let planned = Array(
                ChaosStream(World(profile: profile, startMillis: startMillis), profile: profile).prefix(400)
            )
            var steps: [Step] = []
            var primaryWebhook: PlannedDelivery?
            for product in products {
                guard let webhook = planned.first(where: { Self.isGrantNotification($0, of: product) }) else {
                    throw .internalError("the check's world made no purchase of \(product.id)")
                }
                // The device posts the purchase result first, then the App Store's notification arrives.
                let id = webhook.action.truth.transactionId
                if let device = planned.first(where: { Self.isDevice($0) && $0.action.truth.transactionId == id }) {
                    steps.append(Step(kind: .genuine, delivery: device))
                }
                steps.append(Step(kind: .genuine, delivery: webhook))
                if product.id == primary.id { primaryWebhook = webhook }
            }
            guard let webhook = primaryWebhook else {
                throw .internalError("the check's world made no purchase of \(primary.id)")
            }
            // Two accounts that bought nothing in the plan: fresh, and never a buyer.
            let buyers = Set(steps.map(\.delivery.action.account))
            let idle = (0..<profile.population.accounts).filter { !buyers.contains($0) }.map {
                profile.identities.accountToken($0)
            }
            accounts = (
                Array(Set(steps.map(\.delivery.action.appAccountToken))).sorted(), idle[0], idle[1]
            )
            var nextID = (planned.map(\.id).max() ?? 0) + 1
            func fresh() -> UInt64 {
                defer { nextID += 1 }
                return nextID
            }
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
            latest = steps.map(\.delivery.at).max() ?? 0
        }

        /// The profile of the check's world: the products bought, one account per product and two more (the
        /// forgery's and the pending report's), no faults, real time, and a schedule dense enough to buy each
        /// product within a second.
        static func profile(_ original: Profile) throws(RunError) -> Profile {
            var seen: Set<ProductKind> = []
            let products = original.catalog.products.filter { seen.insert($0.type).inserted }
            var profile = original
            profile.catalog.products = products
            profile.actionMix = try mix(buying: products)
            profile.population = Population(
                accounts: products.count + 2,
                devicesPerAccount: 1,
                familySharingFraction: 0
            )
            profile.faults = Faults()
            // Real time: nothing renews or expires while the check runs.
            profile.timeCompression.secondsPerMonth = 2_592_000
            profile.schedule = [RateSegment(.constant(rate: 40), seconds: 1)]
            return profile
        }

        private static func isGrantNotification(_ delivery: PlannedDelivery, of product: Product) -> Bool {
            guard case .notification = delivery.action.delivery else { return false }
            return delivery.action.truth.kind == .grant && delivery.action.truth.productId == product.id
        }

        private static func isDevice(_ delivery: PlannedDelivery) -> Bool {
            if case .device = delivery.action.delivery { true } else { false }
        }

        /// The action mix in which the only actions are buying `products`, equally often.
        static func mix(buying products: [Product]) throws(RunError) -> ActionMix {
            // An empty object is the mix in which every action weighs 0 (see ActionMix's decoding).
            var mix: ActionMix
            do {
                mix = try JSONDecoder().decode(ActionMix.self, from: Data("{}".utf8))
            } catch {
                throw .internalError("cannot make an empty action mix: \(error)")
            }
            for product in products {
                switch product.type {
                case .consumable: mix.consumable = 1
                case .nonConsumable: mix.nonConsumable = 1
                case .autoRenewable: mix.subscribe = 1
                case .nonRenewing: mix.nonRenewing = 1
                }
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
