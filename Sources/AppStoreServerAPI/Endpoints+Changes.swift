import AppStoreModel
internal import Foundation
import HTTPServer
import Minting
import Primitives
import Simulation

extension AppStoreServerAPI {
    /// `PUT /inApps/v1/transactions/consumption/{transactionId}`: every field validated as Apple documents
    /// (`ConsumptionRequest` v1), then recorded; 202 with no body.
    func consumption(_ id: String, body: [UInt8], now: Int64) throws -> HTTPResponse {
        guard let fields = try? JSONDecoder().decode([String: JSONValue].self, from: Data(body)) else {
            throw APIErrorCode.generalBadRequest
        }
        guard fields["customerConsented"] == .bool(true) else { throw APIErrorCode.invalidCustomerConsented }
        guard case .bool? = fields["sampleContentProvided"] else { throw APIErrorCode.invalidSampleContentProvided }
        let ranges: [(String, ClosedRange<Int64>, APIErrorCode)] = [
            ("consumptionStatus", 0...3, .invalidConsumptionStatus), ("platform", 0...2, .invalidPlatform),
            ("deliveryStatus", 0...5, .invalidDeliveryStatus), ("accountTenure", 0...7, .invalidAccountTenure),
            ("playTime", 0...7, .invalidPlayTime), ("lifetimeDollarsRefunded", 0...7, .invalidLifetimeDollarsRefunded),
            ("lifetimeDollarsPurchased", 0...7, .invalidLifetimeDollarsPurchased),
            ("userStatus", 0...4, .invalidUserStatus),
        ]
        for (name, range, error) in ranges {
            guard let value = fields[name]?.int64Value, range.contains(value) else { throw error }
        }
        if let value = fields["refundPreference"], value != .null {
            guard let preference = value.int64Value, (0...3).contains(preference) else {
                throw APIErrorCode.generalBadRequest
            }
        }
        // An empty string says the app has no token for the customer.
        guard case .string(let token)? = fields["appAccountToken"], token.isEmpty || AppStoreJSON.isValidUUID(token)
        else { throw APIErrorCode.invalidAppAccountToken }
        try store.withState { state throws(APIErrorCode) in
            _ = try requireTransaction(id, in: state, at: now, endpoint: "sendConsumptionData")
            let text = fields.mapValues { value in
                (try? JSONEncoder().encode(value)).map { String(decoding: $0, as: UTF8.self) } ?? ""
            }
            state.consumption[id, default: []].append(ConsumptionRecord(transactionId: id, at: now, fields: text))
        }
        return HTTPResponse(status: 202)
    }

    /// `PUT /inApps/v1/subscriptions/extend/{originalTransactionId}`: extends the current period of an active,
    /// purchased (not family-shared) subscription by 1 to 90 days, at most twice in 365 days; the same
    /// `requestIdentifier` again answers the same without extending twice. Emits `RENEWAL_EXTENDED`.
    func extend(_ id: String, body: [UInt8], now: Int64) throws -> HTTPResponse {
        let (days, reason, requestIdentifier) = try Self.extendRequest(body, id: id)
        let outcome = try store.withState { state throws(APIErrorCode) -> ExtensionOutcome in
            let series = (state.order).compactMap { visible($0, in: state, at: now) }
                .filter { $0.facts.originalTransactionId == id }
            guard let current = series.max(by: { $0.facts.purchaseDate < $1.facts.purchaseDate }) else {
                throw .originalTransactionIdNotFound
            }
            let previous = state.extensions[id] ?? []
            let repeated = previous.contains { $0.requestIdentifier == requestIdentifier }
            if !repeated {
                guard current.facts.type == .autoRenewableSubscription else {
                    throw .subscriptionExtensionIneligible
                }
                guard current.facts.payload.inAppOwnershipType != .familyShared else {
                    throw .familySharedSubscriptionExtensionIneligible
                }
                let renewal = renewal(id, in: state, at: now)
                guard Self.status(of: current.facts, renewal: renewal, at: now) == 1 else {
                    throw .subscriptionExtensionIneligible
                }
                let year = 365 * Minter.dayMilliseconds
                guard previous.filter({ $0.at > now - year }).count < 2 else { throw .subscriptionMaxExtension }
                state.extensions[id, default: []].append(
                    RenewalExtension(
                        originalTransactionId: id,
                        days: Int(days),
                        reasonCode: Int(reason),
                        requestIdentifier: requestIdentifier,
                        at: now
                    )
                )
            }
            let extended = visible(current.facts.transactionId, in: state, at: now)?.facts ?? current.facts
            return ExtensionOutcome(transaction: extended, renewal: renewal(id, in: state, at: now), new: !repeated)
        }
        if outcome.new {
            var notification = notificationFacts(type: .renewalExtended, now: now)
            notification.payload.data?.status = 1
            notification.transaction = outcome.transaction
            notification.renewal = outcome.renewal
            try send(notification, now: now)
        }
        return .json(
            200,
            ExtendRenewalDateResponse(
                originalTransactionId: id,
                webOrderLineItemId: outcome.transaction.payload.webOrderLineItemId,
                success: true,
                effectiveDate: outcome.transaction.payload.expiresDate
            )
        )
    }

    /// The fields of an extension request, each checked as the App Store checks it, in its order.
    private static func extendRequest(
        _ body: [UInt8],
        id: String
    ) throws -> (days: Int64, reason: Int64, requestIdentifier: String) {
        guard let fields = try? JSONDecoder().decode([String: JSONValue].self, from: Data(body)) else {
            throw APIErrorCode.generalBadRequest
        }
        guard let days = fields["extendByDays"]?.int64Value, (1...90).contains(days) else {
            throw APIErrorCode.invalidExtendByDays
        }
        guard let reason = fields["extendReasonCode"]?.int64Value, (0...3).contains(reason) else {
            throw APIErrorCode.invalidExtendReasonCode
        }
        guard case .string(let requestIdentifier)? = fields["requestIdentifier"], !requestIdentifier.isEmpty,
            requestIdentifier.count <= 128
        else { throw APIErrorCode.invalidRequestIdentifier }
        guard !id.isEmpty, id.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else {
            throw APIErrorCode.invalidOriginalTransactionId
        }
        return (days, reason, requestIdentifier)
    }
}

private struct ExtensionOutcome: Sendable {
    var transaction: TransactionFacts
    var renewal: JWSRenewalInfoDecodedPayload?
    var new: Bool
}
