public import AppStoreModel
import Primitives
import Profile
public import Simulation
import Synchronization

/// The simulated world as the App Store knows it, for the App Store Server API to answer from: transactions,
/// renewal infos, order ids, notification history, consumption records and renewal-date extensions, each
/// fact visible from a world time (UNIX milliseconds).
///
/// The run path feeds it with ``record(_:at:)`` as the world's actions are released, so that the API never
/// answers with a fact from the world's future; tests insert facts directly. Thread-safe: every method
/// takes one short lock.
///
/// ```swift
/// let store = APIStore()
/// var world = World(profile: profile, startMillis: start)
/// while let action = world.next() { store.record(action, at: world.millis(action.at)) }
/// ```
public final class APIStore: Sendable {
    private let state = Mutex(StoreState())

    /// Creates an empty store.
    public init() {}

    /// Records what one action of the world tells the App Store: the transaction it carries (a new one, or a
    /// new view of a known one, such as a refund), the renewal info and the notification itself.
    ///
    /// Device reports and markers carry nothing the App Store knows and are ignored.
    /// - Parameters:
    ///   - action: the action, as released by the run path.
    ///   - at: the world time the facts become true, in UNIX milliseconds (usually `world.millis(action.at)`).
    public func record(_ action: Action, at: Int64) {
        if let transaction = action.transaction {
            insert(transaction, customer: action.account, at: at)
        }
        if case .notification(let notification) = action.delivery {
            if let renewal = notification.renewal { insert(renewal, at: at) }
            recordNotification(notification, at: at)
        }
    }

    /// Inserts a transaction, or a newer view of one already known (a refund, an upgrade flag); a view signed
    /// no later than the one known is ignored.
    /// - Parameters:
    ///   - transaction: the transaction's facts.
    ///   - customer: the customer (the world's account index); every answer stays within one customer.
    ///   - at: when it becomes visible, in UNIX milliseconds.
    public func insert(_ transaction: TransactionFacts, customer: Int, at: Int64) {
        state.withLock { $0.insert(transaction, customer: customer, at: at) }
    }

    /// Inserts a renewal info (a newer view replaces the older one from `at` on); one without an
    /// `originalTransactionId` belongs to no subscription, so nothing could ask for it, and is ignored.
    /// - Parameters:
    ///   - renewal: the renewal info.
    ///   - at: when it becomes visible, in UNIX milliseconds.
    public func insert(_ renewal: JWSRenewalInfoDecodedPayload, at: Int64) {
        guard let original = renewal.originalTransactionId else { return }
        state.withLock { state in
            state.renewals[original, default: []].append(Versioned(from: at, value: renewal))
        }
    }

    /// Records a notification the App Store sent (or will send) at `at`, for the notification history.
    /// - Parameters:
    ///   - notification: the notification's facts.
    ///   - at: when it was sent, in UNIX milliseconds.
    public func recordNotification(_ notification: NotificationFacts, at: Int64) {
        state.withLock { state in
            state.notificationIndex[notification.notificationUUID] = state.notifications.count
            state.notifications.append(NotificationRecord(facts: notification, at: at))
        }
    }

    /// Records one attempt to deliver a notification, as the history's `sendAttempts` shows it: the run's
    /// webhook deliveries (first attempts, the App Store's retries, duplicates) and the API's own notifications.
    /// An attempt of a notification the store never recorded (a forgery, which Apple never sent) is ignored.
    /// - Parameters:
    ///   - notificationUUID: the notification's `notificationUUID`.
    ///   - at: when the attempt was made, in UNIX milliseconds.
    ///   - result: how it ended, such as `SendAttemptResult.success` or `SendAttemptResult.timedOut`.
    public func recordSendAttempt(notificationUUID: String, at: Int64, result: SendAttemptResult) {
        state.withLock { state in
            guard let index = state.notificationIndex[notificationUUID] else { return }
            state.notifications[index].sendAttempts.append(SendAttempt(attemptDate: at, sendAttemptResult: result))
        }
    }

    /// The attempts recorded for a notification, in the order recorded (empty for one the store does not know).
    /// - Parameter notificationUUID: the notification's `notificationUUID`.
    /// - Returns: each attempt's date (UNIX milliseconds) and result.
    public func sendAttempts(notificationUUID: String) -> [(attemptDate: Int64, result: SendAttemptResult)] {
        state.withLock { state in
            guard let index = state.notificationIndex[notificationUUID] else { return [] }
            return state.notifications[index].sendAttempts.map { ($0.attemptDate, $0.sendAttemptResult) }
        }
    }

    /// Every transaction known at `now` (visible or not yet), for the admin listing and tests.
    /// - Parameter now: the world time, in UNIX milliseconds.
    /// - Returns: one entry per transaction id, in the order they were first recorded.
    public func transactions(at now: Int64) -> [APIStoreEntry] {
        state.withLock { state in
            state.order.compactMap { id -> APIStoreEntry? in
                guard let versions = state.transactions[id], let latest = versions.last(where: { $0.from <= now })
                else { return nil }
                return APIStoreEntry(
                    transaction: latest.value,
                    customer: state.customerOf[id] ?? 0,
                    firstSeen: versions[0].from,
                    orderId: APIStore.orderId(for: latest.value)
                )
            }
        }
    }

    /// The newest view at `now` of each of a customer's transactions visible by then, in the order first
    /// recorded: what the customer's app receipt lists at that time.
    /// - Parameters:
    ///   - customer: the customer (the world's account index).
    ///   - now: the world time, in UNIX milliseconds.
    /// - Returns: the transactions.
    public func transactions(ofCustomer customer: Int, at now: Int64) -> [TransactionFacts] {
        state.withLock { state in
            (state.byCustomer[customer] ?? []).compactMap { state.transaction($0, at: now)?.facts }
        }
    }

    /// The product of a transaction that the App Store discloses to an account at `now`: its purchase visible by
    /// then (through `verifyReceipt`'s `latest_receipt_info`, the transaction history or info), and its
    /// `appAccountToken` the account's (compared case-insensitively). Nil otherwise, also for a transaction
    /// without a token: another account's genuine ID (a forgery replays one) is no purchase of this account.
    /// - Parameters:
    ///   - transactionId: the transaction.
    ///   - account: the account's `appAccountToken`.
    ///   - now: the world time, in UNIX milliseconds.
    /// - Returns: the transaction's `productId`, or nil.
    public func disclosedProduct(of transactionId: String, toAccount account: String, at now: Int64) -> String? {
        state.withLock { state in
            guard let facts = state.transaction(transactionId, at: now)?.facts,
                let token = facts.payload.appAccountToken,
                token.lowercased() == account.lowercased()
            else { return nil }
            return facts.productId
        }
    }

    /// The consumption information sent for a transaction, in the order received.
    /// - Parameter transactionId: the transaction.
    /// - Returns: the records.
    public func consumptionRecords(for transactionId: String) -> [ConsumptionRecord] {
        state.withLock { $0.consumption[transactionId] ?? [] }
    }

    /// The renewal-date extensions granted to a subscription, in the order granted.
    /// - Parameter originalTransactionId: the subscription's original transaction.
    /// - Returns: the extensions.
    public func extensions(for originalTransactionId: String) -> [RenewalExtension] {
        state.withLock { $0.extensions[originalTransactionId] ?? [] }
    }

    /// The order id Apple's order lookup knows a transaction by: ten characters derived from its original
    /// transaction id, so every transaction of one purchase shares it and a seed gives the same ids.
    /// - Parameter transaction: the transaction.
    /// - Returns: an order id such as `MK5TTTVWJH`.
    public static func orderId(for transaction: TransactionFacts) -> String {
        let alphabet = Array("ABCDEFGHJKLMNPQRSTUVWXYZ23456789")
        var value = SplitMix64.mix(
            UInt64(transaction.originalTransactionId) ?? stableHash(transaction.originalTransactionId)
        )
        var text = ""
        for _ in 0..<10 {
            text.append(alphabet[Int(value % UInt64(alphabet.count))])
            value /= UInt64(alphabet.count)
        }
        return text
    }

    func withState<T: Sendable, E: Error>(_ body: (inout StoreState) throws(E) -> T) throws(E) -> T {
        try state.withLock { state throws(E) in try body(&state) }
    }
}

/// One transaction as the store knows it at a time.
public struct APIStoreEntry: Sendable, Hashable {
    /// Its newest view at that time.
    public var transaction: TransactionFacts
    /// The customer it belongs to.
    public var customer: Int
    /// When it was first recorded (its purchase, as the App Store saw it), in UNIX milliseconds.
    public var firstSeen: Int64
    /// Its order id for `GET /inApps/v1/lookup/{orderId}`.
    public var orderId: String
}

/// Consumption information a backend sent (`PUT /inApps/v1/transactions/consumption/{transactionId}`).
public struct ConsumptionRecord: Sendable, Hashable {
    /// The transaction.
    public var transactionId: String
    /// When it was received, in UNIX milliseconds.
    public var at: Int64
    /// The request body's fields, by Apple's names, as JSON text of each value.
    public var fields: [String: String]
}

/// One renewal-date extension (`PUT /inApps/v1/subscriptions/extend/{originalTransactionId}`).
public struct RenewalExtension: Sendable, Hashable {
    /// The subscription's original transaction.
    public var originalTransactionId: String
    /// Days added, 1 to 90.
    public var days: Int
    /// Apple's `extendReasonCode`, 0 to 3.
    public var reasonCode: Int
    /// The backend's `requestIdentifier`.
    public var requestIdentifier: String
    /// When it was granted, in UNIX milliseconds.
    public var at: Int64
}

struct Versioned<Value: Sendable>: Sendable {
    var from: Int64
    var value: Value
}

struct SendAttempt: Sendable, Hashable, Encodable {
    var attemptDate: Int64
    var sendAttemptResult: SendAttemptResult
}

struct NotificationRecord: Sendable {
    var facts: NotificationFacts
    var at: Int64
    var sendAttempts: [SendAttempt] = []

    /// Apple's `onlyFailures`: attempted, and no attempt succeeded. One not attempted yet (its first attempt in
    /// flight, or still to come) is no failure: a backend that replayed it would meet it twice.
    var failed: Bool { !sendAttempts.isEmpty && !sendAttempts.contains { $0.sendAttemptResult == .success } }
}

struct StoreState: Sendable {
    var transactions: [String: [Versioned<TransactionFacts>]] = [:]
    var order: [String] = []
    var customerOf: [String: Int] = [:]
    var byCustomer: [Int: [String]] = [:]
    var renewals: [String: [Versioned<JWSRenewalInfoDecodedPayload>]] = [:]
    var notifications: [NotificationRecord] = []
    /// The position of each notification in `notifications` (the last recorded of a UUID), so that the run's
    /// attempts find theirs without a scan.
    var notificationIndex: [String: Int] = [:]
    var testNotifications: [String: String] = [:]
    var consumption: [String: [ConsumptionRecord]] = [:]
    var extensions: [String: [RenewalExtension]] = [:]

    mutating func insert(_ transaction: TransactionFacts, customer: Int, at: Int64) {
        let id = transaction.transactionId
        // A device posting (or redelivering) an older view must not undo what the App Store already knows,
        // such as a refund: only a view signed later is newer.
        if let latest = transactions[id]?.last, transaction.signedDate <= latest.value.signedDate { return }
        if transactions[id] == nil {
            order.append(id)
            customerOf[id] = customer
            byCustomer[customer, default: []].append(id)
        }
        transactions[id, default: []].append(Versioned(from: at, value: transaction))
    }

    /// The newest view of a transaction at `now`, with the time it was first seen.
    func transaction(_ id: String, at now: Int64) -> (facts: TransactionFacts, firstSeen: Int64)? {
        guard let versions = transactions[id], let latest = versions.last(where: { $0.from <= now }) else {
            return nil
        }
        return (latest.value, versions[0].from)
    }

    func renewal(_ originalTransactionId: String, at now: Int64) -> JWSRenewalInfoDecodedPayload? {
        renewals[originalTransactionId]?.last(where: { $0.from <= now })?.value
    }
}

/// FNV-1a, for ids that are not numbers (a stable order id needs a stable hash; `Hasher` is seeded per process).
func stableHash(_ text: String) -> UInt64 {
    var hash: UInt64 = 0xcbf2_9ce4_8422_2325
    for byte in text.utf8 {
        hash ^= UInt64(byte)
        hash = hash &* 0x100_0000_01b3
    }
    return hash
}
