import AppStoreModel
import Chaos
import Simulation

/// The App Store's webhook attempts that fell inside the App Store time a planned restart declares
/// (`faults.targetRestart.outageHours`): each fails as into a target that is down, without being sent, even once
/// the target is back in real time; its retries follow Apple's schedule. A notification whose last attempt failed
/// so reaches the target only through the App Store Server API's notification history (its catch-up path).
struct DeclaredOutages {
    /// Why such an attempt was not sent, for the oracle and the history.
    static let reason = "refused: the target was down (inside the App Store time a planned restart declares)"
    /// How the notification history records such an attempt: the connection could not be made.
    static let attemptResult = SendAttemptResult.socketIssue
    /// The fault name the report counts them under.
    static let fault = "restartOutage"

    /// Attempts failed so.
    private(set) var attempts = 0
    /// Notifications whose last attempt failed so.
    private(set) var lost = 0

    /// Whether `delivery`, due `now`, is an App Store webhook attempt the declared outages fail: a genuine
    /// notification (forgeries and devices are not the App Store's).
    static func fails(_ delivery: PlannedDelivery, at now: Double, policy: ChaosPolicy) -> Bool {
        guard !policy.declaredOutages.isEmpty, !delivery.isForged, case .notification = delivery.action.delivery
        else { return false }
        return policy.inDeclaredOutage(now)
    }

    /// Counts one failed attempt; `retried`: another attempt of its chain follows.
    mutating func count(retried: Bool) {
        attempts += 1
        if !retried { lost += 1 }
    }

    /// One line for the report's notes, or nil when no attempt fell inside a declared outage.
    var note: String? {
        guard attempts > 0 else { return nil }
        return "\(attempts) App Store webhook attempt\(attempts == 1 ? "" : "s") fell inside the App Store time "
            + "planned restarts declare (targetRestart.outageHours) and failed as into a target that was down; "
            + "\(lost) notification\(lost == 1 ? "" : "s") had \(lost == 1 ? "its" : "their") last attempt fail so: "
            + "the webhook never delivered \(lost == 1 ? "it" : "them"), only the App Store Server API's notification "
            + "history has \(lost == 1 ? "it" : "them") (onlyFailures)"
    }
}
