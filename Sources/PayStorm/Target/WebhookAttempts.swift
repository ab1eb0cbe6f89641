import AppStoreModel
import AppStoreServerAPI
import Chaos
import Load
import Simulation

/// Records every attempt of the run's genuine webhook deliveries (first attempts, the App Store's retries,
/// duplicates) into the App Store Server API's store with its real outcome, so the notification history's
/// `sendAttempts` are the run's and `onlyFailures` lists only what the target did not acknowledge.
///
/// Called on the engine's thread for each webhook result; the store takes one short lock.
struct WebhookAttempts: Sendable {
    let store: APIStore
    /// The run's t = 0, in UNIX milliseconds (the world's clock runs at the wall clock's pace).
    let startMillis: Int64

    /// Records one delivery's attempt; deliveries that are not genuine notifications (devices, forgeries,
    /// which Apple never sent) are ignored.
    func record(_ delivery: PlannedDelivery, result: LoadResult, outcome: DeliveryOutcome) {
        // When it went out on a connection (the intended time for one that never did).
        let at = result.error?.neverSent == true ? result.intended : result.wireStart
        record(delivery, at: at.seconds, result: SendAttemptResult(result, outcome: outcome))
    }

    /// Records an attempt that ended as `result` at `t` seconds into the run (one the run failed without sending,
    /// inside a declared outage).
    func record(_ delivery: PlannedDelivery, at t: Double, result: SendAttemptResult) {
        guard !delivery.isForged, case .notification(let notification) = delivery.action.delivery else { return }
        store.recordSendAttempt(
            notificationUUID: notification.notificationUUID,
            at: startMillis + Int64((t * 1000).rounded()),
            result: result
        )
    }
}

extension SendAttemptResult {
    /// Apple's name for how one attempt ended, from its load result (nil when the engine did not send it) and
    /// what the webhook role made of it. A send the harness missed never reached the target: to the App Store it
    /// is a failed attempt like any other (`OTHER`).
    init(_ result: LoadResult?, outcome: DeliveryOutcome) {
        switch outcome {
        case .acknowledged: self = .success
        case .rejected, .deferred: self = .unsuccessfulHTTPResponseCode
        case .notSent(_, let harnessLimited): self = harnessLimited ? .other : .socketIssue
        case .indeterminate:
            switch result?.error {
            // A copy sent again after its connection closed unanswered, and answered outside 2xx.
            case nil: self = (result?.status ?? 0) != 0 ? .unsuccessfulHTTPResponseCode : .noResponse
            case .timeout?: self = .timedOut
            case .reset?: self = .prematureClose
            case .hungUp?: self = .noResponse
            case .tls?: self = .tlsIssue
            default: self = .other
            }
        }
    }
}
