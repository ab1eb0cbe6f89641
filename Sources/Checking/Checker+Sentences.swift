import AppStoreModel
import Chaos
import Simulation
import TargetContract

/// The sentences of witnesses and history entries.
extension Checker {
    // MARK: - Sentences

    func describe(_ delivery: PlannedDelivery) -> String {
        var text: String
        switch delivery.action.delivery {
        case .notification(let note):
            text = "webhook \(note.notificationType)\(note.payload.subtype.map { "/\($0)" } ?? "")"
        case .device(let device):
            text = "device \(device.device) (\(device.source.rawValue)) delivery"
        case .report(let report):
            text = "device report \(report.purchaseResult) for \(report.productId)"
        case .marker:
            text = "\(delivery.action.lifecycle.rawValue)"
        }
        if delivery.copy != .original { text += " [\(delivery.copy.rawValue)]" }
        if let forgery = delivery.forgery { text += " [forged: \(forgery)\(Self.apiAnswer(to: delivery))]" }
        let faults = delivery.faults.map(\.fault).filter { $0 != "duplicate" && $0 != "forgery" }
        if !faults.isEmpty { text += " [\(faults.joined(separator: ", "))]" }
        return text
    }

    /// The history's verb for a delivery as it is dispatched: a device delivery of a run without a device
    /// endpoint (webhook-only) goes nowhere, and its entry says so rather than "was dispatched".
    func dispatched(_ delivery: PlannedDelivery) -> String {
        guard delivery.sends else { return " happened" }
        switch delivery.action.delivery {
        case .device:
            return devicesReachable ? " was dispatched" : " was due, with no device endpoint to send it to"
        case .report:
            return reportsReachable ? " was dispatched" : " was due, with no device report endpoint to send it to"
        case .notification, .marker:
            return " was dispatched"
        }
    }

    /// What the App Store Server API answers when a backend asks it about a pulled forgery's id: the
    /// witness of a grant names it, since that answer is what the backend should have believed.
    ///
    /// The phrase names no ID: phrases are interned for the whole run, and one naming each forgery's ID made
    /// a distinct phrase a forgery, so a long soak filled the table (then its witnesses lost their text). The
    /// witness's sentence names the transaction already, and the violation its account.
    static func apiAnswer(to delivery: PlannedDelivery) -> String {
        guard case .device = delivery.action.delivery else { return "" }
        switch delivery.forgery {
        case "made-up-transaction-id":
            return "; an ID the App Store never issued, which the App Store Server API answers with "
                + "404 TransactionIdNotFoundError (4040010)"
        case "other-account-transaction-id":
            return "; another account's transaction ID, whose signed answer from the App Store Server API "
                + "carries that account's appAccountToken, not this account's"
        default:
            return ""
        }
    }

    func describe(_ outcome: DeliveryOutcome) -> String {
        switch outcome {
        case .acknowledged(let status, let alreadyHad):
            "was acknowledged with \(status)" + (alreadyHad ? " (already had it)" : "")
        case .rejected(let status): "was rejected with \(status)"
        case .deferred(let status): "was deferred with \(status) (retry later)"
        case .indeterminate(let reason): "got no answer (\(reason)); the target may or may not have committed it"
        case .notSent(let reason, _): "was not sent (\(reason))"
        }
    }

    // MARK: - What a probe showed

    func showing(_ entitlement: AccountState.Entitlement) -> String {
        var text = "showed entitlement \(entitlement.productId)"
        if let id = entitlement.transactionId { text += " (transaction \(id))" }
        if let expires = entitlement.expiresDate { text += " until \(expires)" }
        return text
    }

    func showing(_ listed: AccountState.TransactionState) -> String {
        var text = "listed transaction \(listed.transactionId) of \(listed.productId) as \(listed.state.rawValue)"
        if let start = listed.periodStart, let end = listed.periodEnd {
            text += " for \(start)–\(end)"
        } else if let end = listed.periodEnd {
            text += " until \(end)"
        }
        return text
    }

    func showing(_ grant: AccountState.Grant) -> String {
        "showed transaction \(grant.transactionId) granted \(grant.count) time\(grant.count == 1 ? "" : "s")"
    }
}
