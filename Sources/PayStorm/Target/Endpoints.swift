package import Chaos
import Checking
import Foundation
package import Load
package import Profile
import Simulation

/// Where the run sends, how each role's requests are shaped and answers read, and how it reads an account.
package struct Endpoints: Sendable {
    /// Where the target is checked for reachability: the webhook URL, or its origin when placeholders are in it.
    var webhook: String
    /// The webhook's request template.
    var webhookRequest: RequestTemplate
    /// The device delivery's template; nil when device deliveries are not sent.
    var deviceDelivery: RequestTemplate?
    /// The device report's template; nil when reports are not sent.
    var deviceReport: RequestTemplate?
    /// The probe URL with `{appAccountToken}` (or `{account.id}`...) in it, for HTTP probes.
    package var probe: String?
    /// Extra headers on every request (authentication for a staging backend).
    var headers: [(name: String, value: String)] {
        didSet { deliveryHeaders = Self.deliveryHeaders(headers) }
    }
    /// `Content-Type: application/json`, then `headers`: where every delivery's request headers begin, made once
    /// rather than for each request.
    private(set) var deliveryHeaders: [(name: String, value: String)]
    /// Whether the probe answers in the contract's shape (true) or through a JSON-pointer mapping.
    var probeMapping: PointerMapping?
    /// Each account's identity in the backend (provisioned before traffic; empty otherwise).
    package var accounts = AccountDirectory()
    /// The HTTP probe's own headers (`target.probe.headers`), rendered for each account over ``headers``.
    var probeHeaders: [RequestTemplate.Header] = []
    private let probeTemplate: TemplateString?

    init(
        webhook: RequestTemplate,
        deviceDelivery: RequestTemplate?,
        deviceReport: RequestTemplate?,
        probe: String?,
        headers: [(name: String, value: String)],
        probeMapping: PointerMapping?
    ) {
        self.webhook = webhook.url.placeholders.isEmpty ? webhook.url.text : webhook.origin ?? webhook.url.text
        webhookRequest = webhook
        self.deviceDelivery = deviceDelivery
        self.deviceReport = deviceReport
        self.probe = probe
        self.headers = headers
        deliveryHeaders = Self.deliveryHeaders(headers)
        self.probeMapping = probeMapping
        probeTemplate = probe.flatMap { try? TemplateString($0) }
    }

    static func deliveryHeaders(_ headers: [(name: String, value: String)]) -> [(name: String, value: String)] {
        [(name: "Content-Type", value: "application/json")] + headers
    }

    package func probeURL(for account: String) -> String? {
        if let probeTemplate { return accounts.render(probeTemplate, for: account, encoding: .url) }
        return probe?.replacingOccurrences(of: "{appAccountToken}", with: account)
    }

    /// The HTTP request that carries a delivery to the target, shaped by its role's template, with its kind
    /// (`webhook` or `device`) and how the role reads answers; nil when the target has no endpoint for that
    /// role (or for a marker, which sends nothing). The run and `paystorm target check` both build their
    /// requests here.
    package func request(
        for delivery: PlannedDelivery,
        body: [UInt8],
        id: Int
    ) -> (request: LoadRequest, classification: ResponseClassification)? {
        // The role's template is read in place: `template(for:)` would copy it for every request.
        switch Self.role(of: delivery) {
        case .webhook?:
            return request(for: delivery, body: body, id: id, kind: "webhook", template: webhookRequest)
        case .deviceDelivery?:
            guard let template = deviceDelivery else { return nil }
            return request(for: delivery, body: body, id: id, kind: "device", template: template)
        case .deviceReport?:
            guard let template = deviceReport else { return nil }
            return request(for: delivery, body: body, id: id, kind: "device", template: template)
        case nil:
            return nil
        }
    }

    private func request(
        for delivery: PlannedDelivery,
        body: [UInt8],
        id: Int,
        kind: String,
        template: RequestTemplate
    ) -> (request: LoadRequest, classification: ResponseClassification) {
        let head = head(for: delivery, template: template)
        let request = LoadRequest(
            id: id,
            kind: kind,
            method: head.method,
            url: head.url,
            headers: head.headers,
            body: body
        )
        return (request, template.responses)
    }
}

/// Turns a probe answer into an account state (the contract's JSON, or a mapping of pointers).
func decodeProbe(_ body: [UInt8], mapping: PointerMapping?) throws -> AccountState {
    if let mapping { return try PointerProbe.map(body, with: mapping) }
    return try AccountState.decode(contractJSON: body)
}
