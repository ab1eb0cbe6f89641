import AppStoreModel
import Foundation

extension DeviceReport {
    private struct Body: Encodable {
        var purchaseResult: String
        var productId: String
        var appAccountToken: String
        var transactionId: String?
    }

    /// The device endpoint body: `{"purchaseResult", "productId", "appAccountToken"}`, and
    /// `"transactionId"` when the report claims one.
    public var body: [UInt8] {
        let body = Body(
            purchaseResult: purchaseResult,
            productId: productId,
            appAccountToken: appAccountToken,
            transactionId: transactionId
        )
        return Array((try? AppStoreJSON.encoder().encode(body)) ?? Data())
    }
}
