internal import AppStoreModel
import AppStoreServerAPI
import Chaos
import Dispatch
import Foundation
package import Load
import Minting
import Profile
import Simulation
import Synchronization

/// Sends the notifications the App Store Server API causes (`TEST`, `RENEWAL_EXTENDED`) to the backend's webhook,
/// shaped by the run's webhook template, one at a time on a queue of its own with its own load engine.
///
/// A dedicated sender rather than the run's scheduler: the scheduler is confined to the engine's thread and these
/// notifications come from the API server's threads at times no plan knows; they are few. Each attempt is
/// recorded in the API's store (the notification history's `sendAttempts`) and in the run's history.
final class APINotificationSender: Sendable {
    private let endpoints: Endpoints
    private let engine: LoadEngine
    private let store: APIStore
    private let lines: APILines
    private let queue = DispatchQueue(label: "paystorm.api-notifications")
    private let group = DispatchGroup()
    private let count = Atomic<Int>(0)

    init(endpoints: Endpoints, engine: LoadEngine, store: APIStore, lines: APILines) {
        self.endpoints = endpoints
        self.engine = engine
        self.store = store
        self.lines = lines
    }

    /// Notifications sent so far (whatever the webhook answered).
    var sent: Int { count.load(ordering: .relaxed) }

    /// Queues a notification for the webhook.
    func send(_ notification: APINotification) {
        group.enter()
        queue.async { [self] in
            defer { group.leave() }
            deliver(notification)
        }
    }

    /// Waits for the queued notifications (each is bounded by the run's request timeout).
    func finish() { group.wait() }

    /// The webhook request carrying `signedPayload`, as the webhook template of `endpoints` shapes it.
    static func request(signedPayload: String, endpoints: Endpoints) -> LoadRequest {
        let template = endpoints.webhookRequest
        let values = TemplateValues(signed: signedPayload, appAccountToken: "")
        var headers = endpoints.deliveryHeaders
        for header in template.headers {
            headers.removeAll { $0.name.caseInsensitiveCompare(header.name) == .orderedSame }
            headers.append((header.name, header.value.render(values, encoding: .header)))
        }
        return LoadRequest(
            id: 0,
            kind: "api-notification",
            method: template.method,
            url: template.url.render(values, encoding: .url),
            headers: headers,
            body: template.body?.render(values) ?? Minter.webhookBody(signedPayload)
        )
    }

    private func deliver(_ notification: APINotification) {
        let request = Self.request(signedPayload: notification.signedPayload, endpoints: endpoints)
        let result = engine.sendOne(request)
        let outcome =
            result.map { Endpoints.outcome(of: $0, classification: endpoints.webhookRequest.responses) }
            ?? .notSent(reason: "the load engine did not send it")
        let attempt = SendAttemptResult(result, outcome: outcome)
        let now = AppStoreServerAPI.wallClock()
        store.recordSendAttempt(notificationUUID: notification.facts.notificationUUID, at: now, result: attempt)
        lines.append(
            APILines.Line(
                event: "notification",
                at: now,
                fields: [
                    ("notificationType", notification.facts.notificationType.rawValue),
                    ("notificationUUID", notification.facts.notificationUUID), ("detail", attempt.rawValue),
                ],
                status: result?.status
            )
        )
        count.add(1, ordering: .relaxed)
    }
}

extension LoadEngine {
    /// Sends one request and waits for its result (a check's or a notification's single request, not a run's
    /// traffic); nil when the engine did not send it.
    package func sendOne(_ request: LoadRequest) -> LoadResult? {
        var result: LoadResult?
        _ = run(.closed(users: 1, thinkTime: .zero, duration: .seconds(600))) { index, _ in
            index == 0 ? request : nil
        } sink: {
            result = $0
        }
        return result
    }
}
