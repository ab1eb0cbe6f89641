import Foundation
import Minting
import RunControl
import Signing
import Testing

@testable import PayStormCLI

struct MintReceiptTests {
    let pki: String

    init() throws {
        pki = try pkiDirectory.get()
    }

    private func mint(_ arguments: [String]) throws -> String {
        try MintCommand.output(Arguments(["receipt", "--pki", pki] + arguments))
    }

    /// The verified receipt's attributes (type, DER value), and the transaction IDs of its in-app purchases.
    private func read(_ base64: String) throws -> (attributes: [(Int64, [DER.Element])], transactionIds: [String]) {
        let der = try #require(Data(base64Encoded: base64))
        let content = try PKCS7SignedData.verifiedContent(Array(der), trusting: try TestPKI.load(from: pki).root)
        func attributes(_ set: DER.Element) throws -> [(Int64, [DER.Element])] {
            try #require(set.children).map { member in
                let fields = try #require(member.children)
                return (try #require(fields[0].integer), fields[2].children ?? [])
            }
        }
        let top = try attributes(try #require(DER.elements(content)?.first))
        let ids = try top.filter { $0.0 == 17 }.flatMap { entry in
            try attributes(entry.1[0]).filter { $0.0 == 1703 }.compactMap { $0.1.first?.string }
        }
        return (top, ids)
    }

    @Test func printsAReceiptListingEachPurchase() throws {
        let base64 = try mint([
            "--purchase", "pro.monthly:2000000000000011", "--purchase", "coins.100", "--product-type", "consumable",
            "--bundle-id", "com.acme.app", "--environment", "Production", "--created", "1767225600000",
        ])
        let read = try read(base64)
        #expect(read.transactionIds.count == 2)
        #expect(read.transactionIds.first == "2000000000000011")
        #expect(read.attributes.first { $0.0 == 2 }?.1.first?.string == "com.acme.app")
        #expect(read.attributes.first { $0.0 == 0 }?.1.first?.string == "Production")
        #expect(read.attributes.first { $0.0 == 12 }?.1.first?.string == "2026-01-01T00:00:00Z")
    }

    @Test func readsTransactionsFromAJSONFile() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("receipt-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: file) }
        let json = """
            [{"transactionId": "31", "originalTransactionId": "30", "productId": "gold", "purchaseDate": 1767225600000,
              "type": "Non-Consumable", "quantity": 1}]
            """
        try Data(json.utf8).write(to: file)
        let read = try read(try mint(["--transactions", file.path, "--purchase", "silver:32"]))
        #expect(read.transactionIds == ["32", "31"])
    }

    @Test(arguments: [
        (["--purchase", ":1"], ExitCode.usage),
        (["--purchase", "gold:12x"], .usage),
        (["--created", "soon"], .usage),
        (["--environment", "Staging"], .usage),
        (["--transactions", "/nonexistent/receipt.json"], .noInput),
    ])
    func refusesBadOptionsWithTheirExitCode(arguments: [String], code: ExitCode) {
        #expect(PayStormCLI.run(["mint", "receipt", "--pki", pki] + arguments) == code)
    }

    @Test func refusesAFileThatIsNotTransactions() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("receipt-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: file) }
        try Data(#"{"transactionId": "1"}"#.utf8).write(to: file)
        #expect(PayStormCLI.run(["mint", "receipt", "--pki", pki, "--transactions", file.path]) == .badInput)
    }

    @Test func forgesTheReceiptAForgedDeviceRequestCarries() throws {
        let root = try TestPKI.load(from: pki).root
        let forged = try mint(["--purchase", "gold:2000000000000021", "--forge", "missing-leaf-oid"])
        let error = #expect(throws: AppReceiptError.self) { try AppReceipt.read(base64: forged, trusting: root) }
        #expect(error?.check == .signerOID)
        let otherBundle = try AppReceipt.read(base64: try mint(["--forge", "wrong-bundle"]), trusting: root)
        #expect(otherBundle.app.bundleId == "com.example.paystorm.forged")
        #expect(PayStormCLI.run(["mint", "receipt", "--pki", pki, "--forge", "bogus"]) == .usage)
    }
}
