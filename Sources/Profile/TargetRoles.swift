import Foundation

/// How one role's requests are shaped and its answers read: profile `target.webhook`, `target.deviceDelivery`,
/// `target.deviceReport`.
///
/// ```json5
/// deviceDelivery: {
///   url: "http://127.0.0.1:8000/api/v1/purchases/verify",
///   body: { jws: "{signedTransaction}", userId: "{account.id}" },
///   responses: { granted: ["200-299"], alreadyHad: [409] },
/// }
/// ```
public struct RequestTemplate: Sendable, Hashable {
    /// The role this template shapes.
    public var role: RequestRole
    /// The HTTP method, as written (default `POST`).
    public var method: String
    /// The URL; substituted values are percent-encoded.
    public var url: TemplateString
    /// Headers of this role, merged over `target.headers` (names compared case-insensitively).
    public var headers: [Header]
    /// The body, or nil for contract v1's body of the role.
    public var body: BodyTemplate?
    /// How answers are classified.
    public var responses: ResponseClassification
    /// `{purchaseResult}`'s value map (device report); a result not in it is sent as it is.
    public var purchaseResult: [String: String]
    /// `{account.NAME}` fields other than `id` that the template uses, with the path of their first use.
    public var accountFields: [String: String]
    /// Whether this device delivery pulls: its body names the transaction by `{transactionId}` or
    /// `{originalTransactionId}` and carries no `{signedTransaction}`, so the backend must ask the App Store
    /// Server API what was bought (nothing is minted for it, and its forgeries are made-up or other accounts' ids).
    public var pulls = false

    /// One header whose value may hold placeholders.
    public struct Header: Sendable, Hashable {
        /// The header name.
        public var name: String
        /// The value template.
        public var value: TemplateString

        /// Creates a header.
        public init(name: String, value: TemplateString) {
            self.name = name
            self.value = value
        }
    }

    static let keys = ["method", "url", "headers", "body", "responses", "purchaseResult"]

    /// Contract v1's request for `role` at `url` (the `webhookURL`/`deviceURL` shorthands, the embedded ledger).
    /// - Throws: ``TemplateError`` when the URL names an unknown placeholder.
    public static func contractV1(_ role: RequestRole, url: String) throws(TemplateError) -> RequestTemplate {
        RequestTemplate(
            role: role,
            method: "POST",
            url: try TemplateString(url),
            headers: [],
            body: nil,
            responses: ResponseClassification(role: role),
            purchaseResult: [:],
            accountFields: [:]
        )
    }

    init(
        role: RequestRole,
        method: String,
        url: TemplateString,
        headers: [Header],
        body: BodyTemplate?,
        responses: ResponseClassification,
        purchaseResult: [String: String],
        accountFields: [String: String]
    ) {
        self.role = role
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.responses = responses
        self.purchaseResult = purchaseResult
        self.accountFields = accountFields
    }

    /// Strict decoding of a role section; `url` may be absent only when `fallbackURL` is given (a shorthand).
    init(_ f: Fields, role: RequestRole, fallbackURL: String?) throws {
        self.role = role
        method = try f.text("method", default: "POST")
        guard method.utf8.allSatisfy({ (65...90).contains($0) || (97...122).contains($0) }) else {
            throw ProfileIssue(
                path: f.at("method"),
                expected: "an HTTP method such as POST or PUT, found \"\(method)\""
            )
        }
        var uses: [(path: String, placeholder: Placeholder)] = []
        func compile(_ text: String, _ path: String) throws -> TemplateString {
            do {
                let template = try TemplateString(text)
                uses += template.placeholders.map { (path, $0) }
                return template
            } catch {
                throw ProfileIssue(path: path, expected: error.message)
            }
        }
        guard let urlText = try f.optional("url", String.self) ?? fallbackURL else {
            throw ProfileIssue(path: f.at("url"), expected: "an http(s) URL (this key is required)")
        }
        url = try compile(urlText, f.at("url"))
        let headerValues = try f.headers()
        headers = try headerValues.keys.sorted().map { name in
            Header(name: name, value: try compile(headerValues[name]!, f.at("headers.\(name)")))
        }
        // The JWS is rendered with the body, ahead of the schedule; a URL or header cannot carry it.
        if let (path, _) = uses.first(where: { [.signedPayload, .signedTransaction].contains($0.placeholder) }) {
            throw ProfileIssue(path: path, expected: "the signed payload or transaction only in the body")
        }
        if let json: TemplateJSON = try f.optional("body") {
            let compiled = try BodyTemplate(json, path: f.at("body"))
            uses += compiled.uses
            body = compiled
        } else {
            body = nil
        }
        responses = try f.optional("responses") ?? ResponseClassification(role: role)
        if f.has("purchaseResult") && role != .deviceReport {
            throw ProfileIssue(path: f.at("purchaseResult"), expected: "no purchaseResult map outside deviceReport")
        }
        purchaseResult = try f.value("purchaseResult", default: [:])
        var fields: [String: String] = [:]
        for (path, placeholder) in uses {
            if let only = placeholder.onlyRole, only != role {
                throw ProfileIssue(
                    path: path,
                    expected: "a placeholder available in \(role.rawValue); {\(Self.name(of: placeholder))} "
                        + "exists only in \(only.rawValue)"
                )
            }
            if case .account(let field) = placeholder, field != "id", fields[field] == nil { fields[field] = path }
        }
        accountFields = fields
        let named = Set(uses.map(\.placeholder))
        pulls =
            role == .deviceDelivery && body != nil && !named.contains(.signedTransaction)
            && (named.contains(.transactionId) || named.contains(.originalTransactionId))
    }

    static func name(of placeholder: Placeholder) -> String {
        switch placeholder {
        case .signedPayload: "signedPayload"
        case .signedTransaction: "signedTransaction"
        case .purchaseResult: "purchaseResult"
        default: "\(placeholder)"
        }
    }

    /// `scheme://host[:port]/`: where the target listens, without anything a placeholder fills; nil when a
    /// placeholder is part of the scheme or host.
    public var origin: String? {
        let text = url.literalPrefix
        guard let schemeEnd = text.range(of: "://") else { return nil }
        let rest = text[schemeEnd.upperBound...]
        guard let hostEnd = rest.firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) else {
            // No path yet: the host is whole only when nothing follows the literal text.
            return url.placeholders.isEmpty ? text + "/" : nil
        }
        return String(text[..<hostEnd]) + "/"
    }
}

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
        public var equals: TemplateJSON
        /// What the answer then means.
        public var means: ResponseMeaning

        /// A rule made in code (the embedded ledger's own answers).
        public init(status: [ClosedRange<Int>]?, pointer: String, equals: TemplateJSON, means: ResponseMeaning) {
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
        var document: TemplateJSON??
        for rule in body where rule.status?.contains(where: { $0.contains(status) }) ?? true {
            if document == nil { document = .some(try? JSONDecoder().decode(TemplateJSON.self, from: Data(bytes))) }
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
        let items: [TemplateJSON]
        switch try f.optional(key, TemplateJSON.self) {
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

/// Profile `target.accounts`: how the backend knows the run's accounts.
///
/// ```json5
/// accounts: { provision: ["python3", "provision.py", "--db", "${DB}"], timeoutSeconds: 60 }
/// ```
public struct AccountsConfig: Sendable, Hashable, Decodable {
    /// The argument vector run once before traffic (no shell): one `{"appAccountToken"}` JSON line per account
    /// on its standard input, one `{"appAccountToken", "id", ...}` line per account on its standard output.
    public var provision: [String]?
    /// Seconds the command may take.
    public var timeoutSeconds: Double
    /// Seconds between two runs of the command while the run lasts, so that credentials it prints (a bearer
    /// token that expires in an hour, say) stay fresh through a soak; nil runs it once. The command must be
    /// idempotent: the same accounts, fresh fields.
    public var refreshSeconds: Double?

    /// The keys of `target.accounts`.
    public static let keys = ["provision", "timeoutSeconds", "refreshSeconds"]

    /// Strict decoding.
    public init(from decoder: any Decoder) throws {
        let f = try Fields(decoder, allowed: Self.keys)
        provision = try f.optional("provision")
        if let provision, provision.first?.isEmpty ?? true {
            throw ProfileIssue(path: f.at("provision"), expected: "a non-empty argument array")
        }
        timeoutSeconds = try f.number("timeoutSeconds", in: 0.1...86_400, default: 60)
        if f.has("refreshSeconds") {
            guard provision != nil else {
                throw ProfileIssue(
                    path: f.at("refreshSeconds"),
                    expected: "no refreshSeconds without target.accounts.provision (the command a refresh runs)"
                )
            }
            refreshSeconds = try f.number("refreshSeconds", in: 1...86_400, default: nil)
        }
    }
}
