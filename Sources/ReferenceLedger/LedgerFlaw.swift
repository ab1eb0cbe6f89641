/// One realistic purchase-backend bug the reference ledger can be told to have, so that PayStorm's checker
/// can be shown to catch it. The correct ledger has none.
public enum LedgerFlaw: String, CaseIterable, Sendable, Hashable {
    case doubleGrant = "double-grant"
    case dualPathDoubleGrant = "dual-path-double-grant"
    case trustUnverified = "trust-unverified"
    case ignoreBundleEnvironment = "ignore-bundle-environment"
    case ignoreRefund = "ignore-refund"
    case staleOverwrite = "stale-overwrite"
    case resurrectAfterRefund = "resurrect-after-refund"
    case unlockOnPending = "unlock-on-pending"
    case ackBeforeCommit = "ack-before-commit"
    case trustClientClaims = "trust-client-claims"
    case refundByProduct = "refund-by-product"
    case ignoreFamilyRevoke = "ignore-family-revoke"
    case doubleRefund = "double-refund"

    /// What the flawed ledger does wrong, in one line (used by `--help` and docs/faults-and-flaws.md).
    public var summary: String {
        switch self {
        case .doubleGrant:
            "no dedupe: every redelivery of a notification or transaction grants again"
        case .dualPathDoubleGrant:
            "the webhook and the device delivery of one transaction each grant it"
        case .trustUnverified:
            "reads payloads without checking signature, chain or identity"
        case .ignoreBundleEnvironment:
            "checks the signature and chain but accepts any bundleId and environment"
        case .ignoreRefund:
            "ignores REFUND/REVOKE and revocationDate: refunded purchases stay granted"
        case .staleOverwrite:
            "last write wins: an older signedDate overrides newer state"
        case .resurrectAfterRefund:
            "a replayed purchase of a refunded transaction un-revokes it and grants again"
        case .unlockOnPending:
            "grants the product on a device report of a pending purchase"
        case .ackBeforeCommit:
            "answers 200 at once and commits in the background every 2 s, so a crash loses acknowledged grants"
        case .trustClientClaims:
            "grants what the app says it bought: a device report of a successful purchase, with no signed transaction"
        case .refundByProduct:
            "a refund revokes the account's latest transaction of the product, not the one refunded (a refunded older renewal ends the current period)"
        case .ignoreFamilyRevoke:
            "ignores Family Sharing revocations (REVOKE, FAMILY_REVOKE): a member keeps what the purchaser stopped sharing"
        case .doubleRefund:
            "books a refund for every delivery of one (a duplicate, a retry), before its duplicate check"
        }
    }

    /// The PayStorm invariant this flaw breaks.
    public var invariant: String {
        switch self {
        case .doubleGrant, .dualPathDoubleGrant: "no double grant"
        case .trustUnverified, .ignoreBundleEnvironment, .unlockOnPending, .trustClientClaims:
            "no unlock without a verified purchase"
        case .ignoreRefund, .ignoreFamilyRevoke: "revocation honored"
        case .staleOverwrite: "no stale regression"
        case .resurrectAfterRefund: "revocation honored"
        case .refundByProduct: "revocation honored or subscription state"
        case .ackBeforeCommit: "no lost purchase"
        case .doubleRefund: "no double refund"
        }
    }
}
