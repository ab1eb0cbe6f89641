import AppStoreModel
import Foundation
import Minting
import Signing
import Testing

@testable import ReferenceLedger

/// The ledger with the real verifier, fed by PayStorm's own `Minter` (genuine and forged signed data).
struct MintedLedgerTests {
    static let pki = try! TestPKI.generate()
    static let minter = Minter(pki: pki)

    static func ledger(flaws: Set<LedgerFlaw> = []) throws -> (ReferenceLedger, UInt16, String) {
        let directory = NSTemporaryDirectory() + "ledger-minted-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let configuration = LedgerConfiguration(
            databasePath: directory + "/ledger.sqlite",
            trustedRoots: [pki.root.der],
            bundleId: minter.app.bundleId,
            environment: minter.app.environment.rawValue,
            flaws: flaws
        )
        let ledger = try ReferenceLedger(configuration: configuration)
        let address = try ledger.start()
        return (ledger, UInt16(address.split(separator: ":").last!)!, directory)
    }

    static func purchase(_ kind: NotificationKind?, _ type: ProductType? = nil, token: String) -> Purchase {
        Purchase(kind: kind, productType: type, appAccountToken: token, signedDate: Minter.nowMilliseconds())
    }

    static func probe(_ port: UInt16, _ token: String) throws -> AccountState {
        let response = try http(port, "GET", "/accounts/\(token)")
        return try JSONDecoder().decode(AccountState.self, from: Data(response.body))
    }

    @Test func acceptsEveryNotificationKindOfTheMatrix() throws {
        let (ledger, port, directory) = try Self.ledger()
        defer {
            ledger.stop()
            try? FileManager.default.removeItem(atPath: directory)
        }
        for kind in NotificationMatrix.all {
            let minted = try Self.minter.notification(kind)
            let response = try http(port, "POST", "/notifications", body: minted.body)
            #expect(response.status == 200, "\(kind): \(String(decoding: response.body, as: UTF8.self))")
        }
    }

    @Test func grantsAMintedPurchaseOnceOverBothPaths() throws {
        let (ledger, port, directory) = try Self.ledger()
        defer {
            ledger.stop()
            try? FileManager.default.removeItem(atPath: directory)
        }
        let token = Minter.randomUUID()
        let kind = NotificationMatrix.kind(.oneTimeCharge, nil)!
        let purchase = Self.purchase(kind, .consumable, token: token)
        let minted = try Self.minter.notification(kind, purchase: purchase)
        #expect(try http(port, "POST", "/notifications", body: minted.body).status == 200)
        #expect(try http(port, "POST", "/notifications", body: minted.body).status == 200)
        let device = try Self.minter.transaction(purchase)
        let body = Array(#"{"signedTransaction":"\#(device.jws)"}"#.utf8)
        #expect(try http(port, "POST", "/transactions", body: body).status == 200)
        let state = try Self.probe(port, token)
        #expect(state.grants == [AccountState.Grant(transactionId: purchase.transactionId, count: 1)])
        #expect(state.balances[purchase.productId] == Int64(purchase.quantity))
    }

    @Test(arguments: Forgery.allCases)
    func rejectsEveryForgeryAndGrantsNothing(forgery: Forgery) throws {
        let (ledger, port, directory) = try Self.ledger()
        defer {
            ledger.stop()
            try? FileManager.default.removeItem(atPath: directory)
        }
        let token = Minter.randomUUID()
        let kind = NotificationMatrix.kind(.oneTimeCharge, nil)!
        let purchase = Self.purchase(kind, .nonConsumable, token: token)
        let minted = try Self.minter.notification(kind, purchase: purchase, forgery: forgery)
        let response = try http(port, "POST", "/notifications", body: minted.body)
        #expect((400..<500).contains(response.status), "\(forgery) answered \(response.status)")
        let reason = (try? JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])?["reason"]
        #expect(reason is String)
        if let device = try? Self.minter.transaction(purchase, forgery: forgery) {
            let body = Array(#"{"signedTransaction":"\#(device.jws)"}"#.utf8)
            let status = try http(port, "POST", "/transactions", body: body).status
            #expect((400..<500).contains(status), "device \(forgery) answered \(status)")
        }
        #expect(try Self.probe(port, token).grants.isEmpty)
    }

    @Test(arguments: [
        (LedgerFlaw.trustUnverified, Forgery.badSignature, true),
        (LedgerFlaw.trustUnverified, Forgery.untrustedRoot, true),
        (LedgerFlaw.ignoreBundleEnvironment, Forgery.wrongBundle, true),
        (LedgerFlaw.ignoreBundleEnvironment, Forgery.wrongEnvironment, true),
        (LedgerFlaw.ignoreBundleEnvironment, Forgery.badSignature, false),
    ])
    func verificationFlawsGrantWhatTheyShouldNot(flaw: LedgerFlaw, forgery: Forgery, grants: Bool) throws {
        let (ledger, port, directory) = try Self.ledger(flaws: [flaw])
        defer {
            ledger.stop()
            try? FileManager.default.removeItem(atPath: directory)
        }
        let token = Minter.randomUUID()
        let kind = NotificationMatrix.kind(.oneTimeCharge, nil)!
        let purchase = Self.purchase(kind, .nonConsumable, token: token)
        let minted = try Self.minter.notification(kind, purchase: purchase, forgery: forgery)
        _ = try http(port, "POST", "/notifications", body: minted.body)
        #expect(try Self.probe(port, token).entitled(purchase.productId) == grants)
    }
}
