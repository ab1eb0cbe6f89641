import AppStoreModel
import Foundation
import Profile
import Testing

@testable import Simulation

/// Catalogs past 64 products: ownership works for every product, not only the first 64.
struct LargeCatalogTests {
    /// One account and a catalog of `count` non-consumables, bought over and over.
    static func nonConsumables(count: Int) throws -> Profile {
        let products = (0..<count).map { "{ id: \"item\($0)\", type: \"nonConsumable\", priceMilli: 990 }" }
        let text = """
            {
              name: "large", seed: 5,
              target: { embeddedLedger: true, bundleId: "com.example.test" },
              catalog: { products: [\(products.joined(separator: ", "))] },
              population: { accounts: 1 },
              actionMix: { nonConsumable: 1 },
              schedule: [{ kind: "constant", rate: 20, seconds: 60 }],
            }
            """
        return try Profile.decode(Data(text.utf8), file: "large.json5")
    }

    @Test func aNonConsumablePastThe64thIsBoughtOnlyOnce() throws {
        // One webhook notification per purchase (the device delivery of the same event is not counted).
        let purchases = run(try Self.nonConsumables(count: 100)).filter {
            if case .notification = $0.delivery { $0.lifecycle == .purchase } else { false }
        }
        let products = purchases.compactMap(\.truth.productId)
        #expect(products.count == Set(products).count)
        #expect(Set(products).count == 100)
    }

    /// One account and `count` subscription groups of one product each, with an introductory offer.
    static func groups(count: Int) throws -> Profile {
        let groups = (0..<count).map { "{ id: \"g\($0)\", billingRetrySeconds: 1 }" }
        let products = (0..<count).map {
            """
            { id: "sub\($0)", type: "autoRenewable", group: "g\($0)", priceMilli: 990, periodSeconds: 2,
              offers: [{ id: "intro\($0)", kind: "introductory", discount: "freeTrial" }] }
            """
        }
        let text = """
            {
              name: "groups", seed: 9,
              target: { embeddedLedger: true, bundleId: "com.example.test" },
              catalog: { groups: [\(groups.joined(separator: ", "))], products: [\(products.joined(separator: ", "))] },
              population: { accounts: 1 },
              actionMix: { subscribe: 2, cancel: 1 },
              schedule: [{ kind: "constant", rate: 20, seconds: 120 }],
            }
            """
        return try Profile.decode(Data(text.utf8), file: "groups.json5")
    }

    @Test func anIntroductoryOfferPastThe64thGroupIsUsedOnlyOnce() throws {
        let subscriptions = run(try Self.groups(count: 70)).filter {
            if case .notification(let note) = $0.delivery { note.notificationType == "SUBSCRIBED" } else { false }
        }
        let intros = subscriptions.compactMap {
            $0.transaction?.payload.offerType == 1 ? $0.transaction?.productId : nil
        }
        #expect(subscriptions.count > intros.count)
        #expect(intros.count == Set(intros).count)
        #expect(Set(intros).count > 64)
    }

    @Test(arguments: [0, 1, 63, 64, 65, 127, 128, 999])
    func anIndexSetHoldsAnyIndex(index: Int) {
        var set = IndexSet64()
        #expect(!set.contains(index))
        set.set(index, true)
        #expect(set.contains(index) && !set.contains(index + 1) && (index == 0 || !set.contains(index - 1)))
        set.set(index, false)
        #expect(!set.contains(index))
    }
}
