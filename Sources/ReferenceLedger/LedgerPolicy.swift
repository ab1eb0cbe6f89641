internal import AppStoreModel
internal import Foundation

/// The ledger's decisions, built once from its flaws. The storage code asks this value at each decision point
/// (is a replay processed, which transaction a refund revokes, which view wins, what key a grant is deduped by)
/// and never looks at the flaws itself, so the correct path reads as the rules it keeps; each flaw is one
/// deviation here, beside the rule it breaks.
struct LedgerPolicy: Sendable, Equatable {
    /// What makes a grant happen once.
    enum Dedupe: Sendable {
        /// One grant per transaction, whichever path delivered it (correct).
        case perTransaction
        /// One grant per transaction and delivery path (`dual-path-double-grant`).
        case perPath
        /// Every delivery grants again (`double-grant`).
        case none
    }

    /// Which of two signed views of the same thing is kept.
    enum Ordering: Sendable {
        /// The newer `signedDate` wins; refunds and reversals are ordered on their own (correct).
        case newestSigned
        /// Whatever arrives last wins (`stale-overwrite`).
        case lastWrite
    }

    /// What a redelivered purchase does to its refunded transaction.
    enum Replay: Sendable {
        /// Nothing: a refund is sticky (correct).
        case keepsRefund
        /// Un-revokes it and grants again (`resurrect-after-refund`).
        case resurrects
    }

    /// What is checked before a payload is believed.
    enum Verification: Sendable {
        /// Signature, chain, app identity and environment (correct).
        case full
        /// Signature and chain, but any bundle ID and environment (`ignore-bundle-environment`).
        case identityBlind
        /// Nothing: anything shaped like a JWS is believed (`trust-unverified`).
        case none
    }

    /// Which stored transaction a refund or revocation applies to.
    enum RefundTarget: Sendable {
        /// The transaction it names (correct).
        case signed
        /// The account's latest transaction of the same product (`refund-by-product`).
        case latestOfProduct
    }

    var verification = Verification.full
    /// True with `ack-before-commit`: deliveries are answered before their commit is durable.
    var acknowledgesBeforeCommit = false
    var dedupe = Dedupe.perTransaction
    var ordering = Ordering.newestSigned
    var replay = Replay.keepsRefund
    var refundTarget = RefundTarget.signed
    /// False with `ignore-refund`: refunds and revocations change nothing.
    var honorsRefunds = true
    /// False with `ignore-family-revoke`: Family Sharing revocations change nothing.
    var honorsFamilyRevokes = true
    /// True with `double-refund`: every delivery that carries a refund books one, a duplicate or a retry too.
    var booksEveryRefundDelivery = false
    /// Purchase results whose device report grants (`unlock-on-pending`: pending; `trust-client-claims`:
    /// success). The correct ledger grants on none.
    var grantingReports: Set<String> = []

    /// The correct ledger's policy.
    static let correct = LedgerPolicy()

    /// The policy with each flaw's deviation in place of the rule it breaks.
    init(flaws: Set<LedgerFlaw> = []) {
        if flaws.contains(.ignoreBundleEnvironment) { verification = .identityBlind }
        if flaws.contains(.trustUnverified) { verification = .none }
        acknowledgesBeforeCommit = flaws.contains(.ackBeforeCommit)
        if flaws.contains(.dualPathDoubleGrant) { dedupe = .perPath }
        if flaws.contains(.doubleGrant) { dedupe = .none }
        if flaws.contains(.staleOverwrite) { ordering = .lastWrite }
        if flaws.contains(.resurrectAfterRefund) { replay = .resurrects }
        if flaws.contains(.refundByProduct) { refundTarget = .latestOfProduct }
        honorsRefunds = !flaws.contains(.ignoreRefund)
        honorsFamilyRevokes = !flaws.contains(.ignoreFamilyRevoke)
        booksEveryRefundDelivery = flaws.contains(.doubleRefund)
        if flaws.contains(.unlockOnPending) { grantingReports.insert("pending") }
        if flaws.contains(.trustClientClaims) { grantingReports.insert("success") }
    }

    // MARK: - Verification

    /// The verifier deliveries go through: `base` (the full check), or a flawed one in its place.
    func verifier(wrapping base: any PayloadVerifier) -> any PayloadVerifier {
        switch verification {
        case .full: base
        case .identityBlind: IdentityBlindVerifier(base: base)
        case .none: TrustingVerifier()
        }
    }

    /// Whether the fields a careful backend checks beyond the verifier (an `appAccountToken` that is a UUID)
    /// are checked.
    var checksFieldFormats: Bool { verification != .none }

    // MARK: - Deliveries

    /// Whether a notification whose UUID is already stored is answered as a duplicate without being applied.
    var dropsReplayedNotifications: Bool { dedupe != .none }

    /// The key that makes a grant happen once: the transaction ID. A resurrected transaction grants afresh.
    func grantKey(transactionId: String, source: LedgerEvent.Source, resurrected: Bool) -> String {
        if dedupe == .none || resurrected { return "\(transactionId)#\(UUID().uuidString)" }
        if dedupe == .perPath { return "\(source.rawValue):\(transactionId)" }
        return transactionId
    }

    /// The transaction ID a device report is granted under, or nil: reports never grant.
    func reportGrant(_ report: ReceivedDeviceReport) -> String? {
        guard grantingReports.contains(report.purchaseResult) else { return nil }
        if report.purchaseResult == "success" {
            return report.transactionId ?? "claim-\(UUID().uuidString.lowercased())"
        }
        return "report-\(UUID().uuidString.lowercased())"
    }

    // MARK: - Ordering

    /// Whether a view signed at `incoming` replaces the stored one signed at `stored`: only a newer one does.
    func replaces(incoming: Int64, stored: Int64) -> Bool {
        ordering == .lastWrite || incoming > stored
    }

    /// Whether an update of a subscription moves its current transaction (product, transaction, period) to
    /// this one: only a later purchase does (an upgrade, a renewal), or a re-signing of the same one that does
    /// not end sooner (a renewal extension). A newer notification about an older transaction keeps them.
    func movesCurrentPeriod(purchase: Int64, expires: Int64, storedPurchase: Int64, storedExpires: Int64) -> Bool {
        ordering == .lastWrite || purchase > storedPurchase || (purchase == storedPurchase && expires >= storedExpires)
    }

    // MARK: - Refunds

    /// Whether an event is dropped unapplied (its notification is still recorded): only a Family Sharing
    /// revocation, by a ledger that ignores them.
    func ignores(_ event: LedgerEvent) -> Bool {
        !honorsFamilyRevokes && event.isFamilyRevoke
    }

    /// The revocation date an event carries (the transaction's, or the signed date of a `REFUND`/`REVOKE`).
    func revocation(carried: Int64?) -> Int64? {
        honorsRefunds ? carried : nil
    }

    /// The key that makes a refund booked once: the transaction and its revocation date, which every copy of
    /// one refund carries (a later refund, after a reversal, is another). With `double-refund`, every delivery's
    /// own.
    func refundKey(transactionId: String, revocationDate: Int64) -> String {
        booksEveryRefundDelivery
            ? "\(transactionId)#\(UUID().uuidString)" : "\(transactionId):\(revocationDate)"
    }

    /// The transaction a refund applies to: the one signed, unless the policy looks it up by product.
    func refundTarget(
        _ signed: JWSTransactionDecodedPayload,
        revoking: Bool,
        latestOfProduct: () throws -> JWSTransactionDecodedPayload?
    ) rethrows -> JWSTransactionDecodedPayload {
        guard refundTarget == .latestOfProduct, revoking else { return signed }
        return try latestOfProduct() ?? signed
    }

    /// A stored transaction's revocation after a new view of it.
    ///
    /// The rules: revocation is sticky, since a replayed or re-signed purchase never carries news of a refund
    /// and so cannot undo one; only a `REFUND_REVERSED` signed after the refund lifts it, and a refund signed
    /// after the reversal sets it again.
    /// - Returns: the new revocation, and whether a refunded transaction came back to life.
    func revocation(
        _ stored: Revocation,
        after incoming: Int64?,
        isReversal: Bool,
        signedDate: Int64
    ) -> (Revocation, resurrected: Bool) {
        var next = stored
        if ordering == .lastWrite {
            next.date = incoming
        } else if let incoming {
            if stored.reversalSigned.map({ signedDate > $0 }) ?? true {
                next.date = incoming
                next.signed = max(stored.signed ?? .min, signedDate)
            }
        } else if isReversal {
            if stored.signed.map({ signedDate > $0 }) ?? true {
                next.date = nil
                next.reversalSigned = max(stored.reversalSigned ?? .min, signedDate)
            }
        } else if stored.date != nil && replay == .resurrects {
            next.date = nil
            return (next, true)
        }
        return (next, false)
    }

    /// The status a subscription event sets, or nil when the event is dropped. A `REFUND` or `REVOKE` without a
    /// status revokes.
    func subscriptionStatus(derived: Status, revokingWithoutStatus: Bool) -> Status? {
        guard honorsRefunds else { return derived == .revoked ? nil : derived }
        return revokingWithoutStatus ? .revoked : derived
    }

    /// Whether a subscription is entitled only while its current transaction is unrevoked, whatever its status
    /// says (read when probed, so that a refund and its reversal are ordered by themselves).
    var revocationOverridesStatus: Bool { honorsRefunds && ordering == .newestSigned }
}

/// A transaction's revocation and the signed dates that order it against reversals.
struct Revocation: Sendable, Equatable {
    /// When it was revoked, or nil while it grants.
    var date: Int64?
    /// The signed date of the newest view that revoked it.
    var signed: Int64?
    /// The signed date of the newest `REFUND_REVERSED`.
    var reversalSigned: Int64?
}
