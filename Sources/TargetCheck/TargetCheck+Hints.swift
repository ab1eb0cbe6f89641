import Chaos
import Checking
import Load
import Profile

extension TargetCheck {
    /// What went wrong on one row, in a sentence that says where to look; nil when the row is as it should be.
    static func hint(
        for step: Step,
        outcome: DeliveryOutcome,
        probed: Bool,
        state: AccountState? = nil,
        found: [Invariant: CheckResult.Outcome],
        probeFailure: String
    ) -> String? {
        switch step.kind {
        case .genuine:
            if let rejected = answerHint(role: step.roleWords, outcome: outcome) { return rejected }
            return probeHint(
                for: step,
                outcome: outcome,
                probed: probed,
                state: state,
                found: found,
                probeFailure: probeFailure
            )
        case .duplicate:
            if case .fail? = found[.noDoubleGrant] {
                return "the purchase was granted more than once (the duplicate, or the device delivery and the "
                    + "webhook each): the backend does not deduplicate on notificationUUID or transactionId"
            }
        case .forgery:
            if case .fail? = found[.noUnlockWithoutVerifiedPurchase] {
                return outcome.isAcknowledged
                    ? "forgery was acknowledged and granted: the backend trusts unverified input"
                    : "forgery was granted although rejected: the backend trusts unverified input"
            }
        case .pending:
            if case .fail? = found[.noUnlockWithoutVerifiedPurchase] {
                return "a pending purchase report was granted: the backend unlocks without a verified transaction"
            }
        }
        return nil
    }

    /// What a genuine purchase's answer says is wrong: a rejection, "retry later" or no answer.
    private static func answerHint(role: String, outcome: DeliveryOutcome) -> String? {
        switch outcome {
        case .acknowledged: return nil
        case .rejected(let status):
            switch status {
            case 401, 403:
                return "\(role) got \(status): check the credentials (target.headers, the role's headers, the "
                    + "accounts' fields from target.accounts.provision)"
            case 404, 405: return "\(role) got \(status): check the URL and the method"
            case 400..<500:
                return "\(role) got \(status): does the body template match the API "
                    + "(and does the target trust the test root given with --pki)?"
            default: return "\(role) got \(status): the target failed on a genuine purchase; see its log"
            }
        case .deferred(let status):
            return "\(role) got \(status), which its responses read as retry later: the target limits its "
                + "rate or is busy; run the check again"
        case .indeterminate(let reason), .notSent(let reason, _):
            return "\(role) got no answer (\(reason)): check the URL and that the target is up"
        }
    }

    /// What the probe of an acknowledged genuine purchase says is wrong.
    private static func probeHint(
        for step: Step,
        outcome: DeliveryOutcome,
        probed: Bool,
        state: AccountState?,
        found: [Invariant: CheckResult.Outcome],
        probeFailure: String
    ) -> String? {
        guard probed else {
            return "the probe failed (\(probeFailure)): check the probe URL or mapping"
        }
        if case .fail? = found[.noLostPurchase] {
            return "probe shows nothing after an acknowledged purchase: check the probe URL or mapping"
        }
        // Whatever the checker could decide: a probe that shows no trace of an acknowledged purchase's
        // product cannot see that kind of purchase (a subscription, say), and the run would judge blind.
        if outcome.isAcknowledged, let state, !shows(state, product: step.product) {
            return "probe shows nothing of \(step.product) after an acknowledged purchase: check that the "
                + "probe (or its mapping) reports \(step.productKind) purchases"
        }
        if case .fail? = found[.subscriptionState] {
            return "the probe does not show the subscription as the purchase left it: check the probe mapping "
                + "of subscriptions"
        }
        if case .unknown(let reason)? = found[.noLostPurchase] {
            return "the probe could not decide whether the purchase was granted: \(reason)"
        }
        return nil
    }

    static func status(_ result: LoadResult) -> String {
        if let error = result.error { return "\(error)" }
        return String(result.status)
    }

    static func describe(_ outcome: DeliveryOutcome) -> String {
        switch outcome {
        case .acknowledged: "acknowledged"
        case .rejected: "rejected"
        case .deferred: "retry later"
        case .indeterminate: "no answer"
        case .notSent: "not sent"
        }
    }

    /// Whether an account's state shows any trace of the product: an entitlement, a balance, a transaction.
    static func shows(_ state: AccountState, product: String) -> Bool {
        state.entitlements.contains { $0.productId == product } || (state.balances[product] ?? 0) != 0
            || (state.transactions ?? []).contains { $0.productId == product }
    }

    /// What an account's state shows for the product: entitled, a balance, grant counts, or nothing.
    static func describe(_ state: AccountState, product: String) -> String {
        var parts: [String] = []
        let entitled = state.entitlements.filter { $0.productId == product }.count
        if entitled > 0 { parts.append("\(product) entitled" + (entitled > 1 ? " x\(entitled)" : "")) }
        if let balance = state.balances[product], balance != 0 { parts.append("\(product) balance \(balance)") }
        if let grants = state.grants, !grants.isEmpty {
            parts.append("grants " + grants.map { "\($0.transactionId) x\($0.count)" }.joined(separator: ", "))
        }
        let others = Set(state.entitlements.map(\.productId)).subtracting([product]).sorted()
        if !others.isEmpty { parts.append("also " + others.joined(separator: ", ")) }
        return parts.isEmpty ? "nothing" : parts.joined(separator: "; ")
    }
}
