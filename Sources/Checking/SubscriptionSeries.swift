import Profile
import Simulation

/// What probes showed of a subscription group's expiry, and what the App Store said of it since.
///
/// A target shows the expiry of the data it last took, and deliveries reach it late: a probe can show an
/// upgrade's shorter period while the books already hold a later extension of it, still queued. Moving the
/// expiry back is stale only when no data since the longest expiry shown was as short as what it shows now.
struct SeenExpiry: Sendable {
    /// The longest expiry a probe showed (the baseline moves down when a probe shows a shortening data
    /// explains).
    var longest: Int64
    /// The shortest expiry any truth of the group gave since `longest` was shown (the truth in force then
    /// included).
    var shortestTruthSince: Int64
}

/// A subscription series' latest truth, keyed by its original transaction.
struct SubscriptionSeries: KeyedByID, Sendable {
    let key: RecordKey
    var group: String
    var product: String
    /// The series' current transaction.
    var transaction: RecordKey
    var status: SubscriptionStatus
    var expires: Int64
    var grace: Int64?
    var truthDate: Int64
    /// When the target last acknowledged data of the series, in milliseconds since the start of the run (0:
    /// never): a probe that asked after it reads the series as the books hold what it acknowledged.
    var lastAcknowledged: Int64 = 0

    var transactionId: String { transaction.id }

    /// When the series' entitlement ends: the grace period's end while in it, else the expiry.
    var end: Int64 { status == .gracePeriod ? (grace ?? expires) : expires }

    /// Whether the series is owed an entitlement at `now`.
    func owed(at now: Int64) -> Bool { (status == .active || status == .gracePeriod) && now < end }

    /// Whether `now` is within `boundary` of an expiry or of the latest change: a probe there may read either way.
    func near(_ now: Int64, boundary: Int64) -> Bool {
        abs(now - expires) < boundary || abs(now - end) < boundary || now - truthDate < boundary
    }

    /// Whether a target may rightly entitle the series at `now`: owed, near a boundary, or in billing retry
    /// (which the profile may want entitled). A revoked series only just after its refund: its expiry no longer
    /// matters.
    func mayBeOwed(at now: Int64, boundary: Int64) -> Bool {
        if status == .revoked { return now - truthDate < boundary }
        return owed(at: now) || near(now, boundary: boundary) || status == .billingRetry
    }
}
