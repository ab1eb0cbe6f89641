import AppStoreModel
import Foundation
import Minting
import RunControl
import Signing
import Testing

@testable import PayStormCLI

/// One PKI directory for the mint suites, written once (key generation is the slow part).
let pkiDirectory: Result<String, any Error> = Result {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("paystorm-mint-\(UUID().uuidString)")
        .path
    try TestPKI.generate().write(to: directory)
    return directory
}

struct MintCommandTests {
    let pki: String

    init() throws {
        pki = try pkiDirectory.get()
    }

    private func mint(_ arguments: [String]) throws -> String {
        try MintCommand.output(Arguments(["--pki", pki] + arguments))
    }

    private func payload<T: Decodable>(_ type: T.Type, _ jws: String) throws -> T {
        let parts = jws.split(separator: ".", omittingEmptySubsequences: false)
        #expect(parts.count == 3)
        let bytes = try #require(JWS.base64URLDecode(String(parts[1])))
        return try AppStoreJSON.decoder().decode(type, from: Data(bytes))
    }

    private func exitCode(_ arguments: [String]) -> ExitCode {
        PayStormCLI.run(["mint"] + arguments)
    }

    @Test func printsTheWebhookBodyOfANotification() throws {
        let body = try mint([
            "--type", "SUBSCRIBED", "--subtype", "INITIAL_BUY", "--product", "pro.monthly",
            "--account-token", "7e3fb20b-4cdb-47cc-936d-99d65f608138", "--bundle-id", "com.acme.app",
            "--app-apple-id", "42", "--signed-date", "1767225600000",
        ])
        let decoded = try AppStoreJSON.decoder().decode(ResponseBodyV2.self, from: Data(body.utf8))
        let outer = try payload(ResponseBodyV2DecodedPayload.self, try #require(decoded.signedPayload))
        #expect(outer.notificationType == .subscribed)
        #expect(outer.subtype == .initialBuy)
        #expect(outer.signedDate == 1_767_225_600_000)
        #expect(outer.data?.bundleId == "com.acme.app")
        #expect(outer.data?.appAppleId == 42)
        #expect(outer.data?.environment == .sandbox)
        let transaction = try payload(
            JWSTransactionDecodedPayload.self,
            try #require(outer.data?.signedTransactionInfo)
        )
        #expect(transaction.productId == "pro.monthly")
        #expect(transaction.appAccountToken == "7e3fb20b-4cdb-47cc-936d-99d65f608138")
        #expect(transaction.type == .autoRenewableSubscription)
    }

    @Test(arguments: NotificationMatrix.all)
    func mintsEveryKindOfTheMatrix(kind: NotificationKind) throws {
        let jws = try mint(["--type", kind.description, "--jws"])
        let outer = try payload(ResponseBodyV2DecodedPayload.self, jws)
        #expect(outer.notificationType == kind.notificationType)
        #expect(outer.subtype == kind.subtype)
    }

    @Test func mintsBareTransactionsAndRenewalInfos() throws {
        let transaction = try payload(
            JWSTransactionDecodedPayload.self,
            try mint([
                "--transaction", "--product", "gems.100", "--product-type", "consumable", "--environment", "Production",
            ])
        )
        #expect(transaction.type == .consumable)
        #expect(transaction.environment == .production)
        #expect(transaction.productId == "gems.100")
        let refund = try payload(JWSTransactionDecodedPayload.self, try mint(["--transaction", "--type", "REFUND"]))
        #expect(refund.revocationDate != nil)
        let renewal = try payload(
            JWSRenewalInfoDecodedPayload.self,
            try mint(["--renewal-info", "--type", "EXPIRED/VOLUNTARY"])
        )
        #expect(renewal.autoRenewStatus == .off)
        #expect(renewal.expirationIntent == .customerCancelled)
    }

    @Test func mintsTheTransactionIdsItIsGiven() throws {
        // The refund of a purchase the backend already has: its own transaction ID, in the nested transaction.
        let refund = try payload(
            ResponseBodyV2DecodedPayload.self,
            try mint(["--type", "REFUND", "--transaction-id", "2000000000000123", "--jws"])
        )
        let refunded = try payload(
            JWSTransactionDecodedPayload.self,
            try #require(refund.data?.signedTransactionInfo)
        )
        #expect(refunded.transactionId == "2000000000000123")
        // A renewal of a subscription the backend knows: a new transaction ID under the known original one.
        let renewal = try payload(
            ResponseBodyV2DecodedPayload.self,
            try mint([
                "--type", "DID_RENEW", "--transaction-id", "2000000000000200", "--original-transaction-id",
                "2000000000000100", "--jws",
            ])
        )
        let renewed = try payload(
            JWSTransactionDecodedPayload.self,
            try #require(renewal.data?.signedTransactionInfo)
        )
        #expect(renewed.transactionId == "2000000000000200")
        #expect(renewed.originalTransactionId == "2000000000000100")
        let renewalInfo = try payload(
            JWSRenewalInfoDecodedPayload.self,
            try #require(renewal.data?.signedRenewalInfo)
        )
        #expect(renewalInfo.originalTransactionId == "2000000000000100")
        // A first purchase is its own original, so one ID sets both.
        let first = try payload(
            JWSTransactionDecodedPayload.self,
            try mint(["--transaction", "--product-type", "consumable", "--transaction-id", "77"])
        )
        #expect(first.transactionId == "77")
        #expect(first.originalTransactionId == "77")
    }

    @Test func mintsUnknownTypesOnlyWhenAllowed() throws {
        let jws = try mint(["--type", "FUTURE_EVENT", "--subtype", "NEW", "--allow-unknown-type", "--jws"])
        let outer = try payload(ResponseBodyV2DecodedPayload.self, jws)
        #expect(outer.notificationType?.rawValue == "FUTURE_EVENT")
        #expect(outer.subtype?.rawValue == "NEW")
        #expect(outer.data?.signedTransactionInfo != nil)
    }

    @Test(arguments: [
        (["--type", "FUTURE_EVENT"], "FUTURE_EVENT"),
        (["--type", "SUBSCRIBED", "--subtype", "SHINY"], "SHINY"),
        (["--type", "SUBSCRIBED"], "SUBSCRIBED"),
        (["--type", "DID_RENEW", "--subtype", "VOLUNTARY"], "VOLUNTARY"),
        (["--type", "SUBSCRIBED/INITIAL_BUY", "--subtype", "RESUBSCRIBE"], "subtype"),
        (["--subtype", "INITIAL_BUY"], "--type"),
        ([], "--type"),
        (["--type", "DID_RENEW", "--account-token", "not-a-uuid"], "not-a-uuid"),
        (["--type", "DID_RENEW", "--environment", "Staging"], "Staging"),
        (["--type", "DID_RENEW", "--product-type", "Gadget"], "Gadget"),
        (["--type", "DID_RENEW", "--product-type", "consumable"], "auto-renewable"),
        (["--type", "ONE_TIME_CHARGE", "--product-type", "auto-renewable"], "auto-renewable"),
        (["--renewal-info", "--product-type", "consumable"], "renewal info"),
        (["--type", "DID_RENEW", "--forge", "glitter"], "glitter"),
        (["--transaction", "--forge", "forged-inner-transaction"], "forged-inner-transaction"),
        (["--transaction", "--renewal-info"], "--transaction"),
        (["--type", "DID_RENEW", "--app-apple-id", "x"], "x"),
        (["--type", "DID_RENEW", "--signed-date", "yesterday"], "yesterday"),
        (["--type", "DID_RENEW", "--signed-date", "9223372036854775807"], "9223372036854775807"),
        (["--renewal-info", "--type", "EXPIRED", "--signed-date", "253402300800000"], "--signed-date"),
        (["--transaction", "--signed-date", "0"], "--signed-date"),
        (["--type", "DID_RENEW", "--signed-date", "-9223372036854775808"], "--signed-date"),
        (["--type", "DID_RENEW", "--bogus"], "--bogus"),
        (["--type", "REFUND", "--transaction-id", "12a"], "12a"),
        (["--type", "REFUND", "--transaction-id=", "--original-transaction-id", "1"], "--transaction-id"),
        (["--transaction", "--original-transaction-id", "-5"], "-5"),
        (["--type", "REFUND", "--transaction-id", "１２"], "１２"),
        (["--type", "REFUND", "--transaction-id", String(repeating: "9", count: 21)], "--transaction-id"),
    ])
    func rejectsBadOptionsNamingTheValue(arguments: [String], named: String) {
        do {
            _ = try mint(arguments)
            Issue.record("minted with \(arguments)")
        } catch let error as CLIError {
            #expect(error.exitCode == .usage)
            #expect(error.message.contains(named), "\(error.message)")
        } catch {
            Issue.record("unexpected \(error)")
        }
        #expect(exitCode(["--pki", pki] + arguments) == .usage)
    }

    @Test func needsAReadablePKI() throws {
        #expect(exitCode(["--type", "DID_RENEW"]) == .usage)
        let missing = FileManager.default.temporaryDirectory.appendingPathComponent("no-such-pki-\(UUID().uuidString)")
            .path
        #expect(exitCode(["--pki", missing, "--type", "DID_RENEW"]) == .noInput)
        let broken = FileManager.default.temporaryDirectory.appendingPathComponent("broken-pki-\(UUID().uuidString)")
            .path
        try FileManager.default.createDirectory(atPath: broken, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: broken) }
        for name in [
            "root.der", "root.pem", "root.key", "intermediate.pem", "intermediate.key", "leaf.pem", "leaf.key",
        ] {
            try Data("garbage".utf8).write(to: URL(fileURLWithPath: broken).appendingPathComponent(name))
        }
        #expect(exitCode(["--pki", broken, "--type", "DID_RENEW"]) == .badInput)
    }

    @Test func helpListsEveryKindAndForgery() {
        for kind in NotificationMatrix.all {
            #expect(MintCommand.help.contains("  \(kind)\n"))
        }
        for forgery in Forgery.allCases {
            #expect(MintCommand.help.contains(forgery.rawValue))
        }
        #expect(PayStormCLI.help.contains("verify"))
    }

    @Test func verifiesWhatItMints() throws {
        let body = try mint(["--type", "DID_RENEW"])
        let verdict = try VerifyCommand.verdict(
            Arguments(["--pki", pki, "--bundle-id", "com.example.paystorm", "--environment", "Sandbox"]),
            input: Array(body.utf8)
        )
        #expect(verdict == "OK")
        let transaction = try mint(["--transaction"])
        let transactionVerdict = try VerifyCommand.verdict(
            Arguments([
                "--trust", pki + "/root.der", "--bundle-id", "com.example.paystorm", "--environment", "Sandbox",
                "--kind", "transaction",
            ]),
            input: Array("{\"signedTransaction\":\"\(transaction)\"}\n".utf8)
        )
        #expect(transactionVerdict == "OK")
        let renewal = try mint(["--renewal-info"])
        let renewalVerdict = try VerifyCommand.verdict(
            Arguments([
                "--trust", pki + "/root.pem", "--bundle-id", "other.bundle", "--environment", "Sandbox", "--kind",
                "renewal-info",
            ]),
            input: Array(renewal.utf8)
        )
        #expect(renewalVerdict == "OK")
    }

    @Test(arguments: Forgery.allCases)
    func verifiesForgeriesAsAppleWould(forgery: Forgery) throws {
        let body = try mint(["--type", "SUBSCRIBED/INITIAL_BUY", "--forge", forgery.rawValue])
        let verdict = try VerifyCommand.verdict(
            Arguments(["--pki", pki, "--bundle-id", "com.example.paystorm", "--environment", "Sandbox"]),
            input: Array(body.utf8)
        )
        #expect(verdict == forgery.expectedStatus(for: .notification))
    }

    @Test(arguments: [
        ([String](), "--bundle-id"),
        (["--bundle-id", "b"], "--environment"),
        (["--bundle-id", "b", "--environment", "Staging"], "Staging"),
        (["--bundle-id", "b", "--environment", "Sandbox"], "--trust"),
        (["--bundle-id", "b", "--environment", "Sandbox", "--trust", "x", "--pki", "y"], "only one"),
        (["--bundle-id", "b", "--environment", "Sandbox", "--pki", "PKI", "--kind", "receipt"], "receipt"),
        (["--bundle-id", "b", "--environment", "Production", "--pki", "PKI"], "ppleId"),
    ])
    func rejectsBadVerifyOptions(arguments: [String], named: String) {
        let resolved = arguments.map { $0 == "PKI" ? pki : $0 }
        do {
            _ = try VerifyCommand.verdict(Arguments(resolved), input: Array("a.b.c".utf8))
            Issue.record("verified with \(arguments)")
        } catch let error as CLIError {
            #expect(error.exitCode == .usage)
            #expect(error.message.contains(named), "\(error.message)")
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    @Test func rejectsEmptyInputAndMissingRoots() {
        let options = ["--bundle-id", "b", "--environment", "Sandbox"]
        #expect(throws: CLIError.self) {
            try VerifyCommand.verdict(Arguments(options + ["--pki", pki]), input: Array("  \n".utf8))
        }
        do {
            _ = try VerifyCommand.verdict(Arguments(options + ["--trust", "/nonexistent/root.der"]), input: [])
        } catch let error as CLIError {
            #expect(error.exitCode == .noInput)
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    @Test(arguments: [
        ("{\"signedPayload\":\"a.b.c\"}", "a.b.c"),
        ("  x.y.z\n", "x.y.z"),
        ("{\"signedTransaction\":\"t.u.v\"}", "t.u.v"),
        ("{broken", "{broken"),
        ("", nil),
    ])
    func extractsTheJWS(input: String, expected: String?) {
        #expect(VerifyCommand.extractJWS(Array(input.utf8)) == expected)
    }
}
