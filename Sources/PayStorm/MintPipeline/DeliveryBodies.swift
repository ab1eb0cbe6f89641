import AppStoreModel
package import Chaos
import Foundation
package import Minting
import Profile
import Simulation

/// Turns planned deliveries into request bodies: signs the simulation's payloads with the run's
/// `Minter` (forged variants included) and wraps them as the role's template says (contract v1 by default).
///
/// Thread-safe and stateless apart from the minter, so the mint pipeline calls it from every core: templates
/// are rendered here, ahead of the schedule, so sending only copies bytes.
package struct DeliveryBodies: Sendable {
    let minter: Minter
    /// The run's templates and accounts; nil (or a role without a body template) means contract v1's body.
    var endpoints: Endpoints? = nil
    /// Where `{appReceipt}` comes from; nil renders it empty.
    var receipts: DeviceReceipts? = nil

    /// Bodies signed by `minter`, shaped by the templates of `endpoints` when given, with the receipts of
    /// `receipts` in `{appReceipt}`.
    package init(minter: Minter, endpoints: Endpoints? = nil, receipts: DeviceReceipts? = nil) {
        self.minter = minter
        self.endpoints = endpoints
        self.receipts = receipts
    }

    /// The body of a delivery, or nil for a marker (which sends nothing).
    /// - Throws: a minting error (a bug in the plan, such as a forgery that does not apply).
    package func body(for delivery: PlannedDelivery) throws -> [UInt8]? {
        let forgery = delivery.forgery.flatMap { $0 == Faults.bareProductIDForgery ? nil : Forgery(rawValue: $0) }
        switch delivery.action.delivery {
        case .marker:
            return nil
        case .report(let report):
            return try rendered(delivery, role: .deviceReport, signed: "") ?? report.body
        case .device(let device) where delivery.forgery == Faults.bareProductIDForgery:
            // A client's word for it: "I bought this", with no signed transaction at all.
            let claim = DeviceReport(
                device: device.device,
                purchaseResult: "success",
                productId: device.transaction.productId,
                appAccountToken: delivery.action.appAccountToken,
                transactionId: device.transaction.transactionId
            )
            return try rendered(delivery, role: .deviceReport, signed: "") ?? claim.body
        case .device
        where endpoints?.deviceDelivery.map({ $0.body != nil && !$0.placeholders.contains(.signedTransaction) }) == true:
            // A body without the JWS (a pulling flow's ids, a receipt) needs no transaction signed.
            return try rendered(delivery, role: .deviceDelivery, signed: "")
        case .device(let device):
            let jws = try minter.signTransaction(device.transaction.payload, forgery: forgery)
            return try rendered(delivery, role: .deviceDelivery, signed: jws)
                ?? Array("{\"signedTransaction\":\"\(jws)\"}".utf8)
        case .notification(let facts):
            let (payload, transaction, renewal) = (facts.payload, facts.transaction?.payload, facts.renewal)
            guard hasTemplate(for: .webhook) else {
                // Contract v1's body: the JWS is signed straight into it, never made a String.
                return try minter.notificationBody(
                    payload,
                    transaction: transaction,
                    renewal: renewal,
                    forgery: forgery
                )
            }
            let signed = try minter.signNotification(
                payload,
                transaction: transaction,
                renewal: renewal,
                forgery: forgery
            )
            return try rendered(delivery, role: .webhook, signed: signed) ?? Minter.webhookBody(signed)
        }
    }

    /// Whether the role's body comes from a template (else it is contract v1's).
    private func hasTemplate(for role: RequestRole) -> Bool {
        endpoints?.template(for: role)?.body != nil
    }

    /// The role's body template rendered, or nil when the role sends contract v1's body.
    private func rendered(_ delivery: PlannedDelivery, role: RequestRole, signed: String) throws -> [UInt8]? {
        guard let endpoints, let template = endpoints.template(for: role), let body = template.body else { return nil }
        var values = endpoints.values(for: delivery, signed: signed)
        if let receipts, template.placeholders.contains(.appReceipt) {
            values.appReceipt = try receipts.receipt(for: delivery, minter: minter)
        }
        return body.render(values, resultMap: template.purchaseResult)
    }
}
