import AppStoreModel
import Foundation
import HTTPServer
import Load
import Minting
import Signing
import Synchronization
import Testing

@testable import PayStorm

/// `{appReceipt}`: each device request of a run carries the account's app receipt as the device holds it at that
/// request, and a forged request a forged receipt (issue 45, item 3).
struct DeviceReceiptTests {
    final class Received: Sendable {
        let bodies = Mutex<[[String: String]]>([])
    }

    /// A profile whose device deliveries post `{appReceipt}` to `address`, with non-consumables, consumables and
    /// forged device requests.
    static func profile(address: String) -> String {
        """
        {
          name: "receipts", seed: 11,
          target: {
            webhook: { url: "http://\(address)/hook", body: { p: "{signedPayload}" } },
            deviceDelivery: {
              url: "http://\(address)/receipt",
              body: { receipt: "{appReceipt}", account: "{appAccountToken}", tx: "{transactionId}" },
            },
            bundleId: "com.example.receipts", requestTimeoutSeconds: 2,
          },
          catalog: { products: [{ id: "n", type: "nonConsumable", priceMilli: 990 },
                                { id: "c", type: "consumable", priceMilli: 990 }] },
          population: { accounts: 2 },
          actionMix: { nonConsumable: 1, consumable: 1 },
          schedule: [{ kind: "constant", rate: 10, seconds: 2 }],
          faults: { forgery: { probability: 0.5, kinds: ["wrong-bundle", "bad-signature"] } },
          settleSeconds: 0,
        }
        """
    }

    /// Starts a server that keeps every device body, writes a PKI (`work/pki`) and the profile
    /// (`work/profile.json5`) aimed at it into a fresh folder, calls `drive` with the folder, and returns the
    /// bodies with the PKI's root.
    static func receiving(
        _ drive: (_ work: String) throws -> Void
    ) throws -> (bodies: [[String: String]], root: Certificate) {
        let received = Received()
        let server = try HTTPServer { request in
            if request.path == "/receipt",
                let body = try? JSONSerialization.jsonObject(with: Data(request.body)) as? [String: String]
            {
                received.bodies.withLock { $0.append(body) }
            }
            return HTTPResponse(status: 200)
        }
        defer { server.shutdown() }
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("receipts-\(UUID())").path
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: work) }
        let pki = try TestPKI.generate()
        try pki.write(to: work + "/pki")
        try Data(Self.profile(address: server.address).utf8).write(to: URL(fileURLWithPath: work + "/profile.json5"))
        try drive(work)
        return (received.bodies.withLock { $0 }, pki.root)
    }

    /// Runs the profile against a server that keeps every device body, and returns them with the run's root.
    static func run() throws -> (bodies: [[String: String]], root: Certificate) {
        try receiving { work in
            var options = RunOptions(profilePath: work + "/profile.json5")
            options.reportsDirectory = work + "/reports"
            options.pkiDirectory = work + "/pki"
            options.status = .quiet
            options.history = false
            _ = try PayStormRun(options).execute()
        }
    }

    @Test func aRunsDeviceRequestsCarryTheAccountsReceiptSoFarAndForgedOnesAForgedReceipt() throws {
        let (bodies, root) = try Self.run()
        try #require(!bodies.isEmpty, "no device request reached the server")
        var genuine: [String: [ReadAppReceipt]] = [:]
        var sentNonConsumables: [String: Set<String>] = [:]
        var forged = 0
        for body in bodies {
            let (tx, account) = (try #require(body["tx"]), try #require(body["account"]))
            let receipt: ReadAppReceipt
            do {
                receipt = try AppReceipt.read(base64: try #require(body["receipt"]), trusting: root)
            } catch let error as AppReceiptError {
                // `bad-signature`: a receipt under another root.
                #expect(error.kind == .unauthenticated)
                forged += 1
                continue
            }
            let ids = receipt.inApp.compactMap(\.transactionId)
            #expect(ids.contains(tx), "the receipt of \(tx) lists \(ids)")
            // A finished consumable leaves the receipt: only the request's own is listed.
            #expect(receipt.inApp.filter { $0.productId == "c" }.allSatisfy { $0.transactionId == tx })
            if receipt.app.bundleId == "com.example.receipts.forged" {
                forged += 1
                continue
            }
            #expect(receipt.app.bundleId == "com.example.receipts" && receipt.app.environment == .sandbox)
            genuine[account, default: []].append(receipt)
            if receipt.inApp.first(where: { $0.transactionId == tx })?.productId == "n" {
                sentNonConsumables[account, default: []].insert(tx)
            }
        }
        #expect(forged > 0, "no forged device request")
        #expect(!genuine.isEmpty)
        // The fullest receipt of an account lists every non-consumable it bought in the run, and no other's.
        for (account, receipts) in genuine {
            let fullest = receipts.map { Set($0.inApp.filter { $0.productId == "n" }.compactMap(\.transactionId)) }
                .max { $0.count < $1.count }
            #expect(fullest == sentNonConsumables[account, default: []], "account \(account)")
        }
    }
}
