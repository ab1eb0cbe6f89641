import AppStoreModel
import Minting
import Signing
import Testing

@testable import PayStorm
@testable import TargetCheck

/// `paystorm target check` with a device template naming `{appReceipt}`: each device request carries the
/// account's receipt listing its purchase, as a run's does.
struct TargetCheckReceiptTests {
    @Test func theChecksDeviceRequestsCarryTheAccountsReceipt() throws {
        let (bodies, root) = try DeviceReceiptTests.receiving { work in
            var options = RunOptions(profilePath: work + "/profile.json5")
            options.pkiDirectory = work + "/pki"
            _ = try TargetCheck.execute(options)
        }
        try #require(!bodies.isEmpty, "no device request reached the server")
        for body in bodies {
            let tx = try #require(body["tx"])
            let receipt = try AppReceipt.read(base64: try #require(body["receipt"]), trusting: root)
            #expect(receipt.inApp.compactMap(\.transactionId).contains(tx), "the receipt of \(tx)")
            #expect(receipt.app.bundleId == "com.example.receipts")
        }
        // One device purchase of each product type; the check's forgery is a notification.
        #expect(bodies.count == 2)
    }
}
