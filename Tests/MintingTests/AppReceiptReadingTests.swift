import AppStoreModel
import Foundation
import Minting
import Signing
import Testing

/// One PKI for the suite: generating keys and certificates is the slow part.
private let readingPKI: Result<TestPKI, any Error> = Result { try TestPKI.generate() }

struct AppReceiptReadingTests {
    let pki: TestPKI

    init() throws {
        pki = try readingPKI.get()
    }

    @Test func readsBackWhatWasMinted() throws {
        let app = AppIdentity(bundleId: "com.acme.app", appAppleId: 42, bundleVersion: "3.1", environment: .production)
        var subscription = Minter.impliedTransaction(
            by: nil,
            productType: .autoRenewableSubscription,
            signedDate: 1_767_225_600_000
        )
        subscription.offerType = .introductoryOffer
        subscription.offerDiscountType = .freeTrial
        var refunded = Minter.impliedTransaction(
            by: nil,
            productId: "gold",
            productType: .nonConsumable,
            signedDate: 1_767_225_600_000
        )
        refunded.revocationDate = 1_767_229_200_000
        let receipt = AppReceipt(
            app: app,
            inApp: [subscription, refunded],
            creationDate: 1_767_225_600_000,
            expirationDate: 1_800_000_000_000
        )
        let read = try AppReceipt.read(base64: try receipt.base64(signedBy: pki), trusting: pki.root)
        #expect(read.app == app)
        #expect(read.creationDate == 1_767_225_600_000)
        #expect(read.expirationDate == 1_800_000_000_000)
        #expect(read.originalApplicationVersion == "1.0")
        #expect(read.inApp.map(\.transactionId) == [subscription.transactionId, refunded.transactionId])
        #expect(
            read.inApp.map(\.originalTransactionId) == [
                subscription.originalTransactionId, refunded.originalTransactionId,
            ]
        )
        #expect(read.inApp.map(\.productId) == [subscription.productId, "gold"])
        #expect(read.inApp.map(\.purchaseDate) == [subscription.purchaseDate, refunded.purchaseDate])
        #expect(read.inApp.map(\.expiresDate) == [subscription.expiresDate, nil])
        #expect(read.inApp.map(\.revocationDate) == [nil, 1_767_229_200_000])
        #expect(read.inApp.map(\.webOrderLineItemId) == [subscription.webOrderLineItemId, nil])
        #expect(read.inApp[0].offerType == .introductoryOffer && read.inApp[0].offerDiscountType == .freeTrial)
        #expect(read.inApp.map(\.quantity) == [1, 1])
    }

    @Test func namesTheSandboxFromItsReceiptType() throws {
        let receipt = AppReceipt(app: AppIdentity(environment: .sandbox), inApp: [], creationDate: 0)
        #expect(try AppReceipt.read(try receipt.signed(by: pki), trusting: pki.root).app.environment == .sandbox)
    }

    @Test func refusesAReceiptSignedUnderAnotherRoot() throws {
        let receipt = AppReceipt(app: AppIdentity(), inApp: [], creationDate: 0)
        let other = try TestPKI.generate()
        let signed = try receipt.signed(by: other)
        let error = #expect(throws: AppReceiptError.self) { try AppReceipt.read(signed, trusting: pki.root) }
        #expect(error?.kind == .unauthenticated)
    }

    @Test(arguments: ["", "not base64!", "MAA="])
    func refusesWhatIsNotAReceipt(base64: String) {
        let error = #expect(throws: AppReceiptError.self) { try AppReceipt.read(base64: base64, trusting: pki.root) }
        #expect(error?.kind == .malformed)
    }

    @Test func refusesSignedContentThatIsNotAttributes() throws {
        let signed = try PKCS7SignedData.sign(DER.utf8String("hello"), with: pki)
        let error = #expect(throws: AppReceiptError.self) { try AppReceipt.read(signed, trusting: pki.root) }
        #expect(error?.kind == .malformed)
    }
}
