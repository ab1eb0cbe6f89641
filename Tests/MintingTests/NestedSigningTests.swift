import AppStoreModel
import Foundation
import Minting
import Signing
import Testing

/// The bytes a genuine notification signs, whatever path signed them: the outer payload is exactly what
/// `JSONEncoder` writes for the payload as minted (its nested JWS in place), and each nested JWS signs
/// exactly its payload's JSON under the outer JWS's header.
struct NestedSigningTests {
    let minter: Minter

    init() throws {
        minter = Minter(pki: try TestPKI.generate())
    }

    private func segments(_ jws: String) -> [String] {
        jws.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
    }

    private func signedBytes(_ jws: String) throws -> [UInt8] {
        try #require(JWS.base64URLDecode(segments(jws)[1]))
    }

    @Test(arguments: NotificationMatrix.all)
    func signsExactlyTheJSONOfEveryPayloadAsMinted(kind: NotificationKind) throws {
        let minted = try minter.notification(kind)
        let encoder = AppStoreJSON.encoder()
        #expect(try signedBytes(minted.signedPayload) == Array(try encoder.encode(minted.payload)))
        let header = segments(minted.signedPayload)[0]
        if let transaction = minted.transaction {
            let jws = try #require(minted.payload.data?.signedTransactionInfo)
            #expect(segments(jws)[0] == header)
            #expect(try signedBytes(jws) == Array(try encoder.encode(transaction)))
        }
        if let renewal = minted.renewalInfo {
            let jws = try #require(minted.payload.data?.signedRenewalInfo)
            #expect(segments(jws)[0] == header)
            #expect(try signedBytes(jws) == Array(try encoder.encode(renewal)))
        }
    }

    /// The webhook body of payloads built elsewhere signs the same outer JSON as the String form, apart from
    /// the nested signatures (random per signing): each nested JWS's signing input agrees.
    @Test func bodyAndStringSignTheSameBytes() throws {
        let kind = NotificationKind(.didRenew, nil, .subscription)
        let date = Minter.nowMilliseconds()
        let facts = Minter.impliedTransaction(by: kind, signedDate: date)
        let payload = ResponseBodyV2DecodedPayload(
            notificationType: kind.notificationType,
            notificationUUID: Minter.randomUUID(),
            data: NotificationData(bundleId: "com.example.paystorm", environment: .sandbox, status: .active),
            version: "2.0",
            signedDate: date
        )
        let transaction = minter.transactionPayload(facts, kind: kind, signedDate: date)
        let renewal = minter.renewalInfoPayload(facts, kind: kind, signedDate: date)
        let body = try minter.notificationBody(payload, transaction: transaction, renewal: renewal)
        let signed = try minter.signNotification(payload, transaction: transaction, renewal: renewal)
        let fromBody = try AppStoreJSON.decoder().decode([String: String].self, from: Data(body))
        let bodyJWS = try #require(fromBody["signedPayload"])
        var outers: [ResponseBodyV2DecodedPayload] = []
        for jws in [bodyJWS, signed] {
            let bytes = try signedBytes(jws)
            let outer = try AppStoreJSON.decoder().decode(ResponseBodyV2DecodedPayload.self, from: Data(bytes))
            #expect(bytes == AppStoreJSON.encode(outer))
            let nested = try #require(outer.data?.signedTransactionInfo)
            #expect(try signedBytes(nested) == AppStoreJSON.encode(transaction))
            #expect(try signedBytes(try #require(outer.data?.signedRenewalInfo)) == AppStoreJSON.encode(renewal))
            var stripped = outer
            stripped.data?.signedTransactionInfo = nil
            stripped.data?.signedRenewalInfo = nil
            outers.append(stripped)
        }
        #expect(outers[0] == outers[1])
    }
}
