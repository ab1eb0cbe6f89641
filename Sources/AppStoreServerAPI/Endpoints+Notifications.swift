import AppStoreModel
internal import Foundation
import HTTPServer
import Minting
import Primitives
import Simulation

extension AppStoreServerAPI {
    /// Signs a notification's facts as its `signedPayload`.
    func signed(_ notification: NotificationFacts) throws -> String {
        try minter.signNotification(
            notification.payload,
            transaction: notification.transaction?.payload,
            renewal: notification.renewal
        )
    }

    /// A notification of the app, as Apple would send it now.
    func notificationFacts(type: NotificationTypeV2, now: Int64) -> NotificationFacts {
        NotificationFacts(
            ResponseBodyV2DecodedPayload(
                notificationType: type,
                notificationUUID: UUID().uuidString.lowercased(),
                data: NotificationData(
                    appAppleId: configuration.appAppleId,
                    bundleId: configuration.bundleId,
                    environment: configuration.environment
                ),
                version: "2.0",
                signedDate: now
            )
        )
    }

    /// Records a notification the API caused and hands it to the delivery hook.
    func send(_ notification: NotificationFacts, now: Int64) throws {
        let signedPayload = try signed(notification)
        store.recordNotification(notification, at: now)
        deliver?(APINotification(facts: notification, signedPayload: signedPayload))
    }

    func requestTestNotification(now: Int64) throws -> HTTPResponse {
        guard deliver != nil else { throw APIErrorCode.serverNotificationURLNotFound }
        let notification = notificationFacts(type: .test, now: now)
        // Apple's tokens are a UUID and the request's time in milliseconds.
        let token = "\(notification.notificationUUID)_\(now)"
        store.withState { $0.testNotifications[token] = notification.notificationUUID }
        try send(notification, now: now)
        return .json(200, SendTestNotificationResponse(testNotificationToken: token))
    }

    func testNotificationStatus(_ token: String) throws -> HTTPResponse {
        let parts = token.split(separator: "_")
        guard parts.count == 2, AppStoreJSON.isValidUUID(String(parts[0])), Int64(parts[1]) != nil else {
            throw APIErrorCode.invalidTestNotificationToken
        }
        let record = store.withState { state -> NotificationRecord? in
            guard let uuid = state.testNotifications[token] else { return nil }
            return state.notifications.last { $0.facts.notificationUUID == uuid }
        }
        guard let record else { throw APIErrorCode.testNotificationNotFound }
        return .json(
            200,
            CheckTestNotificationResponse(signedPayload: try signed(record.facts), sendAttempts: record.sendAttempts)
        )
    }

    func notificationHistory(_ body: [UInt8], query: Query, now: Int64) throws -> HTTPResponse {
        let request = try NotificationHistoryFilter(body, now: now)
        let cursor =
            try NotificationCursor.decode(query.value("paginationToken")) ?? NotificationCursor(next: 0, asOf: now)
        let (page, next) = try store.withState { state throws(APIErrorCode) -> ([NotificationRecord], Int?) in
            var customer: Int?
            if let id = request.transactionId {
                customer = try requireTransaction(id, in: state, at: now, endpoint: "getNotificationHistory").customer
            }
            func shown(_ record: NotificationRecord) -> Bool {
                guard record.at <= cursor.asOf, request.matches(record) else { return false }
                guard let customer else { return true }
                return record.facts.transaction.map { state.customerOf[$0.transactionId] == customer } ?? false
            }
            // The record list only grows, so a position in it and the first page's time keep later pages from
            // repeating or skipping a record that became visible in between.
            var page: [NotificationRecord] = []
            for index in min(cursor.next, state.notifications.count)..<state.notifications.count
            where shown(state.notifications[index]) {
                if page.count == Self.pageSize { return (page, index) }
                page.append(state.notifications[index])
            }
            return (page, nil)
        }
        return .json(
            200,
            NotificationHistoryResponse(
                paginationToken: next.map { NotificationCursor(next: $0, asOf: cursor.asOf).token },
                hasMore: next != nil,
                notificationHistory: try page.map {
                    NotificationHistoryResponseItem(signedPayload: try signed($0.facts), sendAttempts: $0.sendAttempts)
                }
            )
        )
    }
}

/// Where the next page of notification history starts: a position in the recorded notifications and the time
/// of the first page, so every page shows the history as it stood when the client began.
struct NotificationCursor {
    var next: Int
    var asOf: Int64

    var token: String { PageToken.encode([String(next), String(asOf)]) }

    static func decode(_ token: String?) throws(APIErrorCode) -> NotificationCursor? {
        guard let fields = try PageToken.fields(token, count: 2, invalid: .invalidPaginationToken) else { return nil }
        guard let next = Int(fields[0]), next >= 0, let asOf = Int64(fields[1]) else { throw .invalidPaginationToken }
        return NotificationCursor(next: next, asOf: asOf)
    }
}

/// The body of `POST /inApps/v1/notifications/history`, validated as Apple does.
struct NotificationHistoryFilter {
    var startDate: Int64
    var endDate: Int64
    var notificationType: NotificationTypeV2?
    var notificationSubtype: Subtype?
    var transactionId: String?
    var onlyFailures: Bool

    /// Apple keeps 180 days of history.
    static let retentionMilliseconds: Int64 = 180 * 86_400_000

    init(_ body: [UInt8], now: Int64) throws(APIErrorCode) {
        guard let fields = try? JSONDecoder().decode([String: JSONValue].self, from: Data(body)) else {
            throw .generalBadRequest
        }
        guard let start = fields["startDate"]?.int64Value else { throw .invalidStartDate }
        guard let end = fields["endDate"]?.int64Value else { throw .invalidEndDate }
        guard start <= end else { throw .startDateAfterEndDate }
        guard start >= now - Self.retentionMilliseconds else { throw .startDateTooFarInPast }
        startDate = start
        endDate = end
        if let value = fields["notificationType"], value != .null {
            guard case .string(let text) = value, NotificationTypeV2(rawValue: text).isKnown else {
                throw .invalidNotificationType
            }
            notificationType = NotificationTypeV2(rawValue: text)
        }
        if case .string(let subtype)? = fields["notificationSubtype"] {
            notificationSubtype = Subtype(rawValue: subtype)
        }
        if let value = fields["transactionId"], value != .null {
            guard case .string(let id) = value else { throw .invalidTransactionId }
            transactionId = id
        }
        if notificationType != nil && transactionId != nil { throw .multipleFiltersSupplied }
        if case .bool(let value)? = fields["onlyFailures"] { onlyFailures = value } else { onlyFailures = false }
    }

    func matches(_ record: NotificationRecord) -> Bool {
        guard record.at >= startDate && record.at < endDate else { return false }
        if let notificationType, record.facts.notificationType != notificationType { return false }
        if let notificationSubtype, record.facts.payload.subtype != notificationSubtype { return false }
        if onlyFailures && !record.failed { return false }
        return true
    }
}
