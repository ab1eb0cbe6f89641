import AppStoreModel
import Foundation
import Minting
import Signing
import Testing

/// One PKI for the suite: generating keys and certificates is the slow part.
private let forgeryPKI: Result<TestPKI, any Error> = Result { try TestPKI.generate() }

/// Forged app receipts carry the JWS forgeries' classes, and `AppReceipt.read` refuses each for the check it
/// forges (issue 45: a backend that reads receipts itself granted forged renewals for want of those checks).
struct AppReceiptForgeryTests {
    let pki: TestPKI
    let minter: Minter
    let purchase: JWSTransactionDecodedPayload

    init() throws {
        pki = try forgeryPKI.get()
        minter = Minter(pki: pki, app: AppIdentity(bundleId: "com.acme.app", environment: .sandbox))
        purchase = Minter.impliedTransaction(by: nil, productType: .consumable, signedDate: Minter.nowMilliseconds())
    }

    /// The check that refuses each forgery's receipt; nil for one genuinely signed for another app.
    static let refusedBy: [Forgery: AppReceiptError.Check?] = [
        .badSignature: .signature, .algES384: .signature, .algNone: .signature,
        .chain2: .chainLength, .chain4: .chainLength, .base64URLX5C: .chain,
        .missingLeafOID: .signerOID, .missingIntermediateOID: .intermediateOID, .criticalOIDs: .criticalOID,
        .untrustedRoot: .chain, .wrongBundle: nil, .wrongEnvironment: nil,
        .signedDateBeforeChain: .validity, .datesInSeconds: .validity, .tamperedPayload: .signature,
        .forgedInnerTransaction: .chain,
    ]

    @Test(arguments: Forgery.allCases)
    func eachForgedReceiptIsRefusedForTheCheckItForges(forgery: Forgery) throws {
        let expected = try #require(Self.refusedBy[forgery], "no expectation for \(forgery)")
        let base64 = try minter.appReceipt([purchase], creationDate: Minter.nowMilliseconds(), forgery: forgery)
        guard let check = expected else {
            let read = try AppReceipt.read(base64: base64, trusting: pki.root)
            #expect(read.app.bundleId != "com.acme.app" || read.app.environment != .sandbox)
            #expect(read.inApp.map(\.transactionId) == [purchase.transactionId])
            return
        }
        let error = #expect(throws: AppReceiptError.self) { try AppReceipt.read(base64: base64, trusting: pki.root) }
        #expect(error?.check == check, "\(forgery): \(error?.description ?? "read")")
        #expect(error?.kind == .unauthenticated)
    }

    @Test func aGenuineReceiptPassesEveryCheck() throws {
        let base64 = try minter.appReceipt([purchase], creationDate: Minter.nowMilliseconds(), forgery: nil)
        #expect(try AppReceipt.read(base64: base64, trusting: pki.root).inApp.count == 1)
    }

    @Test func aSignerWithoutTheReceiptSigningOIDIsRefused() throws {
        var options = PKIOptions(notBefore: pki.leaf.notBefore, notAfter: pki.leaf.notAfter)
        options.leafAppleOID = false
        let signed = try AppReceipt(app: minter.app, inApp: [], creationDate: 0).signed(by: try pki.variant(options))
        let error = #expect(throws: AppReceiptError.self) { try AppReceipt.read(signed, trusting: pki.root) }
        #expect(error?.kind == .unauthenticated)
    }

    @Test(arguments: [0, 2])
    func aReceiptWithoutItsThreeCertificatesIsRefused(extraRoots: Int) throws {
        let attached = [pki.intermediate] + Array(repeating: pki.root, count: extraRoots)
        let content = AppReceipt(app: minter.app, inApp: [], creationDate: 0).attributes()
        let signed = try PKCS7SignedData.sign(content, with: pki, attaching: attached)
        let error = #expect(throws: AppReceiptError.self) { try AppReceipt.read(signed, trusting: pki.root) }
        #expect(error?.kind == .unauthenticated)
    }

    @Test func contentChangedAfterSigningIsRefused() throws {
        let receipt = AppReceipt(app: minter.app, inApp: [purchase], creationDate: 0)
        var changed = receipt
        changed.inApp[0].quantity = 10
        let tampered = try #require(
            PKCS7SignedData.replacingContent(of: try receipt.signed(by: pki), with: changed.attributes())
        )
        #expect(try PKCS7SignedData.certificates(tampered).attached.count == 3)
        let error = #expect(throws: AppReceiptError.self) { try AppReceipt.read(tampered, trusting: pki.root) }
        #expect(error?.kind == .unauthenticated)
    }
}
