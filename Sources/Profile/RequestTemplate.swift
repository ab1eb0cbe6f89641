import Foundation
import Primitives

/// The three kinds of request a run sends to a target, each shaped by its own ``RequestTemplate``.
public enum RequestRole: String, Sendable, Hashable, CaseIterable {
    /// App Store → backend: a server notification.
    case webhook
    /// App → backend: a device posting a signed transaction.
    case deviceDelivery
    /// App → backend: a device reporting a purchase outcome (pending, cancelled) that carries no transaction.
    case deviceReport
}

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
    /// Every placeholder the template names, in its URL, headers and body.
    public var placeholders: Set<Placeholder> = []

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
        // The JWS and the receipt are signed with the body, ahead of the schedule; a URL or header cannot carry them.
        let signed: Set<Placeholder> = [.signedPayload, .signedTransaction, .appReceipt]
        if let (path, placeholder) = uses.first(where: { signed.contains($0.placeholder) }) {
            let what = placeholder == .appReceipt ? "app receipt" : "signed payload or transaction"
            throw ProfileIssue(path: path, expected: "the \(what) only in the body")
        }
        if let json: JSONValue = try f.optional("body") {
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
        accountFields = try Self.accountFields(uses, role: role)
        let named = Set(uses.map(\.placeholder))
        placeholders = named
        // A body with the receipt is checked with `verifyReceipt`: its forgeries are forged receipts, not ids.
        pulls =
            role == .deviceDelivery && body != nil && !named.contains(.signedTransaction)
            && !named.contains(.appReceipt)
            && (named.contains(.transactionId) || named.contains(.originalTransactionId))
    }

    /// The `{account.NAME}` fields other than `id` that `uses` name, with the path of their first use, after
    /// checking that each placeholder is one of `role`'s.
    private static func accountFields(
        _ uses: [(path: String, placeholder: Placeholder)],
        role: RequestRole
    ) throws -> [String: String] {
        var fields: [String: String] = [:]
        for (path, placeholder) in uses {
            if let only = placeholder.onlyRole, only != role {
                throw ProfileIssue(
                    path: path,
                    expected: "a placeholder available in \(role.rawValue); {\(Self.name(of: placeholder))} "
                        + "exists only in \(only.rawValue)"
                )
            }
            if placeholder == .appReceipt && role == .webhook {
                throw ProfileIssue(
                    path: path,
                    expected: "a placeholder available in webhook; {appReceipt} exists only in the device roles"
                )
            }
            if case .account(let field) = placeholder, field != "id", fields[field] == nil { fields[field] = path }
        }
        return fields
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
