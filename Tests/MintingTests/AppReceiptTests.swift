import AppStoreModel
import Foundation
import Minting
import Signing
import Testing

/// One PKI for the suite: generating keys and certificates is the slow part.
private let receiptPKI: Result<TestPKI, any Error> = Result { try TestPKI.generate() }

/// A receipt read back: its verified content walked as ASN.1, each attribute's type and value bytes.
private struct ReadReceipt {
    var attributes: [(type: Int64, value: ArraySlice<UInt8>)]

    init(base64: String, root: Certificate) throws {
        let der = try #require(Data(base64Encoded: base64))
        let content = try PKCS7SignedData.verifiedContent(Array(der), trusting: root)
        attributes = try Self.attributes(content[...])
    }

    static func attributes(_ bytes: ArraySlice<UInt8>) throws -> [(type: Int64, value: ArraySlice<UInt8>)] {
        let set = try #require(DER.elements(bytes)?.first)
        #expect(set.tag == DER.Tag.set.rawValue)
        return try #require(set.children).map { member in
            let fields = member.children ?? []
            #expect(fields.count == 3 && fields[1].integer == 1 && fields[2].tag == DER.Tag.octetString.rawValue)
            return (fields.first?.integer ?? -1, fields.last?.content ?? [])
        }
    }

    func values(_ type: Int64) -> [ArraySlice<UInt8>] { attributes.filter { $0.type == type }.map(\.value) }

    func string(_ type: Int64) -> String? { values(type).first.flatMap { DER.elements($0)?.first?.string } }

    /// Each in-app purchase's attributes, as type → decoded value (a string, or an integer's decimal).
    func inApp() throws -> [[Int64: String]] {
        try values(17).map { set in
            var fields: [Int64: String] = [:]
            for (type, value) in try Self.attributes(set) {
                let element = try #require(DER.elements(value)?.first)
                fields[type] = element.string ?? element.integer.map(String.init)
            }
            return fields
        }
    }
}

struct AppReceiptTests {
    let pki: TestPKI

    init() throws {
        pki = try receiptPKI.get()
    }

    private func purchase(_ id: String, _ product: String, type: ProductType) -> JWSTransactionDecodedPayload {
        var transaction = Minter.impliedTransaction(
            by: nil,
            productId: product,
            productType: type,
            signedDate: 1_767_225_600_000
        )
        transaction.transactionId = id
        transaction.originalTransactionId = id
        return transaction
    }

    @Test func listsEveryInAppPurchaseUnderTheTestRoot() throws {
        let app = AppIdentity(bundleId: "com.acme.app", appAppleId: 42, bundleVersion: "3.1", environment: .sandbox)
        let inApp = [
            purchase("2000000000000001", "pro.monthly", type: .autoRenewableSubscription),
            purchase("2000000000000002", "coins.100", type: .consumable),
        ]
        let receipt = AppReceipt(app: app, inApp: inApp, creationDate: 1_767_225_601_999)
        let read = try ReadReceipt(base64: try receipt.base64(signedBy: pki), root: pki.root)
        #expect(read.attributes.map(\.type) == [0, 1, 2, 3, 4, 5, 12, 17, 17, 19])
        #expect(read.string(0) == "ProductionSandbox")
        #expect(read.values(1).first.flatMap { DER.elements($0)?.first?.integer } == 42)
        #expect(read.string(2) == "com.acme.app")
        #expect(read.string(3) == "3.1")
        #expect(read.string(12) == "2026-01-01T00:00:01Z")
        let purchases = try read.inApp()
        #expect(purchases.map { $0[1703] } == ["2000000000000001", "2000000000000002"])
        #expect(purchases.map { $0[1705] } == ["2000000000000001", "2000000000000002"])
        #expect(purchases.map { $0[1702] } == ["pro.monthly", "coins.100"])
        #expect(purchases[0][1701] == "1")
        #expect(purchases[0][1704] == AppReceipt.date(inApp[0].purchaseDate!))
        #expect(purchases[0][1708] == AppReceipt.date(inApp[0].expiresDate!))
        #expect(purchases[1][1708] == "")
        #expect(purchases[0][1711] == inApp[0].webOrderLineItemId)
        #expect(purchases[0][1712] == "")
    }

    @Test func bindsTheHashToTheDeviceTheOpaqueValueAndTheBundle() throws {
        let device = [UInt8](repeating: 0xAB, count: 16)
        let receipt = AppReceipt(
            app: AppIdentity(bundleId: "com.acme.app"),
            inApp: [],
            creationDate: 0,
            opaqueValue: [1, 2, 3],
            deviceIdentifier: device
        )
        let read = try ReadReceipt(base64: try receipt.base64(signedBy: pki), root: pki.root)
        let bundleValue = try #require(read.values(2).first)
        #expect(read.values(4).first.map(Array.init) == [1, 2, 3])
        #expect(read.values(5).first.map(Array.init) == sha1(device + [1, 2, 3] + Array(bundleValue)))
        #expect(read.values(17).isEmpty)
    }

    @Test(arguments: [
        (Int64(0), "1970-01-01T00:00:00Z"),
        (1_697_679_936_999, "2023-10-19T01:45:36Z"),
        (-1, "1969-12-31T23:59:59Z"),
    ])
    func writesDatesAsAppleDoes(milliseconds: Int64, text: String) {
        #expect(AppReceipt.date(milliseconds) == text)
    }

    @Test(arguments: [
        (Environment.production, "Production"), (.sandbox, "ProductionSandbox"), (.xcode, "Xcode"),
    ])
    func namesTheReceiptTypeOfEachEnvironment(environment: Environment, name: String) {
        #expect(AppReceipt.receiptType(environment) == name)
    }

    @Test func mintsWithTheMintersAppAndPKI() throws {
        let minter = Minter(pki: pki, app: AppIdentity(bundleId: "com.acme.other"))
        let base64 = try minter.appReceipt([purchase("7", "a", type: .nonConsumable)], creationDate: 0)
        let read = try ReadReceipt(base64: base64, root: pki.root)
        #expect(read.string(2) == "com.acme.other")
        #expect(try read.inApp().map { $0[1703] } == ["7"])
    }
}
