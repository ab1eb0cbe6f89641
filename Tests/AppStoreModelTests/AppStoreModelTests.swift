import Foundation
import Primitives
import Testing

@testable import AppStoreModel

struct AppStoreModelTests {
    private func encode(_ value: some Encodable) throws -> String {
        String(decoding: try AppStoreJSON.encoder().encode(value), as: UTF8.self)
    }

    private func decode<T: Decodable>(_ type: T.Type, _ json: String) throws -> T {
        try AppStoreJSON.decoder().decode(type, from: Data(json.utf8))
    }

    private static let fullTransaction = JWSTransactionDecodedPayload(
        originalTransactionId: "2000000000000001",
        transactionId: "2000000000000002",
        webOrderLineItemId: "2000000000000003",
        bundleId: "com.example.app",
        productId: "com.example.monthly",
        subscriptionGroupIdentifier: "21000001",
        purchaseDate: 1_767_225_600_000,
        originalPurchaseDate: 1_764_547_200_000,
        expiresDate: 1_769_904_000_000,
        quantity: 1,
        type: .autoRenewableSubscription,
        appAccountToken: "7e3fb20b-4cdb-47cc-936d-99d65f608138",
        inAppOwnershipType: .purchased,
        signedDate: 1_767_225_601_000,
        revocationReason: .refundedDueToIssue,
        revocationDate: 1_767_300_000_000,
        isUpgraded: false,
        offerType: .offerCode,
        offerIdentifier: "SPRING",
        environment: .sandbox,
        storefront: "USA",
        storefrontId: "143441",
        transactionReason: .renewal,
        currency: "USD",
        price: 9990,
        offerDiscountType: .payAsYouGo,
        appTransactionId: "704289572311",
        offerPeriod: "P1M",
        revocationType: .refundProrated,
        revocationPercentage: 40000,
        advancedCommerceInfo: .object(["requestReferenceId": .string("r1"), "items": .array([.integer(3)])]),
        billingPlanType: .monthly,
        commitmentInfo: TransactionCommitmentInfo(
            billingPeriodNumber: 2,
            commitmentExpiresDate: 1_798_761_600_000,
            commitmentPrice: 119_880,
            totalBillingPeriods: 12
        )
    )

    private static let fullRenewal = JWSRenewalInfoDecodedPayload(
        expirationIntent: .billingError,
        originalTransactionId: "2000000000000001",
        autoRenewProductId: "com.example.yearly",
        productId: "com.example.monthly",
        autoRenewStatus: .on,
        isInBillingRetryPeriod: true,
        priceIncreaseStatus: .customerHasNotResponded,
        gracePeriodExpiresDate: 1_770_000_000_000,
        offerType: .winBackOffer,
        offerIdentifier: "COMEBACK",
        signedDate: 1_767_225_601_000,
        environment: .production,
        recentSubscriptionStartDate: 1_764_547_200_000,
        renewalDate: 1_769_904_000_000,
        currency: "EUR",
        renewalPrice: 4990,
        offerDiscountType: .freeTrial,
        eligibleWinBackOfferIds: ["a", "b"],
        appAccountToken: "7e3fb20b-4cdb-47cc-936d-99d65f608138",
        appTransactionId: "704289572311",
        offerPeriod: "P1W",
        advancedCommerceInfo: .object(["renewalPrice": .integer(4990)]),
        commitmentInfo: RenewalCommitmentInfo(
            commitmentAutoRenewProductId: "com.example.yearly",
            commitmentAutoRenewStatus: .off,
            commitmentRenewalBillingPlanType: .billedUpfront,
            commitmentRenewalDate: 1_798_761_600_000,
            commitmentRenewalPrice: 99_990
        ),
        renewalBillingPlanType: .monthly
    )

    @Test func roundTripsAFullTransaction() throws {
        let json = try AppStoreJSON.encoder().encode(Self.fullTransaction)
        let back = try AppStoreJSON.decoder().decode(JWSTransactionDecodedPayload.self, from: json)
        #expect(back == Self.fullTransaction)
    }

    @Test func roundTripsAFullRenewalInfo() throws {
        let json = try AppStoreJSON.encoder().encode(Self.fullRenewal)
        let back = try AppStoreJSON.decoder().decode(JWSRenewalInfoDecodedPayload.self, from: json)
        #expect(back == Self.fullRenewal)
    }

    @Test func roundTripsEveryNotificationBodyShape() throws {
        let payloads = [
            ResponseBodyV2DecodedPayload(
                notificationType: .subscribed,
                subtype: .initialBuy,
                notificationUUID: "002e14d5-51f5-4503-b5a8-c3a1af68eb20",
                data: NotificationData(
                    appAppleId: 41234,
                    bundleId: "com.example.app",
                    bundleVersion: "1.2.3",
                    environment: .sandbox,
                    signedTransactionInfo: "a.b.c",
                    signedRenewalInfo: "d.e.f",
                    status: .active,
                    consumptionRequestReason: .legal
                ),
                version: "2.0",
                signedDate: 1_698_148_900_000
            ),
            ResponseBodyV2DecodedPayload(
                notificationType: .renewalExtension,
                subtype: .summary,
                summary: Summary(
                    environment: .localTesting,
                    appAppleId: 41234,
                    bundleId: "com.example.app",
                    productId: "com.example.product",
                    requestIdentifier: "efb27071-45a4-4aca-9854-2a1e9146f265",
                    storefrontCountryCodes: ["CAN", "USA", "MEX"],
                    succeededCount: 5,
                    failedCount: 2
                )
            ),
            ResponseBodyV2DecodedPayload(
                notificationType: .externalPurchaseToken,
                subtype: .unreported,
                externalPurchaseToken: ExternalPurchaseToken(
                    externalPurchaseId: "SANDBOX_b2158121-7af9-49d4-9561-1f588205523e",
                    tokenCreationDate: 1_698_148_950_000,
                    appAppleId: 55555,
                    bundleId: "com.example"
                )
            ),
            ResponseBodyV2DecodedPayload(
                notificationType: .rescindConsent,
                appData: AppData(
                    appAppleId: 1,
                    bundleId: "com.example",
                    environment: .xcode,
                    signedAppTransactionInfo: "g.h.i"
                )
            ),
        ]
        for payload in payloads {
            let json = try AppStoreJSON.encoder().encode(payload)
            #expect(try AppStoreJSON.decoder().decode(ResponseBodyV2DecodedPayload.self, from: json) == payload)
        }
    }

    @Test func roundTripsAnAppTransaction() throws {
        let value = AppTransaction(
            receiptType: .sandbox,
            appAppleId: 531_412,
            bundleId: "com.example",
            applicationVersion: "1.2.3",
            versionExternalIdentifier: 512,
            receiptCreationDate: 1_698_148_900_000,
            originalPurchaseDate: 1_698_148_800_000,
            originalApplicationVersion: "1.1.2",
            deviceVerification: "device_verification_value",
            deviceVerificationNonce: "48ccfa42-7431-4f22-9908-7e88983e105a",
            preorderDate: 1_698_148_700_000,
            appTransactionId: "71134",
            originalPlatform: .iOS
        )
        let json = try AppStoreJSON.encoder().encode(value)
        #expect(try AppStoreJSON.decoder().decode(AppTransaction.self, from: json) == value)
    }

    @Test func omitsAbsentFieldsRatherThanWritingNull() throws {
        let sparse = JWSTransactionDecodedPayload(bundleId: "com.example", environment: .sandbox)
        #expect(try encode(sparse) == #"{"bundleId":"com.example","environment":"Sandbox"}"#)
        let empty = ResponseBodyV2DecodedPayload(data: NotificationData())
        #expect(try encode(empty) == #"{"data":{}}"#)
        #expect(!(try encode(Self.fullTransaction)).contains("null"))
    }

    @Test func writesDatesAndPricesAsIntegers() throws {
        let json = try encode(JWSTransactionDecodedPayload(purchaseDate: 1_767_225_600_000, price: 9990))
        #expect(json == #"{"price":9990,"purchaseDate":1767225600000}"#)
    }

    @Test(arguments: [
        ("Staging", "Staging"), ("sandbox", "sandbox"), ("", ""), ("Sandbox", "Sandbox"),
    ])
    func keepsAnyEnvironmentString(raw: String, expected: String) throws {
        let value = try decode(JWSTransactionDecodedPayload.self, #"{"environment":"\#(raw)"}"#)
        #expect(value.environment?.rawValue == expected)
        #expect(try encode(value) == #"{"environment":"\#(expected)"}"#)
    }

    @Test func keepsUnknownValuesOfEveryWireEnum() throws {
        let json = #"""
            {"notificationType":"FUTURE_EVENT","subtype":"SOMETHING_NEW","data":{"status":9,
            "environment":"Staging","consumptionRequestReason":"BORED"}}
            """#
        let payload = try decode(ResponseBodyV2DecodedPayload.self, json)
        #expect(payload.notificationType == NotificationTypeV2(rawValue: "FUTURE_EVENT"))
        #expect(payload.notificationType?.isKnown == false)
        #expect(payload.subtype?.rawValue == "SOMETHING_NEW")
        #expect(payload.data?.status?.rawValue == 9)
        #expect(payload.data?.environment?.rawValue == "Staging")
        #expect(payload.data?.consumptionRequestReason?.rawValue == "BORED")
        let again = try decode(ResponseBodyV2DecodedPayload.self, try encode(payload))
        #expect(again == payload)

        let transaction = try decode(
            JWSTransactionDecodedPayload.self,
            #"{"type":"Subscription+","offerType":-1,"revocationReason":7,"revocationType":"X","inAppOwnershipType":"Y"}"#
        )
        #expect(transaction.type == ProductType(rawValue: "Subscription+"))
        #expect(transaction.offerType == OfferType(rawValue: -1))
        #expect(transaction.revocationReason?.rawValue == 7)
        #expect(transaction.revocationType?.isKnown == false)
        let renewal = try decode(
            JWSRenewalInfoDecodedPayload.self,
            #"{"autoRenewStatus":2,"expirationIntent":99,"priceIncreaseStatus":5}"#
        )
        #expect(renewal.autoRenewStatus?.rawValue == 2)
        #expect(renewal.expirationIntent?.rawValue == 99)
        #expect(renewal.priceIncreaseStatus?.rawValue == 5)
    }

    @Test func debugPrintsAWireValueAsItsJSONLiteral() {
        // Structs holding wire values print as they did with plain strings and integers (the world digests
        // hash such descriptions).
        struct Plain {
            var type: String?
            var status: Int32
        }
        struct Typed {
            var type: ProductType?
            var status: Status
        }
        let plain = String(describing: Plain(type: "Consumable", status: 4))
        let typed = String(describing: Typed(type: .consumable, status: .billingGracePeriod))
        #expect(typed.replacingOccurrences(of: "Typed", with: "Plain") == plain)
        #expect(String(reflecting: Environment.sandbox) == #""Sandbox""#)
    }

    @Test func knowsEveryDocumentedValue() {
        #expect(Environment.allKnown.map(\.rawValue) == ["Sandbox", "Production", "Xcode", "LocalTesting"])
        #expect(NotificationTypeV2.allKnown.count == 23)
        #expect(Subtype.allKnown.count == 19)
        #expect(ProductType.allKnown.allSatisfy { $0.isKnown })
        #expect(Status.allKnown.map(\.rawValue) == [1, 2, 3, 4, 5])
        let literal: Environment = "Production"
        #expect(literal == .production)
        let number: Status = 4
        #expect(number == .billingGracePeriod)
    }

    @Test func decodesApplesOwnExamplePayloads() throws {
        // The shapes of Apple's test resources (signedTransaction.json, signedRenewalInfo.json,
        // signedNotification.json): unknown keys such as "typ" must be ignored.
        let transaction = try decode(
            JWSTransactionDecodedPayload.self,
            #"""
            {"originalTransactionId":"12345","transactionId":"23456","webOrderLineItemId":"34343",
             "bundleId":"com.example","productId":"com.example.product","subscriptionGroupIdentifier":"55555",
             "purchaseDate":1698148900000,"originalPurchaseDate":1698148800000,"expiresDate":1698149000000,
             "quantity":1,"type":"Auto-Renewable Subscription","appAccountToken":"7e3fb20b-4cdb-47cc-936d-99d65f608138",
             "inAppOwnershipType":"PURCHASED","signedDate":1698148900000,"revocationReason":1,
             "revocationDate":1698148950000,"isUpgraded":true,"offerType":1,"offerIdentifier":"abc.123",
             "environment":"LocalTesting","transactionReason":"PURCHASE","storefront":"USA","storefrontId":"143441",
             "price":10990,"currency":"USD","offerDiscountType":"PAY_AS_YOU_GO","appTransactionId":"71134",
             "offerPeriod":"P1Y","revocationType":"REFUND_PRORATED","revocationPercentage":50000,"extra":{"x":[1]}}
            """#
        )
        #expect(transaction.type == .autoRenewableSubscription)
        #expect(transaction.price == 10990)
        #expect(transaction.isUpgraded == true)
        #expect(transaction.revocationPercentage == 50000)
        #expect(transaction.offerType == .introductoryOffer)

        let renewal = try decode(
            JWSRenewalInfoDecodedPayload.self,
            #"""
            {"expirationIntent":1,"originalTransactionId":"12345","autoRenewProductId":"com.example.product.2",
             "productId":"com.example.product","autoRenewStatus":1,"isInBillingRetryPeriod":true,
             "priceIncreaseStatus":0,"gracePeriodExpiresDate":1698148900000,"offerType":2,
             "offerIdentifier":"abc.123","signedDate":1698148800000,"environment":"LocalTesting",
             "recentSubscriptionStartDate":1698148800000,"renewalDate":1698148850000,"renewalPrice":9990,
             "currency":"USD","offerDiscountType":"PAY_AS_YOU_GO","eligibleWinBackOfferIds":["eligible1","eligible2"],
             "appTransactionId":"71134","offerPeriod":"P1Y","appAccountToken":"7e3fb20b-4cdb-47cc-936d-99d65f608138"}
            """#
        )
        #expect(renewal.expirationIntent == .customerCancelled)
        #expect(renewal.autoRenewStatus == .on)
        #expect(renewal.eligibleWinBackOfferIds == ["eligible1", "eligible2"])

        let notification = try decode(
            ResponseBodyV2DecodedPayload.self,
            #"""
            {"notificationType":"SUBSCRIBED","subtype":"INITIAL_BUY","notificationUUID":"002e14d5-51f5-4503-b5a8-c3a1af68eb20",
             "data":{"environment":"LocalTesting","appAppleId":41234,"bundleId":"com.example","bundleVersion":"1.2.3",
             "signedTransactionInfo":"signed_transaction_info_value","signedRenewalInfo":"signed_renewal_info_value",
             "status":1},"version":"2.0","signedDate":1698148900000}
            """#
        )
        #expect(notification.notificationType == .subscribed)
        #expect(notification.subtype == .initialBuy)
        #expect(notification.data?.appAppleId == 41234)
        #expect(notification.data?.status == .active)
        #expect(notification.signedDate == 1_698_148_900_000)

        let body = try decode(ResponseBodyV2.self, #"{"signedPayload":"x.y.z"}"#)
        #expect(body.signedPayload == "x.y.z")
    }

    @Test(arguments: [
        ("purchaseDate", #""2026-01-01""#),
        ("price", "9.99"),
        ("isUpgraded", "1"),
        ("transactionId", "123"),
    ])
    func rejectsWrongJSONTypes(key: String, value: String) {
        #expect(throws: (any Error).self) {
            try decode(JWSTransactionDecodedPayload.self, #"{"\#(key)":\#(value)}"#)
        }
    }

    @Test(arguments: [
        ("7e3fb20b-4cdb-47cc-936d-99d65f608138", true),
        ("7E3FB20B-4CDB-47CC-936D-99D65F608138", true),
        ("7e3fb20b4cdb47cc936d99d65f608138", false),
        ("not-a-uuid", false),
        ("", false),
        ("7e3fb20b-4cdb-47cc-936d-99d65f60813", false),
    ])
    func validatesUUIDs(text: String, valid: Bool) {
        #expect(AppStoreJSON.isValidUUID(text) == valid)
    }

    /// The canonical form only: a character off by one around each range, or a dash moved, is refused; what it
    /// accepts, Foundation accepts too. Foundation on Linux (`sscanf`) also takes a sign, a space or a `0x` for a
    /// digit, which Darwin's `uuid_parse` and this check refuse.
    @Test func validatesUUIDsInTheCanonicalFormOnly() {
        let base = Array("7e3fb20b-4cdb-47cc-936d-99d65f608138".utf8)
        let hex = Set("0123456789abcdefABCDEF".utf8)
        for index in base.indices {
            for byte in Array("-+ /0:9@AFG`afgxZ".utf8) {
                var bytes = base
                bytes[index] = byte
                let text = String(decoding: bytes, as: UTF8.self)
                let canonical = [8, 13, 18, 23].contains(index) ? byte == UInt8(ascii: "-") : hex.contains(byte)
                #expect(AppStoreJSON.isValidUUID(text) == canonical, "\(text)")
                if canonical { #expect(UUID(uuidString: text) != nil, "\(text)") }
            }
        }
        for lax in [
            "+e3fb20b-4cdb-47cc-936d-99d65f608138", " e3fb20b-4cdb-47cc-936d-99d65f608138",
            "0x3fb20b-4cdb-47cc-936d-99d65f608138",
        ] {
            #expect(!AppStoreJSON.isValidUUID(lax), "\(lax)")
        }
    }

    @Test func listsEachMatrixCombinationOnce() {
        let names = NotificationMatrix.all.map(\.description)
        #expect(Set(names).count == names.count)
        #expect(NotificationMatrix.all.allSatisfy { $0.notificationType.isKnown && ($0.subtype?.isKnown ?? true) })
        #expect(Set(NotificationMatrix.all.map(\.notificationType)) == Set(NotificationTypeV2.allKnown))
        #expect(NotificationMatrix.kind(.expired, .voluntary)?.content == .subscription)
        #expect(NotificationMatrix.kind(.renewalExtension, .summary)?.content == .summary)
        #expect(NotificationMatrix.kind(.subscribed, nil) == nil)
        #expect(NotificationMatrix.kind(.didRenew, nil)?.description == "DID_RENEW")
    }

    @Test func roundTripsArbitraryJSON() throws {
        let value = JSONValue.object([
            "a": .array([
                .integer(1), .number("1.5"), .number("18446744073709551615"), .bool(true), .null, .string("s"),
            ]),
            "b": .object([:]),
        ])
        let back = try AppStoreJSON.decoder().decode(JSONValue.self, from: try AppStoreJSON.encoder().encode(value))
        #expect(back == value)
    }

    private func expectSameBytes<T: AppStoreJSONWritable>(_ value: T) throws {
        let fast = AppStoreJSON.encode(value)
        let reference = Array(try AppStoreJSON.encoder().encode(value))
        #expect(String(decoding: fast, as: UTF8.self) == String(decoding: reference, as: UTF8.self))
    }

    @Test func writesTheSameBytesAsJSONEncoder() throws {
        try expectSameBytes(Self.fullTransaction)
        try expectSameBytes(Self.fullRenewal)
        try expectSameBytes(JWSTransactionDecodedPayload())
        try expectSameBytes(ResponseBodyV2(signedPayload: "a.b.c"))
        try expectSameBytes(
            ResponseBodyV2DecodedPayload(
                notificationType: "FUTURE",
                subtype: .summary,
                notificationUUID: "002e14d5-51f5-4503-b5a8-c3a1af68eb20",
                data: NotificationData(appAppleId: 1, bundleId: "b", status: 9, consumptionRequestReason: .legal),
                summary: Summary(storefrontCountryCodes: [], succeededCount: 0, failedCount: -1),
                externalPurchaseToken: ExternalPurchaseToken(externalPurchaseId: "SANDBOX_1", tokenCreationDate: 2),
                appData: AppData(environment: .xcode, signedAppTransactionInfo: "x.y.z"),
                version: "2.0",
                signedDate: .max
            )
        )
        try expectSameBytes(
            AppTransaction(
                receiptType: .sandbox,
                appAppleId: .min,
                deviceVerificationNonce: "n",
                originalPlatform: .visionOS
            )
        )
    }

    @Test(arguments: [
        "plain", "", "quote\"inside", "back\\slash", "slash/ok", "new\nline", "tab\tcr\r", "bell\u{07}nul\u{00}",
        "\u{08}\u{0C}\u{1F}\u{7F}", "ünïcødé ✓ 𝄞", "\u{2028}\u{2029}", "<script>&'",
    ])
    func escapesStringsAsJSONEncoderDoes(text: String) throws {
        try expectSameBytes(JWSTransactionDecodedPayload(productId: text, storefront: text))
        try expectSameBytes(Summary(storefrontCountryCodes: [text, text]))
    }

    /// Every byte that needs an escape, at every offset of a string longer than one 8-byte word: the
    /// word-at-a-time scan must stop before it, and the bytes must be JSONEncoder's.
    @Test(arguments: [UInt8(ascii: "\""), UInt8(ascii: "\\"), 0x00, 0x0A, 0x1F])
    func escapesAtEveryOffsetOfALongString(special: UInt8) throws {
        let plain = [UInt8]("eyJhbGciOiJFUzI1NiIsIng1YyI6WyJNSUlCL.-_".utf8)
        for offset in 0..<plain.count {
            var bytes = plain
            bytes[offset] = special
            let text = String(decoding: bytes, as: UTF8.self)
            let scanned = bytes.withUnsafeBufferPointer { JSONEscaping.plainPrefixLength($0) }
            #expect(scanned <= offset && offset - scanned < 8)
            try expectSameBytes(JWSTransactionDecodedPayload(productId: text))
        }
        let clean = plain.withUnsafeBufferPointer { JSONEscaping.plainPrefixLength($0) }
        #expect(clean == plain.count / 8 * 8)
    }

    private func fastRead<T: AppStoreJSONReadable>(_ type: T.Type, _ json: [UInt8]) -> T? {
        json.withUnsafeBufferPointer { AppStoreJSON.read(type, from: $0) }
    }

    /// The payloads the verifier decodes on every delivery, read without JSONDecoder: the same values.
    @Test func readsPlainPayloadsAsTheDecoderDoes() throws {
        var transaction = Self.fullTransaction
        (transaction.advancedCommerceInfo, transaction.commitmentInfo) = (nil, nil)
        var renewal = Self.fullRenewal
        (renewal.advancedCommerceInfo, renewal.commitmentInfo) = (nil, nil)
        let notification = ResponseBodyV2DecodedPayload(
            notificationType: .didRenew,
            subtype: "FUTURE_SUBTYPE",
            notificationUUID: "002e14d5-51f5-4503-b5a8-c3a1af68eb20",
            data: NotificationData(
                appAppleId: 1234,
                bundleId: "com.example",
                bundleVersion: "1.0",
                environment: .sandbox,
                signedTransactionInfo: "a.b.c",
                signedRenewalInfo: "d.e.f",
                status: 9,
                consumptionRequestReason: .legal
            ),
            version: "2.0",
            signedDate: -1
        )
        let json = AppStoreJSON.encoder()
        #expect(fastRead(JWSTransactionDecodedPayload.self, Array(try json.encode(transaction))) == transaction)
        #expect(fastRead(JWSRenewalInfoDecodedPayload.self, Array(try json.encode(renewal))) == renewal)
        #expect(fastRead(ResponseBodyV2DecodedPayload.self, Array(try json.encode(notification))) == notification)
    }

    @Test(arguments: [
        #"{"quantity":1.0}"#, #"{"quantity":2147483648}"#, #"{"productId":"a\"b"}"#, #"{"productId":null}"#,
        #"{"productId":"x","productId":"y"}"#, #"{"price":01}"#, #"{"price":-}"#, #"{"unknown":1}"#,
        #"{"isUpgraded":"true"}"#, #"{"type":1}"#, #"{"productId":"ü"}"#, "[]", #"{"price":1} x"#,
        #"{"price":1,}"#, #"{"signedDate":1234567890123456789}"#, #"{"isUpgraded":truex}"#, #"{"price":1"#,
        #"{"advancedCommerceInfo":{}}"#, "",
    ])
    func leavesEveryOtherShapeToTheDecoder(json: String) {
        #expect(fastRead(JWSTransactionDecodedPayload.self, Array(json.utf8)) == nil)
    }

    /// A byte the plain shape refuses, at every offset of a string longer than one 8-byte word: the
    /// word-at-a-time skip must stop before it, so the reader leaves the payload to the decoder.
    @Test(arguments: [UInt8(ascii: "\\"), 0x00, 0x0A, 0x1F, 0x80, 0xC3, 0xFF])
    func refusesAnIrregularByteAtEveryOffsetOfALongString(special: UInt8) {
        let plain = [UInt8]("eyJhbGciOiJFUzI1NiIsIng1YyI6WyJNSUlCL.-_ ~".utf8)
        let json = { (text: [UInt8]) in Array(#"{"productId":""#.utf8) + text + Array(#""}"#.utf8) }
        #expect(
            fastRead(JWSTransactionDecodedPayload.self, json(plain))?.productId
                == String(decoding: plain, as: UTF8.self)
        )
        for offset in 0..<plain.count {
            var bytes = plain
            bytes[offset] = special
            #expect(fastRead(JWSTransactionDecodedPayload.self, json(bytes)) == nil, "byte \(special) at \(offset)")
        }
    }

    @Test(arguments: [
        "{}", #" { "price" : -7 , "quantity" : 0 ,"isUpgraded":false} "#, #"{"type":"Future Type","offerType":9}"#,
    ])
    func readsWhitespaceAndOpenValuesAsTheDecoderDoes(json: String) throws {
        let decoded = try AppStoreJSON.decoder().decode(JWSTransactionDecodedPayload.self, from: Data(json.utf8))
        #expect(fastRead(JWSTransactionDecodedPayload.self, Array(json.utf8)) == decoded)
    }
}
