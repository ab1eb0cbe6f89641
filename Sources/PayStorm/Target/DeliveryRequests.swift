package import Chaos
import Foundation
package import Load
package import Profile
import Simulation

/// Which template shapes a delivery, what its placeholders hold, and what its answer means.
extension Endpoints {
    /// The role a delivery is sent as; nil for a marker. A bare product-ID claim ("I bought this", no signed
    /// transaction) is what an app's purchase report says, so it goes out as a device report.
    static func role(of delivery: PlannedDelivery) -> RequestRole? {
        switch delivery.action.delivery {
        case .notification: .webhook
        case .device where delivery.forgery == Faults.bareProductIDForgery: .deviceReport
        case .device: .deviceDelivery
        case .report: .deviceReport
        case .marker: nil
        }
    }

    /// The template of a role, nil when the target has no endpoint for it.
    func template(for role: RequestRole) -> RequestTemplate? {
        switch role {
        case .webhook: webhookRequest
        case .deviceDelivery: deviceDelivery
        case .deviceReport: deviceReport
        }
    }

    /// What a delivery puts into its template; `signed` is the JWS the body carries (bodies only).
    func values(for delivery: PlannedDelivery, signed: String = "") -> TemplateValues {
        let action = delivery.action
        var values = accounts.values(for: action.appAccountToken)
        values.signed = signed
        if let transaction = action.transaction {
            values.productId = transaction.productId
            values.transactionId = transaction.transactionId
            values.originalTransactionId = transaction.originalTransactionId
        }
        switch action.delivery {
        case .report(let report):
            values.productId = report.productId
            values.transactionId = report.transactionId ?? ""
            values.purchaseResult = report.purchaseResult
        case .device where delivery.forgery == Faults.bareProductIDForgery:
            values.purchaseResult = "success"
        default:
            break
        }
        return values
    }

    /// The method, URL and headers of a delivery's request: `Content-Type: application/json`, then
    /// `target.headers`, then the role's own headers, a later one replacing an earlier one of the same name.
    func head(
        for delivery: PlannedDelivery,
        template: RequestTemplate
    ) -> (method: String, url: String, headers: [(name: String, value: String)]) {
        let headers = deliveryHeaders
        let needsValues = !template.url.placeholders.isEmpty || !template.headers.isEmpty
        let values = needsValues ? self.values(for: delivery) : nil
        let url = values.map { template.url.render($0, encoding: .url) } ?? template.url.text
        guard let values else { return (template.method, url, headers) }
        return (template.method, url, Self.merged(headers, template.headers, values: values))
    }

    /// The headers of an account's probe request: `target.headers`, then the probe's own rendered for the account.
    func probeRequestHeaders(for account: String) -> [(name: String, value: String)] {
        guard !probeHeaders.isEmpty else { return headers }
        return Self.merged(headers, probeHeaders, values: accounts.values(for: account))
    }

    /// `base` with each of `templates` rendered with `values`, a later header replacing an earlier one of the same
    /// name (in any case).
    static func merged(
        _ base: [(name: String, value: String)],
        _ templates: [RequestTemplate.Header],
        values: TemplateValues
    ) -> [(name: String, value: String)] {
        var headers = base
        for header in templates {
            headers.removeAll { $0.name.caseInsensitiveCompare(header.name) == .orderedSame }
            headers.append((header.name, header.value.render(values, encoding: .header)))
        }
        return headers
    }

    /// Jepsen's view of one result, through the role's classification: granted and already-had are
    /// acknowledged, rejected and retry-later are rejected (and retried like any unacknowledged delivery),
    /// no answer is indeterminate (`:info`), and a request that never left is not sent. A request the transport
    /// resent (``LoadResult/resent``) is acknowledged by a granted answer; any other answer leaves it indeterminate.
    package static func outcome(of result: LoadResult, classification: ResponseClassification) -> DeliveryOutcome {
        guard let error = result.error else {
            let meaning = classification.meaning(status: result.status, body: result.body)
            // A copy the transport resent answers for itself only: the first copy went unanswered, and the target
            // may have read and committed it. So "already had it" may name that first copy (together they may
            // have granted once), and a refusal does not say the purchase was refused.
            if meaning.isAcknowledged {
                return .acknowledged(status: result.status, alreadyHad: meaning == .alreadyHad && !result.resent)
            }
            guard !result.resent else {
                return .indeterminate(
                    reason: "the first copy's connection closed unanswered, and the copy sent again was answered "
                        + "\(result.status)"
                )
            }
            return meaning == .retryLater ? .deferred(status: result.status) : .rejected(status: result.status)
        }
        guard error.neverSent else { return .indeterminate(reason: "\(error): \(result.detail)") }
        return .notSent(reason: "\(error): \(result.detail)", harnessLimited: error == .missed)
    }
}
