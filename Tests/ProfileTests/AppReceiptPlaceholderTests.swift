import Foundation
import Testing

@testable import Profile

/// `{appReceipt}` in the device roles' bodies, and nowhere else (issue 45, item 3).
struct AppReceiptPlaceholderTests {
    static let target = """
        { webhookURL: "http://127.0.0.1:8000/apple",
          deviceDelivery: { url: "http://127.0.0.1:8000/receipt",
                            body: { "receipt-data": "{appReceipt}", user: "{account.id}", tx: "{transactionId}" } },
          deviceReport: { url: "http://127.0.0.1:8000/report", body: { r: "{appReceipt}", result: "{purchaseResult}" } } }
        """

    @Test func appReceiptRendersIntoTheDeviceBodiesAsAJSONString() throws {
        let target = try RequestTemplateTests.profile(target: Self.target).target
        let device = try #require(target.deviceDelivery)
        let values = TemplateValues(appAccountToken: "A", transactionId: "7", appReceipt: "MIIG+/x=")
        let body = String(decoding: try #require(device.body).render(values), as: UTF8.self)
        #expect(body == #"{"receipt-data":"MIIG+/x=","tx":"7","user":"A"}"#)
        #expect(device.placeholders.contains(.appReceipt))
        // A receipt is checked with verifyReceipt: the request does not pull by its transaction id.
        #expect(!device.pulls)
        let report = try #require(target.deviceReport?.body).render(values)
        #expect(String(decoding: report, as: UTF8.self) == #"{"r":"MIIG+/x=","result":""}"#)
    }

    @Test(arguments: [
        (
            #"{ webhook: { url: "http://127.0.0.1:1/n", body: { r: "{appReceipt}" } } }"#, "target.webhook.body.r",
            "only in the device roles"
        ),
        (
            #"{ webhookURL: "http://127.0.0.1:1/n", deviceDelivery: { url: "http://127.0.0.1:1/d?r={appReceipt}" } }"#,
            "target.deviceDelivery.url", "the app receipt only in the body"
        ),
        (
            #"{ webhookURL: "http://127.0.0.1:1/n", deviceReport: { url: "http://127.0.0.1:1/d", headers: { R: "{appReceipt}" } } }"#,
            "target.deviceReport.headers.R", "the app receipt only in the body"
        ),
    ])
    func appReceiptOutsideADeviceBodyIsRefusedNamingItsPath(target: String, path: String, expected: String) throws {
        let error = try #require(RequestTemplateTests.error(target: target), "accepted \(target)")
        #expect(error.path == path, "\(error)")
        #expect(error.expected.contains(expected), "\(error)")
    }
}
