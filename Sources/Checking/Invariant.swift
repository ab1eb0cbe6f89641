/// The rules a target must never break.
public enum Invariant: String, Sendable, Hashable, Codable, CaseIterable, CodingKeyRepresentable {
    /// Each transaction is granted at most once; balances never exceed the distinct purchases sent.
    case noDoubleGrant = "no-double-grant"
    /// Nothing is granted for pending, declined, forged or unverified input.
    case noUnlockWithoutVerifiedPurchase = "no-unlock-without-verified-purchase"
    /// Refunded or revoked transactions grant nothing at settle, and a refund revokes nothing else.
    case revocationHonored = "revocation-honored"
    /// Each refund is applied once: no transaction is refunded more often than the App Store refunded it (when
    /// the probe lists refunds).
    case noDoubleRefund = "no-double-refund"
    /// Every verified purchase the target acknowledged is granted at settle, and no genuine purchase has every
    /// attempt rejected.
    case noLostPurchase = "no-lost-purchase"
    /// Every genuine notification, of any type, is acknowledged before the App Store gives up on it.
    case noLostNotification = "no-lost-notification"
    /// Older data never overrides newer (expiry never moves back; a refund is not undone by a replay).
    case noStaleRegression = "no-stale-regression"
    /// Active or in grace: entitled; expired or revoked: not.
    case subscriptionState = "subscription-state"
    /// Every planned restart happens and the target accepts connections again; a target unreachable for the
    /// rest of the run fails.
    case targetRecovers = "target-recovers"

    /// The invariants a probe of an account checks (a final probe all of them, a safety probe during the run
    /// some): the others are judged from the deliveries' answers and the restarts.
    public static let probed: [Invariant] = allCases.filter { $0 != .targetRecovers && $0 != .noLostNotification }

    /// The rule in one sentence.
    public var rule: String {
        switch self {
        case .noDoubleGrant: "each transaction is granted at most once"
        case .noUnlockWithoutVerifiedPurchase: "nothing unlocks without a verified purchase"
        case .revocationHonored: "refunded or revoked transactions grant nothing at settle, and nothing else is revoked"
        case .noDoubleRefund: "each refund is applied once"
        case .noLostPurchase:
            "every acknowledged verified purchase is granted at settle, and no genuine purchase is rejected for good"
        case .noLostNotification: "every genuine notification is acknowledged before the App Store gives up on it"
        case .noStaleRegression: "older data never overrides newer"
        case .subscriptionState: "active or grace means entitled; expired or revoked means not"
        case .targetRecovers:
            "every planned restart happens and the target accepts connections again, and it answers at the end"
        }
    }
}
