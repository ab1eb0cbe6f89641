import Foundation
public import Primitives

/// What an answer means (`means` in the profile).
public enum ResponseMeaning: String, Sendable, Hashable, CaseIterable {
    /// The target took the delivery.
    case granted
    /// The target had it already: a success (the device finishes the transaction).
    case alreadyHad
    /// The target refused it.
    case rejected
    /// Not acknowledged, to be retried (the App Store's schedule, or the device's next launch).
    case retryLater

    /// Whether the sender counts the delivery as acknowledged.
    public var isAcknowledged: Bool { self == .granted || self == .alreadyHad }
}

/// Which answers mean what for one role (`responses` of a role section).
///
/// Body rules come first, in order; then the status sets; every other status is ``ResponseMeaning/rejected``.
public struct ResponseClassification: Sendable, Hashable, Decodable {
    /// Statuses meaning ``ResponseMeaning/granted`` (default: 200–206 for the webhook, Apple's rule; 200–299 for
    /// the device roles).
    public var granted: [ClosedRange<Int>]
    /// Statuses meaning ``ResponseMeaning/alreadyHad``.
    public var alreadyHad: [ClosedRange<Int>]
    /// Statuses meaning ``ResponseMeaning/retryLater`` (default: 429 for the device roles, unless `granted` or
    /// `alreadyHad` names it; none for the webhook, whose sender keeps its own schedule).
    public var retryLater: [ClosedRange<Int>]
    /// Overrides by a JSON pointer's value in the body; the first that matches wins.
    public var body: [BodyRule]

    /// One override: `{status: 200, pointer: "/ok", equals: false, means: "rejected"}`.
    public struct BodyRule: Sendable, Hashable, Decodable {
        /// The statuses it applies to (all when absent).
        public var status: [ClosedRange<Int>]?
        /// An RFC 6901 pointer into the answer's JSON.
        public var pointer: String
        /// The value the pointer must designate.
        public var equals: JSONValue
        /// What the answer then means.
        public var means: ResponseMeaning

        /// A rule made in code (the embedded ledger's own answers).
        public init(status: [ClosedRange<Int>]?, pointer: String, equals: JSONValue, means: ResponseMeaning) {
            self.status = status
            self.pointer = pointer
            self.equals = equals
            self.means = means
        }

        /// Strict decoding.
        public init(from decoder: any Decoder) throws {
            let f = try Fields(decoder, allowed: ["status", "pointer", "equals", "means"])
            status = try f.has("status") ? ResponseClassification.statuses(f, "status") : nil
            pointer = try f.text("pointer", default: nil)
            guard pointer.hasPrefix("/") else {
                throw ProfileIssue(path: f.at("pointer"), expected: "a JSON pointer starting with /")
            }
            guard f.has("equals") else {
                throw ProfileIssue(path: f.at("equals"), expected: "the JSON value to compare with (required)")
            }
            equals = try f.required("equals")
            means = ResponseMeaning(
                rawValue: try f.choice("means", ResponseMeaning.allCases.map(\.rawValue), default: nil)
            )!
        }
    }

    /// The default for a role.
    public init(role: RequestRole) {
        granted = role == .webhook ? [200...206] : [200...299]
        alreadyHad = []
        retryLater = role == .webhook ? [] : [429...429]
        body = []
    }

    /// Strict decoding; the role (for the default `granted`) is the enclosing section's key.
    public init(from decoder: any Decoder) throws {
        let f = try Fields(decoder, allowed: ["granted", "alreadyHad", "retryLater", "body"])
        let role = decoder.codingPath.dropLast().last.flatMap { RequestRole(rawValue: $0.stringValue) } ?? .webhook
        let fallback = ResponseClassification(role: role)
        granted = try f.has("granted") ? Self.statuses(f, "granted") : fallback.granted
        alreadyHad = try f.has("alreadyHad") ? Self.statuses(f, "alreadyHad") : []
        retryLater =
            try f.has("retryLater")
            ? Self.statuses(f, "retryLater")
            : fallback.retryLater.filter { [taken = granted + alreadyHad] r in !taken.contains { $0.overlaps(r) } }
        body = try f.value("body", default: [])
        let sets: [(String, [ClosedRange<Int>])] = [
            ("granted", granted), ("alreadyHad", alreadyHad), ("retryLater", retryLater),
        ]
        for (i, (name, ranges)) in sets.enumerated() {
            for (other, otherRanges) in sets[(i + 1)...] {
                if let range = ranges.first(where: { r in otherRanges.contains(where: { $0.overlaps(r) }) }) {
                    throw ProfileIssue(
                        path: f.at(other),
                        expected: "statuses not also in \(name) (\(range.lowerBound)-\(range.upperBound) is in both)"
                    )
                }
            }
        }
    }

    /// The meaning of an answer; the body is parsed only when a body rule applies to its status.
    public func meaning(status: Int, body bytes: [UInt8]) -> ResponseMeaning {
        var document: JSONValue??
        for rule in body where rule.status?.contains(where: { $0.contains(status) }) ?? true {
            if document == nil { document = .some(try? JSONDecoder().decode(JSONValue.self, from: Data(bytes))) }
            if let root = document ?? nil, root.resolve(pointer: rule.pointer) == rule.equals { return rule.means }
        }
        if granted.contains(where: { $0.contains(status) }) { return .granted }
        if alreadyHad.contains(where: { $0.contains(status) }) { return .alreadyHad }
        if retryLater.contains(where: { $0.contains(status) }) { return .retryLater }
        return .rejected
    }

    /// Statuses as integers or `"lo-hi"` strings, 100 to 599.
    static func statuses(_ f: Fields, _ key: String) throws -> [ClosedRange<Int>] {
        let expected = "an array of HTTP statuses (100 to 599) or \"lo-hi\" ranges such as \"200-299\""
        let items: [JSONValue]
        switch try f.optional(key, JSONValue.self) {
        case .array(let list)?: items = list
        case let single?: items = [single]
        case nil: items = []
        }
        return try items.enumerated().map { index, item in
            let path = f.at(key) + "[\(index)]"
            var bounds: [Double] = []
            switch item {
            case .number(let text): bounds = Double(text).map { [$0, $0] } ?? []
            case .string(let text):
                let parts = text.split(separator: "-", omittingEmptySubsequences: false)
                bounds = parts.compactMap { Double($0.trimmingCharacters(in: .whitespaces)) }
                if parts.count == 1 { bounds += bounds }
                if bounds.count != 2 || parts.count > 2 { bounds = [] }
            default: break
            }
            guard bounds.count == 2, bounds.allSatisfy({ $0 == $0.rounded() && (100...599).contains($0) }),
                bounds[0] <= bounds[1]
            else {
                throw ProfileIssue(path: path, expected: expected + ", found \(item.jsonText)")
            }
            return Int(bounds[0])...Int(bounds[1])
        }
    }
}
