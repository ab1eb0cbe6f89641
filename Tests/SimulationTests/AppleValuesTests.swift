import AppStoreModel
import Profile
import Simulation
import Testing

/// The world speaks Apple's constants as AppStoreModel's typed wire values: every one it emits is a value Apple
/// documents, and the profile's words map onto them one to one.
struct AppleValuesTests {
    @Test func emitsOnlyDocumentedWireValues() throws {
        var unknown = Set<String>()
        func check<T: OpenWireEnum>(_ value: T?, _ field: String) {
            if let value, !value.isKnown { unknown.insert("\(field)=\(value)") }
        }
        func check(_ facts: TransactionFacts) {
            check(facts.type, "type")
            check(facts.payload.inAppOwnershipType, "inAppOwnershipType")
            check(facts.payload.environment, "environment")
            check(facts.payload.transactionReason, "transactionReason")
            check(facts.payload.revocationReason, "revocationReason")
            check(facts.payload.revocationType, "revocationType")
            check(facts.payload.offerType, "offerType")
            check(facts.payload.offerDiscountType, "offerDiscountType")
        }
        for action in run(try richProfile(accounts: 30, seconds: 200)) {
            switch action.delivery {
            case .notification(let note):
                check(note.notificationType, "notificationType")
                check(note.payload.subtype, "subtype")
                check(note.payload.data?.status, "status")
                check(note.payload.data?.consumptionRequestReason, "consumptionRequestReason")
                note.transaction.map(check)
                if let renewal = note.renewal {
                    check(renewal.autoRenewStatus, "autoRenewStatus")
                    check(renewal.expirationIntent, "expirationIntent")
                    check(renewal.priceIncreaseStatus, "priceIncreaseStatus")
                    check(renewal.offerType, "offerType")
                }
            case .device(let device): check(device.transaction)
            case .report, .marker: break
            }
        }
        #expect(unknown.isEmpty, "undocumented values: \(unknown.sorted())")
    }

    @Test(arguments: ProductKind.allCases)
    func mapsEveryProductKindToADistinctProductTypeAndBack(kind: ProductKind) {
        #expect(kind.productType.isKnown)
        #expect(ProductKind(kind.productType) == kind)
    }

    @Test func refusesAProductTypeTheProfileHasNoWordFor() {
        #expect(ProductKind(ProductType(rawValue: "Bundle")) == nil)
    }

    @Test func mapsOffersToApplesNumbersAndNames() {
        #expect(Offer.Kind.allCases.map(\.offerType.rawValue) == [1, 2, 3, 4])
        #expect(Offer.Discount.allCases.map(\.offerDiscountType) == [.freeTrial, .payAsYouGo, .payUpFront])
    }
}
