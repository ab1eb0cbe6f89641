import AppStoreModel
import HTTPServer
import Minting
import Simulation

/// A transaction as the API shows it at one instant: renewal-date extensions applied.
struct VisibleTransaction {
    var facts: TransactionFacts
    var customer: Int
    /// When the App Store last changed it (its newest view), in UNIX milliseconds: history's sort key.
    var modified: Int64
}

extension AppStoreServerAPI {
    static let pageSize = 20

    private var notFoundMillis: Int64 { Int64((configuration.faults.notFoundSeconds * 1000).rounded()) }

    /// The transaction at `now`, or nil when it is unknown or still too new to be known (eventual consistency).
    func visible(_ id: String, in state: StoreState, at now: Int64) -> VisibleTransaction? {
        guard let versions = state.transactions[id], let index = versions.lastIndex(where: { $0.from <= now }),
            versions[0].from + notFoundMillis <= now
        else { return nil }
        let facts = Self.extended(
            versions[index].value,
            by: state.extensions[versions[index].value.originalTransactionId] ?? [],
            at: now
        )
        return VisibleTransaction(facts: facts, customer: state.customerOf[id] ?? 0, modified: versions[index].from)
    }

    /// Every transaction of a customer visible at `now`, in the order they were first recorded.
    func visibleTransactions(of customer: Int, in state: StoreState, at now: Int64) -> [VisibleTransaction] {
        (state.byCustomer[customer] ?? []).compactMap { visible($0, in: state, at: now) }
    }

    /// A subscription transaction with the extensions granted during its period added to `expiresDate`.
    static func extended(
        _ facts: TransactionFacts,
        by extensions: [RenewalExtension],
        at now: Int64
    ) -> TransactionFacts {
        guard let expires = facts.payload.expiresDate else { return facts }
        var copy = facts
        for item in extensions where item.at <= now && item.at >= facts.purchaseDate && item.at < expires {
            copy.payload.expiresDate = (copy.payload.expiresDate ?? expires) + Int64(item.days) * Minter.dayMilliseconds
        }
        return copy
    }

    /// Looks up the transaction of a path, with Apple's errors: a malformed id, or one not (yet) known.
    func requireTransaction(
        _ id: String,
        in state: StoreState,
        at now: Int64,
        endpoint: String
    ) throws(APIErrorCode)
        -> VisibleTransaction
    {
        guard !id.isEmpty, id.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else {
            throw .invalidTransactionId
        }
        guard let found = visible(id, in: state, at: now) else {
            if state.transactions[id]?.first.map({ $0.from <= now }) == true {
                faults.log(APIFaultEvent(at: now, endpoint: endpoint, id: id, kind: .notFoundYet))
            }
            throw .transactionIdNotFound
        }
        return found
    }

    func signed(_ facts: TransactionFacts) throws -> String {
        try minter.signTransaction(facts.payload)
    }

    func transactionInfo(_ id: String, now: Int64) throws -> HTTPResponse {
        let found = try store.withState { try requireTransaction(id, in: $0, at: now, endpoint: "getTransactionInfo") }
        return .json(200, TransactionInfoResponse(signedTransactionInfo: try signed(found.facts)))
    }

    func transactionHistory(_ id: String, query: Query, now: Int64) throws -> HTTPResponse {
        let filter = try HistoryFilter(query)
        let cursor = try HistoryCursor.decode(query.value("revision"))
        let all = try store.withState { state throws(APIErrorCode) in
            let owner = try requireTransaction(id, in: state, at: now, endpoint: "getTransactionHistory")
            return visibleTransactions(of: owner.customer, in: state, at: now)
        }
        let key = { (item: VisibleTransaction) in HistoryCursor(time: item.modified, id: item.facts.transactionId) }
        var matching = all.filter(filter.matches).sorted { key($0) < key($1) }
        if filter.descending { matching.reverse() }
        let rest = HistoryCursor.after(cursor, in: matching, descending: filter.descending, key: key)
        let page = rest.prefix(Self.pageSize)
        return .json(
            200,
            HistoryResponse(
                revision: HistoryCursor.encode(page.last.map(key) ?? cursor),
                hasMore: page.count < rest.count,
                bundleId: configuration.bundleId,
                appAppleId: configuration.appAppleId,
                environment: configuration.environment,
                signedTransactions: try page.map { try signed($0.facts) }
            )
        )
    }

    func refundHistory(_ id: String, query: Query, now: Int64) throws -> HTTPResponse {
        let cursor = try HistoryCursor.decode(query.value("revision"))
        let key = { (item: VisibleTransaction) in
            HistoryCursor(time: item.facts.payload.revocationDate ?? 0, id: item.facts.transactionId)
        }
        let refunded = try store.withState { state throws(APIErrorCode) in
            let owner = try requireTransaction(id, in: state, at: now, endpoint: "getRefundHistory")
            return visibleTransactions(of: owner.customer, in: state, at: now).filter {
                $0.facts.payload.revocationDate != nil
            }
        }.sorted { key($0) < key($1) }
        let rest = HistoryCursor.after(cursor, in: refunded, descending: false, key: key)
        let page = rest.prefix(Self.pageSize)
        return .json(
            200,
            RefundHistoryResponse(
                signedTransactions: try page.map { try signed($0.facts) },
                revision: HistoryCursor.encode(page.last.map(key) ?? cursor),
                hasMore: page.count < rest.count
            )
        )
    }

    func orderLookup(_ orderId: String, now: Int64) throws -> HTTPResponse {
        let found = store.withState { state in
            state.order.compactMap { visible($0, in: state, at: now) }.filter {
                APIStore.orderId(for: $0.facts) == orderId
            }
        }
        // Apple answers an unknown order id with 200 and status 1 (invalid), not with an error.
        return .json(
            200,
            OrderLookupResponse(
                status: found.isEmpty ? 1 : 0,
                signedTransactions: try found.map { try signed($0.facts) }
            )
        )
    }

    func subscriptionStatuses(_ id: String, query: Query, now: Int64) throws -> HTTPResponse {
        var wanted: Set<Int32> = []
        for value in query.values("status") {
            guard let status = Int32(value), (1...5).contains(status) else { throw APIErrorCode.invalidStatus }
            wanted.insert(status)
        }
        let latest = try store.withState { state throws(APIErrorCode) in
            let owner = try requireTransaction(id, in: state, at: now, endpoint: "getAllSubscriptionStatuses")
            var newest: [String: VisibleTransaction] = [:]
            for item in visibleTransactions(of: owner.customer, in: state, at: now)
            where item.facts.payload.subscriptionGroupIdentifier != nil && item.facts.payload.expiresDate != nil {
                let key = item.facts.originalTransactionId
                if newest[key].map({ $0.facts.purchaseDate <= item.facts.purchaseDate }) ?? true { newest[key] = item }
            }
            return newest.values.sorted { $0.facts.originalTransactionId < $1.facts.originalTransactionId }.map {
                item -> (VisibleTransaction, JWSRenewalInfoDecodedPayload?) in
                (item, renewal(item.facts.originalTransactionId, in: state, at: now))
            }
        }
        var groups: [String: [LastTransactionsItem]] = [:]
        for (item, renewal) in latest {
            let status = Self.status(of: item.facts, renewal: renewal, at: now)
            guard wanted.isEmpty || wanted.contains(status) else { continue }
            groups[item.facts.payload.subscriptionGroupIdentifier ?? "", default: []].append(
                LastTransactionsItem(
                    status: status,
                    originalTransactionId: item.facts.originalTransactionId,
                    signedTransactionInfo: try signed(item.facts),
                    signedRenewalInfo: try renewal.map { try minter.sign($0) }
                )
            )
        }
        return .json(
            200,
            StatusResponse(
                environment: configuration.environment,
                bundleId: configuration.bundleId,
                appAppleId: configuration.appAppleId,
                data: groups.keys.sorted().map {
                    SubscriptionGroupIdentifierItem(subscriptionGroupIdentifier: $0, lastTransactions: groups[$0] ?? [])
                }
            )
        )
    }

    /// The renewal info at `now`, with extensions granted before its renewal date added to that date.
    func renewal(_ originalTransactionId: String, in state: StoreState, at now: Int64) -> JWSRenewalInfoDecodedPayload?
    {
        guard var renewal = state.renewal(originalTransactionId, at: now) else { return nil }
        for item in state.extensions[originalTransactionId] ?? [] where item.at <= now {
            if let date = renewal.renewalDate, item.at < date {
                renewal.renewalDate = date + Int64(item.days) * Minter.dayMilliseconds
            }
        }
        return renewal
    }

    /// Apple's subscription status (1 active, 2 expired, 3 billing retry, 4 grace period, 5 revoked) at `now`.
    static func status(of facts: TransactionFacts, renewal: JWSRenewalInfoDecodedPayload?, at now: Int64) -> Int32 {
        if facts.payload.revocationDate.map({ $0 <= now }) == true { return 5 }
        if let expires = facts.payload.expiresDate, expires > now { return 1 }
        if let grace = renewal?.gracePeriodExpiresDate, grace > now { return 4 }
        if renewal?.isInBillingRetryPeriod == true { return 3 }
        return 2
    }
}

/// The filters of `GET /inApps/v2/history/{transactionId}`, validated as Apple does.
struct HistoryFilter {
    var startDate: Int64?
    var endDate: Int64?
    var productIds: Set<String>
    var productTypes: Set<ProductType>
    var groups: Set<String>
    var ownership: InAppOwnershipType?
    var revoked: Bool?
    var descending = false

    /// The query's names for product types (not the payload's `type` strings).
    private static let types: [String: ProductType] = [
        "AUTO_RENEWABLE": .autoRenewableSubscription, "NON_RENEWABLE": .nonRenewingSubscription,
        "CONSUMABLE": .consumable, "NON_CONSUMABLE": .nonConsumable,
    ]

    init(_ query: Query) throws(APIErrorCode) {
        if let text = query.value("startDate") {
            guard let value = Int64(text), value >= 0 else { throw .invalidStartDate }
            startDate = value
        }
        if let text = query.value("endDate") {
            guard let value = Int64(text), value >= 0 else { throw .invalidEndDate }
            endDate = value
        }
        if let startDate, let endDate, startDate > endDate { throw .startDateAfterEndDate }
        productIds = Set(query.values("productId"))
        guard !productIds.contains("") else { throw .invalidProductId }
        var types: Set<ProductType> = []
        for value in query.values("productType") {
            guard let type = Self.types[value] else { throw .invalidProductType }
            types.insert(type)
        }
        productTypes = types
        groups = Set(query.values("subscriptionGroupIdentifier"))
        guard !groups.contains("") else { throw .invalidSubscriptionGroupIdentifier }
        if let value = query.value("inAppOwnershipType") {
            let type = InAppOwnershipType(rawValue: value)
            guard type.isKnown else { throw .invalidInAppOwnershipType }
            ownership = type
        }
        if let value = query.value("revoked") {
            // Apple's Python client sends str(True): "True".
            switch value.lowercased() {
            case "true": revoked = true
            case "false": revoked = false
            default: throw .invalidRevoked
            }
        }
        if let value = query.value("sort") {
            guard value == "ASCENDING" || value == "DESCENDING" else { throw .invalidSort }
            descending = value == "DESCENDING"
        }
    }

    func matches(_ item: VisibleTransaction) -> Bool {
        let facts = item.facts
        if let startDate, facts.purchaseDate < startDate { return false }
        if let endDate, facts.purchaseDate >= endDate { return false }
        if !productIds.isEmpty && !productIds.contains(facts.productId) { return false }
        if !productTypes.isEmpty && !productTypes.contains(facts.type) { return false }
        if !groups.isEmpty && !groups.contains(facts.payload.subscriptionGroupIdentifier ?? "") { return false }
        if let ownership, facts.payload.inAppOwnershipType != ownership { return false }
        if let revoked, (facts.payload.revocationDate != nil) != revoked { return false }
        return true
    }
}
