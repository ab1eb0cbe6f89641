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

/// Opaque page tokens (`revision`, `paginationToken`): the offset of the next page, base64url-encoded with a
/// prefix, so a token from elsewhere is refused rather than misread.
enum PageToken {
    static func encode(_ offset: Int) -> String {
        Data("paystorm:\(offset)".utf8).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// The offset a page token names: 0 without a token, Apple's `invalid` error for a token not ours.
    static func offset(_ token: String?, invalid: APIErrorCode) throws(APIErrorCode) -> Int {
        guard let token else { return 0 }
        guard let offset = decode(token) else { throw invalid }
        return offset
    }

    static func decode(_ token: String) -> Int? {
        var base64 = token.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        guard let data = Data(base64Encoded: base64) else { return nil }
        let text = String(decoding: data, as: UTF8.self)
        guard text.hasPrefix("paystorm:"), let offset = Int(text.dropFirst("paystorm:".count)), offset >= 0 else {
            return nil
        }
        return offset
    }
}
