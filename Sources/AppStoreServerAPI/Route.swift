internal import Foundation

/// The endpoints PayStorm serves, parsed from a method and a path.
enum Route: Hashable {
    case transactionInfo(String)
    case transactionHistory(String)
    case subscriptionStatuses(String)
    case refundHistory(String)
    case orderLookup(String)
    case requestTestNotification
    case testNotificationStatus(String)
    case notificationHistory
    case consumption(String)
    case extend(String)

    init?(method: String, segments: [String]) {
        guard segments.count >= 3, segments[0] == "inApps", let id = segments.last else { return nil }
        switch (method, segments.joined(separator: "/")) {
        case ("POST", "inApps/v1/notifications/test"):
            self = .requestTestNotification
            return
        case ("POST", "inApps/v1/notifications/history"):
            self = .notificationHistory
            return
        default: break
        }
        switch (method, segments.dropLast().joined(separator: "/")) {
        case ("GET", "inApps/v1/transactions"): self = .transactionInfo(id)
        case ("GET", "inApps/v2/history"): self = .transactionHistory(id)
        case ("GET", "inApps/v1/subscriptions"): self = .subscriptionStatuses(id)
        case ("GET", "inApps/v2/refund/lookup"): self = .refundHistory(id)
        case ("GET", "inApps/v1/lookup"): self = .orderLookup(id)
        case ("GET", "inApps/v1/notifications/test"): self = .testNotificationStatus(id)
        case ("PUT", "inApps/v1/transactions/consumption"): self = .consumption(id)
        case ("PUT", "inApps/v1/subscriptions/extend"): self = .extend(id)
        default: return nil
        }
    }

    /// The endpoint's name in Apple's libraries, for the fault log.
    var endpoint: String {
        switch self {
        case .transactionInfo: "getTransactionInfo"
        case .transactionHistory: "getTransactionHistory"
        case .subscriptionStatuses: "getAllSubscriptionStatuses"
        case .refundHistory: "getRefundHistory"
        case .orderLookup: "lookUpOrderId"
        case .requestTestNotification: "requestTestNotification"
        case .testNotificationStatus: "getTestNotificationStatus"
        case .notificationHistory: "getNotificationHistory"
        case .consumption: "sendConsumptionData"
        case .extend: "extendSubscriptionRenewalDate"
        }
    }

    /// The id in the path, or empty.
    var id: String {
        switch self {
        case .transactionInfo(let id), .transactionHistory(let id), .subscriptionStatuses(let id),
            .refundHistory(let id), .orderLookup(let id), .testNotificationStatus(let id), .consumption(let id),
            .extend(let id):
            id
        case .requestTestNotification, .notificationHistory: ""
        }
    }
}

/// A query string's parameters, in order, percent-decoded (`+` is a space, as form encoding writes it).
struct Query {
    private var pairs: [(String, String)] = []

    init(_ raw: String?) {
        guard let raw else { return }
        for part in raw.split(separator: "&") where !part.isEmpty {
            let pieces = part.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            pairs.append((Self.decode(pieces[0]), pieces.count > 1 ? Self.decode(pieces[1]) : ""))
        }
    }

    /// Every value of a parameter.
    func values(_ name: String) -> [String] { pairs.filter { $0.0 == name }.map(\.1) }

    /// The last value of a parameter.
    func value(_ name: String) -> String? { values(name).last }

    private static func decode(_ text: Substring) -> String {
        let spaced = text.replacingOccurrences(of: "+", with: " ")
        return spaced.removingPercentEncoding ?? spaced
    }
}

/// Opaque page tokens (`revision`, `paginationToken`): a cursor naming where the next page starts, not an
/// offset, so that facts becoming visible between two requests neither repeat an item on the next page nor
/// skip one. Base64url-encoded with a prefix, so a token from elsewhere is refused rather than misread.
enum PageToken {
    /// The token for a cursor's fields.
    static func encode(_ fields: [String]) -> String {
        Data((["paystorm"] + fields).joined(separator: ":").utf8).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// The fields of a token: nil without a token, Apple's `invalid` error for a token not ours or not `count`
    /// fields long.
    static func fields(_ token: String?, count: Int, invalid: APIErrorCode) throws(APIErrorCode) -> [Substring]? {
        guard let token else { return nil }
        var base64 = token.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        guard let data = Data(base64Encoded: base64) else { throw invalid }
        let fields = String(decoding: data, as: UTF8.self).split(separator: ":", omittingEmptySubsequences: false)
        guard fields.count == count + 1, fields[0] == "paystorm" else { throw invalid }
        return Array(fields.dropFirst())
    }
}

/// A history item's sort key (a time, then its transaction id), and where a page starts: after the item with
/// this key, so the next page is every item that sorts after it, whatever became visible in between.
struct HistoryCursor: Comparable {
    var time: Int64
    var id: String

    /// The cursor a `revision` names: nil for the first page (no token, or one made before any item).
    static func decode(_ token: String?) throws(APIErrorCode) -> HistoryCursor? {
        guard let fields = try PageToken.fields(token, count: 2, invalid: .invalidRequestRevision) else { return nil }
        if fields[0].isEmpty && fields[1].isEmpty { return nil }
        guard let time = Int64(fields[0]), !fields[1].isEmpty else { throw .invalidRequestRevision }
        return HistoryCursor(time: time, id: String(fields[1]))
    }

    /// The `revision` for the page after this cursor; a nil cursor names the first page.
    static func encode(_ cursor: HistoryCursor?) -> String {
        PageToken.encode(cursor.map { [String($0.time), $0.id] } ?? ["", ""])
    }

    /// Time first; numeric ids as numbers (shorter first).
    static func < (left: HistoryCursor, right: HistoryCursor) -> Bool {
        if left.time != right.time { return left.time < right.time }
        let (a, b) = (left.id.utf8.count, right.id.utf8.count)
        return a != b ? a < b : left.id < right.id
    }

    /// The items of a sorted list that come after `cursor` in the page's direction (all of them without one).
    static func after<Item>(
        _ cursor: HistoryCursor?,
        in sorted: [Item],
        descending: Bool,
        key: (Item) -> HistoryCursor
    ) -> ArraySlice<Item> {
        guard let cursor else { return sorted[...] }
        return sorted.drop { descending ? key($0) >= cursor : key($0) <= cursor }
    }
}
