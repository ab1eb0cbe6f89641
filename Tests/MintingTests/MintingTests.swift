import AppStoreModel
import Foundation
import Minting
import Signing
import Testing

/// One PKI for the whole suite: generating keys and certificates is the slow part.
private let sharedPKI: Result<TestPKI, any Error> = Result { try TestPKI.generate() }

struct MintingTests {
    let pki: TestPKI
    let minter: Minter

    init() throws {
        pki = try sharedPKI.get()
        minter = Minter(pki: pki)
    }

    private func header(_ jws: String) throws -> [String: Any] {
        let segment = String(jws.split(separator: ".", omittingEmptySubsequences: false)[0])
        let bytes = try #require(JWS.base64URLDecode(segment))
        return try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
    }

    private func payload<T: Decodable>(_ type: T.Type, _ jws: String) throws -> T {
        let parts = jws.split(separator: ".", omittingEmptySubsequences: false)
        #expect(parts.count == 3)
        let bytes = try #require(JWS.base64URLDecode(String(parts[1])))
        return try AppStoreJSON.decoder().decode(type, from: Data(bytes))
    }

    @Test(arguments: NotificationMatrix.all)
    func mintsEveryKindWithWhatItCarries(kind: NotificationKind) throws {
        let signedDate = Minter.nowMilliseconds()
        let minted = try minter.notification(kind, signedDate: signedDate)
        let outer = try payload(ResponseBodyV2DecodedPayload.self, minted.signedPayload)
        #expect(outer == minted.payload)
        #expect(outer.notificationType == kind.notificationType)
        #expect(outer.subtype == kind.subtype)
        #expect(outer.version == "2.0")
        #expect(outer.signedDate == signedDate)
        #expect(AppStoreJSON.isValidUUID(outer.notificationUUID ?? ""))
        let present = [
            outer.data != nil, outer.summary != nil, outer.externalPurchaseToken != nil, outer.appData != nil,
        ]
        #expect(present.filter { $0 }.count == 1)
        switch kind.content {
        case .appIdentity:
            #expect(
                outer.data
                    == NotificationData(
                        appAppleId: 1_234_567_890,
                        bundleId: "com.example.paystorm",
                        environment: .sandbox
                    )
            )
        case .summary:
            #expect(outer.summary?.bundleId == "com.example.paystorm")
            #expect(outer.summary?.environment == .sandbox)
        case .externalPurchaseToken:
            #expect(outer.externalPurchaseToken?.externalPurchaseId?.hasPrefix("SANDBOX") == true)
            #expect(outer.externalPurchaseToken?.bundleId == "com.example.paystorm")
        case .appData:
            let app = try payload(AppTransaction.self, try #require(outer.appData?.signedAppTransactionInfo))
            #expect(app.receiptType == .sandbox)
            #expect(app.bundleId == "com.example.paystorm")
            #expect(app.receiptCreationDate == signedDate)
        case .subscription, .transaction, .oneTimeTransaction:
            let data = try #require(outer.data)
            #expect(data.bundleId == "com.example.paystorm")
            #expect(data.environment == .sandbox)
            let transaction = try payload(JWSTransactionDecodedPayload.self, try #require(data.signedTransactionInfo))
            #expect(transaction == minted.transaction)
            #expect(transaction.bundleId == "com.example.paystorm")
            #expect(transaction.environment == .sandbox)
            #expect(transaction.signedDate == signedDate)
            #expect(transaction.type == Minter.defaultProductType(for: kind))
            #expect(data.consumptionRequestReason != nil ? kind.notificationType == .consumptionRequest : true)
            if kind.content == .subscription {
                let renewal = try payload(JWSRenewalInfoDecodedPayload.self, try #require(data.signedRenewalInfo))
                #expect(renewal == minted.renewalInfo)
                #expect(renewal.originalTransactionId == transaction.originalTransactionId)
                #expect(renewal.productId == transaction.productId)
                #expect(renewal.environment == .sandbox)
                #expect(data.status == Minter.status(for: kind))
                #expect(transaction.expiresDate != nil)
                #expect(transaction.webOrderLineItemId != nil)
            } else {
                #expect(data.signedRenewalInfo == nil)
                #expect(data.status == nil)
                #expect(transaction.expiresDate == nil)
            }
        }
    }

    @Test(arguments: [
        (NotificationKind(.expired, .voluntary, .subscription), false, ExpirationIntent.customerCancelled),
        (NotificationKind(.expired, .billingRetry, .subscription), false, .billingError),
        (NotificationKind(.expired, .priceIncrease, .subscription), false, .customerDidNotConsentToPriceIncrease),
        (NotificationKind(.expired, .productNotForSale, .subscription), false, .productNotAvailable),
        (NotificationKind(.expired, nil, .subscription), false, .other),
        (NotificationKind(.didFailToRenew, nil, .subscription), false, .billingError),
        (NotificationKind(.didRenew, nil, .subscription), true, nil),
        (NotificationKind(.subscribed, .initialBuy, .subscription), true, nil),
    ])
    func relatesDatesAndIntentsToTheKind(kind: NotificationKind, active: Bool, intent: ExpirationIntent?) throws {
        let signedDate = Minter.nowMilliseconds()
        let minted = try minter.notification(kind, signedDate: signedDate)
        let expires = try #require(minted.transaction?.expiresDate)
        #expect((expires > signedDate) == active)
        #expect(minted.renewalInfo?.expirationIntent == intent)
    }

    @Test func relatesSubscriptionDetailsToTheKind() throws {
        let initial = try minter.notification(NotificationKind(.subscribed, .initialBuy, .subscription))
        #expect(initial.transaction?.transactionId == initial.transaction?.originalTransactionId)
        #expect(initial.transaction?.transactionReason == .purchase)
        let renewal = try minter.notification(NotificationKind(.didRenew, nil, .subscription))
        #expect(renewal.transaction?.transactionId != renewal.transaction?.originalTransactionId)
        #expect(renewal.transaction?.transactionReason == .renewal)
        let grace = try minter.notification(NotificationKind(.didFailToRenew, .gracePeriod, .subscription))
        #expect(grace.payload.data?.status == .billingGracePeriod)
        #expect(grace.renewalInfo?.isInBillingRetryPeriod == true)
        #expect((grace.renewalInfo?.gracePeriodExpiresDate ?? 0) > (grace.payload.signedDate ?? 0))
        let downgrade = try minter.notification(NotificationKind(.didChangeRenewalPref, .downgrade, .subscription))
        #expect(downgrade.renewalInfo?.autoRenewProductId != downgrade.renewalInfo?.productId)
        let disabled = try minter.notification(
            NotificationKind(.didChangeRenewalStatus, .autoRenewDisabled, .subscription)
        )
        #expect(disabled.renewalInfo?.autoRenewStatus == .off)
        let pending = try minter.notification(NotificationKind(.priceIncrease, .pending, .subscription))
        #expect(pending.renewalInfo?.priceIncreaseStatus == .customerHasNotResponded)
        let offer = try minter.notification(NotificationKind(.offerRedeemed, nil, .subscription))
        #expect(offer.transaction?.offerType == .promotionalOffer)
    }

    @Test func marksRefundsAndRevocations() throws {
        let refund = try minter.notification(NotificationKind(.refund, nil, .transaction))
        let transaction = try #require(refund.transaction)
        #expect(transaction.revocationDate != nil)
        #expect(transaction.revocationReason != nil)
        #expect(transaction.revocationType == .refundFull)
        #expect(transaction.revocationPercentage == 100_000)
        let revoke = try minter.notification(NotificationKind(.revoke, nil, .transaction))
        #expect(revoke.transaction?.revocationType == .familyRevoke)
        #expect(revoke.transaction?.inAppOwnershipType == .familyShared)
        let signedDate = Minter.nowMilliseconds()
        let subscription = Minter.impliedTransaction(
            by: NotificationKind(.refund, nil, .transaction),
            productType: .autoRenewableSubscription,
            signedDate: signedDate
        )
        let refundedSubscription = try minter.notification(
            NotificationKind(.refund, nil, .transaction),
            transaction: subscription,
            signedDate: signedDate
        )
        #expect(refundedSubscription.payload.data?.signedRenewalInfo != nil)
        #expect(refundedSubscription.payload.data?.status == .revoked)
    }

    @Test(arguments: [
        (NotificationKind(.subscribed, .initialBuy, .subscription), ProductType.consumable),
        (NotificationKind(.oneTimeCharge, nil, .oneTimeTransaction), ProductType.autoRenewableSubscription),
    ])
    func rejectsAProductTypeThatContradictsTheKind(kind: NotificationKind, type: ProductType) {
        let transaction = Minter.impliedTransaction(by: kind, productType: type, signedDate: Minter.nowMilliseconds())
        #expect(throws: MintError.self) { try minter.notification(kind, transaction: transaction) }
    }

    @Test func keepsTheCallersTransactionAndAccountToken() throws {
        let token = "7e3fb20b-4cdb-47cc-936d-99d65f608138"
        var transaction = Minter.impliedTransaction(
            by: nil,
            productId: "gems.100",
            productType: .consumable,
            appAccountToken: token,
            signedDate: 1
        )
        transaction.transactionId = "42"
        let minted = try minter.transaction(transaction)
        #expect(minted.payload.appAccountToken == token)
        #expect(minted.payload.transactionId == "42")
        #expect(minted.payload.productId == "gems.100")
        #expect(try payload(JWSTransactionDecodedPayload.self, minted.jws) == minted.payload)
        let renewal = try minter.renewalInfo()
        #expect(try payload(JWSRenewalInfoDecodedPayload.self, renewal.jws) == renewal.payload)
    }

    /// The caller's transaction is Apple's payload: what it says (a reason, an offer) is signed as given, the
    /// minter adds only the app, the signing date and what the kind implies; the product a subscription renews
    /// to, which no transaction carries, goes to its renewal info.
    @Test func signsWhatTheCallersTransactionSaysAndTheProductItRenewsTo() throws {
        let kind = NotificationKind(.didChangeRenewalPref, .downgrade, .subscription)
        var transaction = Minter.impliedTransaction(by: kind, signedDate: 1_800_000_000_000)
        transaction.transactionReason = .purchase
        transaction.offerType = .introductoryOffer
        transaction.bundleId = "com.example.other"
        let minted = try minter.notification(kind, transaction: transaction, autoRenewProductId: "basic.monthly")
        #expect(minted.transaction?.transactionId != minted.transaction?.originalTransactionId)
        #expect(minted.transaction?.transactionReason == .purchase)
        #expect(minted.transaction?.offerType == .introductoryOffer)
        #expect(minted.transaction?.bundleId == minter.app.bundleId)
        #expect(minted.renewalInfo?.autoRenewProductId == "basic.monthly")
        let active = try minter.renewalInfo(transaction, autoRenewProductId: "basic.monthly")
        #expect(active.payload.autoRenewProductId == "basic.monthly")
        #expect(active.payload.productId == transaction.productId)
        transaction.transactionReason = nil
        #expect(minter.transactionPayload(transaction, kind: kind, signedDate: 1).transactionReason == .renewal)
    }

    @Test func signsWithTheGenuineChain() throws {
        let minted = try minter.transaction()
        let header = try header(minted.jws)
        #expect(header["alg"] as? String == "ES256")
        #expect(header["x5c"] as? [String] == JWS.x5c([pki.leaf, pki.intermediate, pki.root]))
    }

    @Test func forgesHeadersAndChains() throws {
        let kind = NotificationKind(.didRenew, nil, .subscription)
        let es384 = try minter.notification(kind, forgery: .algES384)
        #expect(try header(es384.signedPayload)["alg"] as? String == "ES384")
        let none = try minter.notification(kind, forgery: .algNone)
        #expect(try header(none.signedPayload)["alg"] as? String == "none")
        #expect(none.signedPayload.hasSuffix("."))
        #expect((try header(try minter.transaction(forgery: .chain2).jws)["x5c"] as? [String])?.count == 2)
        #expect((try header(try minter.transaction(forgery: .chain4).jws)["x5c"] as? [String])?.count == 4)
        let url = try header(try minter.transaction(forgery: .base64URLX5C).jws)["x5c"] as? [String]
        #expect(url == [pki.leaf, pki.intermediate, pki.root].map { JWS.base64URL($0.der) })
        for forgery in [Forgery.missingLeafOID, .missingIntermediateOID, .criticalOIDs, .untrustedRoot] {
            let x5c = try header(try minter.transaction(forgery: forgery).jws)["x5c"] as? [String]
            #expect(x5c?.count == 3)
            #expect(x5c?[0] != JWS.x5c([pki.leaf])[0])
        }
    }

    @Test func forgesPayloads() throws {
        let kind = NotificationKind(.subscribed, .initialBuy, .subscription)
        let bundle = try minter.notification(kind, forgery: .wrongBundle)
        #expect(bundle.payload.data?.bundleId == "com.example.paystorm.forged")
        #expect(bundle.transaction?.bundleId == "com.example.paystorm.forged")
        let environment = try minter.notification(kind, forgery: .wrongEnvironment)
        #expect(environment.payload.data?.environment == .production)
        #expect(environment.renewalInfo?.environment == .production)
        let seconds = try minter.notification(kind, forgery: .datesInSeconds)
        #expect((seconds.payload.signedDate ?? .max) < 10_000_000_000)
        #expect((seconds.transaction?.purchaseDate ?? .max) < 10_000_000_000)
        #expect((seconds.renewalInfo?.signedDate ?? .max) < 10_000_000_000)
        let early = try minter.notification(kind, forgery: .signedDateBeforeChain)
        let notBefore = Int64(pki.leaf.notBefore.timeIntervalSince1970 * 1000)
        #expect((early.payload.signedDate ?? .max) < notBefore)
        let tampered = try minter.notification(kind, forgery: .tamperedPayload)
        let sent = try payload(ResponseBodyV2DecodedPayload.self, tampered.signedPayload)
        #expect(sent.notificationUUID != tampered.payload.notificationUUID)
        let inner = try minter.notification(kind, forgery: .forgedInnerTransaction)
        let innerHeader = try header(try #require(inner.payload.data?.signedTransactionInfo))
        #expect(innerHeader["x5c"] as? [String] != JWS.x5c([pki.leaf, pki.intermediate, pki.root]))
        #expect(try header(inner.signedPayload)["x5c"] as? [String] == JWS.x5c([pki.leaf, pki.intermediate, pki.root]))
    }

    @Test func forgesEveryKindOnRequest() throws {
        for forgery in Forgery.allCases where forgery != .forgedInnerTransaction {
            for kind in NotificationMatrix.all {
                _ = try minter.notification(kind, forgery: forgery)
            }
            _ = try minter.transaction(forgery: forgery)
            _ = try minter.renewalInfo(forgery: forgery)
        }
    }

    @Test func rejectsForgeriesThatDoNotApply() {
        #expect(throws: MintError.self) { try minter.transaction(forgery: .forgedInnerTransaction) }
        #expect(throws: MintError.self) { try minter.renewalInfo(forgery: .forgedInnerTransaction) }
        #expect(throws: MintError.self) { try minter.transaction(forgery: Forgery(rawValue: "glitter")) }
    }

    @Test func writesRandomVersion4UUIDsInLowercase() {
        let uuids = (0..<64).map { _ in Minter.randomUUID() }
        #expect(Set(uuids).count == uuids.count)
        for text in uuids {
            let parsed = UUID(uuidString: text)
            #expect(parsed?.uuidString.lowercased() == text)
            let bytes = Array(text.utf8)
            #expect(bytes.count == 36 && bytes[14] == UInt8(ascii: "4"))
            #expect([UInt8(ascii: "8"), UInt8(ascii: "9"), UInt8(ascii: "a"), UInt8(ascii: "b")].contains(bytes[19]))
        }
    }

    @Test func buildsTheWebhookBody() throws {
        let minted = try minter.notification(NotificationKind(.test, nil, .appIdentity))
        let body = try AppStoreJSON.decoder().decode(ResponseBodyV2.self, from: Data(minted.body))
        #expect(body.signedPayload == minted.signedPayload)
        #expect(String(decoding: minted.body, as: UTF8.self).hasPrefix(#"{"signedPayload":""#))
    }

    @Test func predictsApplesVerdictForEachForgery() {
        let table: [(Forgery, String, String)] = [
            (.badSignature, "VERIFICATION_FAILURE", "VERIFICATION_FAILURE"),
            (.chain2, "INVALID_CHAIN_LENGTH", "INVALID_CHAIN_LENGTH"),
            (.base64URLX5C, "INVALID_CERTIFICATE", "INVALID_CERTIFICATE"),
            (.wrongBundle, "INVALID_APP_IDENTIFIER", "OK"),
            (.wrongEnvironment, "INVALID_ENVIRONMENT", "INVALID_ENVIRONMENT"),
            (.forgedInnerTransaction, "OK", "OK"),
        ]
        for (forgery, notification, renewal) in table {
            #expect(forgery.expectedStatus(for: .notification) == notification)
            #expect(forgery.expectedStatus(for: .renewalInfo) == renewal)
        }
        #expect(Forgery.forgedInnerTransaction.expectedInnerTransactionStatus == "VERIFICATION_FAILURE")
        #expect(Forgery.allCases.count == 16)
        #expect(Set(Forgery.allCases.map(\.rawValue)).count == 16)
    }
}

/// Minted data checked by PayStorm's Swift verifier (Signing), which answers with Apple's status names.
struct MintingVerificationTests {
    let minter: Minter
    let verifier: SignedDataVerifier

    init() throws {
        let pki = try sharedPKI.get()
        minter = Minter(pki: pki)
        verifier = try SignedDataVerifier(
            rootCertificates: [pki.root.der],
            enableOnlineChecks: false,
            environment: .sandbox,
            bundleId: "com.example.paystorm",
            appAppleId: 1_234_567_890
        )
    }

    private func verdict<T>(_ result: Result<T, VerificationError>) -> String {
        switch result {
        case .success: return "OK"
        case .failure(let error): return error.status.rawValue
        }
    }

    @Test(arguments: NotificationMatrix.all)
    func genuineDataOfEveryKindVerifies(kind: NotificationKind) throws {
        let minted = try minter.notification(kind)
        #expect(verdict(verifier.verifyAndDecodeNotification(minted.signedPayload)) == "OK")
        if let jws = minted.payload.data?.signedTransactionInfo {
            #expect(verdict(verifier.verifyAndDecodeTransaction(jws)) == "OK")
        }
        if let jws = minted.payload.data?.signedRenewalInfo {
            #expect(verdict(verifier.verifyAndDecodeRenewalInfo(jws)) == "OK")
        }
        if let jws = minted.payload.appData?.signedAppTransactionInfo {
            #expect(verdict(verifier.verifyAndDecodeAppTransaction(jws)) == "OK")
        }
    }

    @Test(arguments: Forgery.allCases)
    func everyForgeryGetsThePredictedStatus(forgery: Forgery) throws {
        let minted = try minter.notification(NotificationKind(.didRenew, nil, .subscription), forgery: forgery)
        #expect(
            verdict(verifier.verifyAndDecodeNotification(minted.signedPayload))
                == forgery.expectedStatus(for: .notification)
        )
        let inner = try #require(minted.payload.data?.signedTransactionInfo)
        #expect(verdict(verifier.verifyAndDecodeTransaction(inner)) == forgery.expectedInnerTransactionStatus)
        guard forgery != .forgedInnerTransaction else { return }
        let transaction = try minter.transaction(forgery: forgery)
        #expect(
            verdict(verifier.verifyAndDecodeTransaction(transaction.jws)) == forgery.expectedStatus(for: .transaction)
        )
        let renewal = try minter.renewalInfo(forgery: forgery)
        #expect(verdict(verifier.verifyAndDecodeRenewalInfo(renewal.jws)) == forgery.expectedStatus(for: .renewalInfo))
    }

    @Test func completesTheAppIdentityOfPayloadsBuiltElsewhere() throws {
        // A Django backend's model requires data.bundleVersion, which Apple always sends.
        let kind = NotificationKind(.oneTimeCharge, nil, .oneTimeTransaction)
        let signedDate = Minter.nowMilliseconds()
        let facts = Minter.impliedTransaction(by: kind, signedDate: signedDate)
        let outer = ResponseBodyV2DecodedPayload(
            notificationType: kind.notificationType,
            notificationUUID: Minter.randomUUID(),
            data: NotificationData(bundleId: "com.example.paystorm", environment: .sandbox),
            version: "2.0",
            signedDate: signedDate
        )
        let signed = try minter.signNotification(
            outer,
            transaction: minter.transactionPayload(facts, kind: kind, signedDate: signedDate),
            renewal: nil
        )
        let decoded = try verifier.verifyAndDecodeNotification(signed).get()
        #expect(decoded.data?.bundleVersion == minter.app.bundleVersion)
        #expect(decoded.data?.appAppleId == minter.app.appAppleId)
    }

    /// A `DID_RENEW` built outside the minter: the outer payload with `data` (status active), its nested payloads.
    private func didRenew(
        _ data: NotificationData
    ) -> (ResponseBodyV2DecodedPayload, JWSTransactionDecodedPayload, JWSRenewalInfoDecodedPayload) {
        let kind = NotificationKind(.didRenew, nil, .subscription)
        let signedDate = Minter.nowMilliseconds()
        let facts = Minter.impliedTransaction(by: kind, signedDate: signedDate)
        var data = data
        data.status = .active
        let outer = ResponseBodyV2DecodedPayload(
            notificationType: kind.notificationType,
            notificationUUID: Minter.randomUUID(),
            data: data,
            version: "2.0",
            signedDate: signedDate
        )
        return (
            outer, minter.transactionPayload(facts, kind: kind, signedDate: signedDate),
            minter.renewalInfoPayload(facts, kind: kind, signedDate: signedDate)
        )
    }

    /// Nested JWS are signed in place of a marker in the outer JSON; a payload field that holds the
    /// marker's text takes the general path and is signed as given.
    @Test(arguments: ["1.0", "\u{7F}paystorm:signedTransactionInfo\u{7F}", "\u{7F}paystorm:signedRenewalInfo\u{7F}"])
    func signsNestedJWSInPlaceWhateverTheFieldsHold(bundleVersion: String) throws {
        let (outer, transaction, renewal) = didRenew(
            NotificationData(bundleId: "com.example.paystorm", bundleVersion: bundleVersion, environment: .sandbox)
        )
        let signed = try minter.signNotification(outer, transaction: transaction, renewal: renewal)
        let decoded = try verifier.verifyAndDecodeNotification(signed).get()
        #expect(decoded.data?.bundleVersion == bundleVersion)
        let inner = try verifier.verifyAndDecodeTransaction(try #require(decoded.data?.signedTransactionInfo)).get()
        #expect(inner == transaction)
        let nestedRenewal = try #require(decoded.data?.signedRenewalInfo)
        #expect(try verifier.verifyAndDecodeRenewalInfo(nestedRenewal).get() == renewal)
    }

    @Test(arguments: [nil] + Forgery.allCases.map(Optional.some))
    func signsPayloadsBuiltElsewhere(forgery: Forgery?) throws {
        let (outer, transaction, renewal) = didRenew(
            NotificationData(appAppleId: 1_234_567_890, bundleId: "com.example.paystorm", environment: .sandbox)
        )
        let signed = try minter.signNotification(outer, transaction: transaction, renewal: renewal, forgery: forgery)
        #expect(
            verdict(verifier.verifyAndDecodeNotification(signed)) == forgery?.expectedStatus(for: .notification) ?? "OK"
        )
        let parts = signed.split(separator: ".")
        let decoded = try AppStoreJSON.decoder().decode(
            ResponseBodyV2DecodedPayload.self,
            from: Data(try #require(JWS.base64URLDecode(String(parts[1]))))
        )
        let inner = try #require(decoded.data?.signedTransactionInfo)
        #expect(verdict(verifier.verifyAndDecodeTransaction(inner)) == forgery?.expectedInnerTransactionStatus ?? "OK")
        guard let forgery, forgery != .forgedInnerTransaction else { return }
        let bare = try minter.signTransaction(transaction, forgery: forgery)
        #expect(verdict(verifier.verifyAndDecodeTransaction(bare)) == forgery.expectedStatus(for: .transaction))
    }

    /// The body written straight from bytes is contract v1's `{"signedPayload":"<JWS>"}` around the JWS that
    /// `signNotification` signs: the same verdict for every forgery, and for a genuine one the same payloads.
    @Test(arguments: [nil] + Forgery.allCases.map(Optional.some))
    func notificationBodyWrapsTheJWSSignNotificationSigns(forgery: Forgery?) throws {
        let (outer, transaction, renewal) = didRenew(
            NotificationData(appAppleId: 1_234_567_890, bundleId: "com.example.paystorm", environment: .sandbox)
        )
        let body = try minter.notificationBody(outer, transaction: transaction, renewal: renewal, forgery: forgery)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(body)) as? [String: String])
        #expect(object.count == 1)
        let jws = try #require(object["signedPayload"])
        #expect(body == Minter.webhookBody(jws))
        #expect(
            verdict(verifier.verifyAndDecodeNotification(jws)) == forgery?.expectedStatus(for: .notification) ?? "OK"
        )
        guard forgery == nil else { return }
        let signed = try minter.signNotification(outer, transaction: transaction, renewal: renewal)
        var fromBody = try verifier.verifyAndDecodeNotification(jws).get()
        var fromString = try verifier.verifyAndDecodeNotification(signed).get()
        let nested = try #require(fromBody.data?.signedTransactionInfo)
        #expect(try verifier.verifyAndDecodeTransaction(nested).get() == transaction)
        let nestedRenewal = try #require(fromBody.data?.signedRenewalInfo)
        #expect(try verifier.verifyAndDecodeRenewalInfo(nestedRenewal).get() == renewal)
        // The nested JWS differ only in their ECDSA signatures (random per signing); everything else agrees.
        fromBody.data?.signedTransactionInfo = nil
        fromBody.data?.signedRenewalInfo = nil
        fromString.data?.signedTransactionInfo = nil
        fromString.data?.signedRenewalInfo = nil
        #expect(fromBody == fromString)
    }
}
