import AppStoreModel
import Foundation
import Testing

@testable import ReferenceLedger

/// The trusting path reads AppStoreModel's payloads as the verifier does: the fast reader for the plain shape, the
/// decoder for anything else, with the same values either way, and Apple's constants as typed wire values.
struct UnverifiedJWSTests {
    private static var fields: [String: Any] {
        [
            "transactionId": "7", "originalTransactionId": "5", "productId": "pro",
            "type": "Auto-Renewable Subscription",
            "environment": "Sandbox", "quantity": 1, "expiresDate": 1_900_000_000_000, "revocationReason": 1,
        ]
    }

    @Test func readsTheSameTypedTransactionThroughTheReaderAndTheDecoder() throws {
        // `null` leaves the reader's plain shape, so this one goes through JSONDecoder.
        var irregular = Self.fields
        irregular["offerIdentifier"] = NSNull()
        let plain = try UnverifiedJWS.decode(JWSTransactionDecodedPayload.self, fakeJWS(Self.fields)).get()
        let decoded = try UnverifiedJWS.decode(JWSTransactionDecodedPayload.self, fakeJWS(irregular)).get()
        #expect(plain == decoded)
        #expect(plain.type == .autoRenewableSubscription && plain.environment == .sandbox)
        #expect(plain.revocationReason == .refundedDueToIssue && plain.quantity == 1)
    }

    @Test func keepsANotificationTypeAppleHasNotDocumented() throws {
        let jws = fakeJWS(["notificationType": "SOMETHING_NEW", "notificationUUID": "u", "signedDate": 1, "data": [:]])
        let payload = try UnverifiedJWS.decode(ResponseBodyV2DecodedPayload.self, jws).get()
        #expect(payload.notificationType?.rawValue == "SOMETHING_NEW" && payload.notificationType?.isKnown == false)
    }

    @Test func refusesAPayloadThatIsNotJSON() {
        let jws = "e30.\(JWSBase64.encode(Array("not json".utf8))).valid"
        #expect(throws: Rejection.self) { try UnverifiedJWS.decode(JWSTransactionDecodedPayload.self, jws).get() }
    }
}
