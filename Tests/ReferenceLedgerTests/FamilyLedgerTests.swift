import AppStoreModel
import Foundation
import Minting
import PayStormTestKit
import TargetContract
import Testing

@testable import ReferenceLedger

/// The ledger's part of Family Sharing of subscriptions (a member's own FAMILY_SHARED series, ended by REVOKE),
/// the `ignore-family-revoke` flaw, and a mass extension's summary (accepted, granting nothing).
struct FamilyLedgerTests {
    /// A member's shared subscription `m1`, current for another hour: SUBSCRIBED, then REVOKE.
    @Test(arguments: [[], [LedgerFlaw.ignoreFamilyRevoke]])
    func aFamilyRevokeEndsTheMembersSubscription(flaws: [LedgerFlaw]) throws {
        let fixture = try LedgerFixture(flaws: Set(flaws))
        let member = Shop()
        var entitled: [Bool] = []
        for (type, signed, revoked, status) in [
            ("SUBSCRIBED", member.now - 2000, nil, 1), ("REVOKE", member.now - 1000, member.now - 1000, 5),
        ] as [(String, Int64, Int64?, Int)] {
            let shared = member.transaction(
                "m1",
                product: "monthly",
                type: autoRenewable,
                original: "m1",
                signedDate: signed,
                expires: member.now + hour,
                revoked: revoked
            )
            let note = member.notification(type, signedDate: signed, transaction: shared, status: status)
            #expect(try fixture.post("/notifications", note).status == 200)
            entitled.append(try fixture.account(member.token).entitled("monthly"))
        }
        // Correct: entitled while shared, not after REVOKE. The flaw keeps what the purchaser stopped sharing.
        #expect(entitled == [true, !flaws.isEmpty])
    }

    /// `RENEWAL_EXTENSION`/`SUMMARY` as the run signs it (`summary`, no `data`): verified and answered 200; a
    /// forged one (another bundle) is refused.
    @Test func acceptsAMassExtensionSummaryAndRejectsItsForgery() throws {
        let minter = MintedLedgerTests.minter
        var payload = ResponseBodyV2DecodedPayload(
            notificationType: .renewalExtension,
            subtype: .summary,
            notificationUUID: Minter.randomUUID(),
            version: "2.0",
            signedDate: Minter.nowMilliseconds()
        )
        payload.summary = Summary(
            environment: minter.app.environment,
            bundleId: minter.app.bundleId,
            productId: "monthly",
            requestIdentifier: Minter.randomUUID(),
            storefrontCountryCodes: ["USA"],
            succeededCount: 2,
            failedCount: 1
        )
        let signed = try minter.signNotification(payload, transaction: nil, renewal: nil)
        let decoded = try #require(signed.split(separator: ".").dropFirst().first)
        #expect(
            !String(decoding: Array(UnverifiedJWS.base64URLDecode(decoded) ?? []), as: UTF8.self).contains("\"data\"")
        )
        try MintedLedgerTests.withMintedLedger { port in
            let response = try http(port, "POST", "/notifications", body: Minter.webhookBody(signed))
            #expect(response.status == 200, "\(String(decoding: response.body, as: UTF8.self))")
            let forged = try minter.signNotification(payload, transaction: nil, renewal: nil, forgery: .wrongBundle)
            #expect(
                (400..<500).contains(try http(port, "POST", "/notifications", body: Minter.webhookBody(forged)).status)
            )
        }
    }
}
