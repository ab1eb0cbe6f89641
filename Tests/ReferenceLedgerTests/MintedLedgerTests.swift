import AppStoreModel
import Foundation
import Minting
import PayStormTestKit
import Signing
import TargetContract
import Testing

@testable import ReferenceLedger

/// The ledger with the real verifier, fed by PayStorm's own `Minter` (genuine and forged signed data).
struct MintedLedgerTests {
    static let pki = try! TestPKI.generate()
    static let minter = Minter(pki: pki)

    /// Runs `body` against a ledger that trusts the test PKI, with `flaws`.
    static func withMintedLedger(flaws: Set<LedgerFlaw> = [], _ body: (UInt16) throws -> Void) throws {
        try withLedger(
            configuration: {
                LedgerConfiguration(
                    databasePath: $0,
                    trustedRoots: [pki.root.der],
                    bundleId: minter.app.bundleId,
                    environment: minter.app.environment,
                    flaws: flaws
                )
            },
            body
        )
    }

    static func purchase(
        _ kind: NotificationKind?,
        _ type: ProductType? = nil,
        token: String
    ) -> JWSTransactionDecodedPayload {
        Minter.impliedTransaction(
            by: kind,
            productType: type,
            appAccountToken: token,
            signedDate: Minter.nowMilliseconds()
        )
    }

    static func probe(_ port: UInt16, _ token: String) throws -> AccountState {
        let response = try http(port, "GET", "/accounts/\(token)")
        return try JSONDecoder().decode(AccountState.self, from: Data(response.body))
    }

    @Test func acceptsEveryNotificationKindOfTheMatrix() throws {
        try Self.withMintedLedger { port in
            for kind in NotificationMatrix.all {
                let minted = try Self.minter.notification(kind)
                let response = try http(port, "POST", "/notifications", body: minted.body)
                #expect(response.status == 200, "\(kind): \(String(decoding: response.body, as: UTF8.self))")
            }
        }
    }

    @Test func grantsAMintedPurchaseOnceOverBothPaths() throws {
        try Self.withMintedLedger { port in
            let token = Minter.randomUUID()
            let kind = NotificationMatrix.kind(.oneTimeCharge, nil)!
            let purchase = Self.purchase(kind, .consumable, token: token)
            let minted = try Self.minter.notification(kind, transaction: purchase)
            #expect(try http(port, "POST", "/notifications", body: minted.body).status == 200)
            #expect(try http(port, "POST", "/notifications", body: minted.body).status == 200)
            let device = try Self.minter.transaction(purchase)
            let body = Array(#"{"signedTransaction":"\#(device.jws)"}"#.utf8)
            #expect(try http(port, "POST", "/transactions", body: body).status == 200)
            let state = try Self.probe(port, token)
            let transactionId = try #require(purchase.transactionId)
            #expect(state.grants == [AccountState.Grant(transactionId: transactionId, count: 1)])
            #expect(state.balances[try #require(purchase.productId)] == purchase.quantity.map(Int.init))
        }
    }

    /// A body whose JWS is written with JSON escapes (`\u002e` for each dot) is the same notification: its bytes
    /// as they stand fail the verifier, and the string the parser reads passes it.
    @Test func acceptsAWebhookBodyWhoseJWSIsEscaped() throws {
        try Self.withMintedLedger { port in
            let token = Minter.randomUUID()
            let kind = NotificationMatrix.kind(.oneTimeCharge, nil)!
            let minted = try Self.minter.notification(kind, transaction: Self.purchase(kind, .consumable, token: token))
            let plain = String(decoding: minted.body, as: UTF8.self)
            let escaped = plain.replacingOccurrences(of: ".", with: #"\u002e"#)
            #expect(escaped != plain)
            let response = try http(port, "POST", "/notifications", body: Array(escaped.utf8))
            #expect(response.status == 200, "\(String(decoding: response.body, as: UTF8.self))")
            #expect(try Self.probe(port, token).grants?.count == 1)
        }
    }

    @Test(arguments: Forgery.allCases)
    func rejectsEveryForgeryAndGrantsNothing(forgery: Forgery) throws {
        try Self.withMintedLedger { port in
            let token = Minter.randomUUID()
            let kind = NotificationMatrix.kind(.oneTimeCharge, nil)!
            let purchase = Self.purchase(kind, .nonConsumable, token: token)
            let minted = try Self.minter.notification(kind, transaction: purchase, forgery: forgery)
            let response = try http(port, "POST", "/notifications", body: minted.body)
            #expect((400..<500).contains(response.status), "\(forgery) answered \(response.status)")
            let reason = (try? JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])?["reason"]
            #expect(reason is String)
            if let device = try? Self.minter.transaction(purchase, forgery: forgery) {
                let body = Array(#"{"signedTransaction":"\#(device.jws)"}"#.utf8)
                let status = try http(port, "POST", "/transactions", body: body).status
                #expect((400..<500).contains(status), "device \(forgery) answered \(status)")
            }
            #expect(try Self.probe(port, token).grants == [])
        }
    }

    @Test(arguments: [
        (LedgerFlaw.trustUnverified, Forgery.badSignature, true),
        (LedgerFlaw.trustUnverified, Forgery.untrustedRoot, true),
        (LedgerFlaw.ignoreBundleEnvironment, Forgery.wrongBundle, true),
        (LedgerFlaw.ignoreBundleEnvironment, Forgery.wrongEnvironment, true),
        (LedgerFlaw.ignoreBundleEnvironment, Forgery.badSignature, false),
    ])
    func verificationFlawsGrantWhatTheyShouldNot(flaw: LedgerFlaw, forgery: Forgery, grants: Bool) throws {
        try Self.withMintedLedger(flaws: [flaw]) { port in
            let token = Minter.randomUUID()
            let kind = NotificationMatrix.kind(.oneTimeCharge, nil)!
            let purchase = Self.purchase(kind, .nonConsumable, token: token)
            let minted = try Self.minter.notification(kind, transaction: purchase, forgery: forgery)
            _ = try http(port, "POST", "/notifications", body: minted.body)
            #expect(try Self.probe(port, token).entitled(try #require(purchase.productId)) == grants)
        }
    }
}
