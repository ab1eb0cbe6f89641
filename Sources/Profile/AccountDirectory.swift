import Foundation

/// Each account's identity in the backend: its `id` and any other fields the provisioning command printed (a
/// bearer token, say), keyed by `appAccountToken` compared case-insensitively.
///
/// Without provisioning the directory is empty and every account is its own `appAccountToken`
/// (`{account.id}` renders the token as minted). Probes render their URL or arguments with it too:
///
/// ```swift
/// let url = try TemplateString("http://127.0.0.1:8000/api/v1/users/{account.id}/wallet")
/// let text = directory.render(url, for: token, encoding: .url)
/// ```
public struct AccountDirectory: Sendable, Hashable {
    /// Fields by normalized token.
    private var entries: [String: [String: String]]

    /// An empty directory (no provisioning).
    public init() {
        entries = [:]
    }

    /// A directory from provisioned fields keyed by `appAccountToken` in any case.
    public init(_ fields: [String: [String: String]]) {
        entries = [:]
        for (token, values) in fields { entries[Self.normalized(token), default: [:]].merge(values) { $1 } }
    }

    /// How tokens are compared: UUIDs in any case are the same account (PayStorm mints uppercase ones, many
    /// backends store lowercase ones).
    public static func normalized(_ token: String) -> String { token.uppercased() }

    /// Whether two `appAccountToken`s name the same account.
    public static func sameAccount(_ a: String, _ b: String) -> Bool {
        a.caseInsensitiveCompare(b) == .orderedSame
    }

    /// The provisioned fields of an account (empty when it was not provisioned); `id` is always present,
    /// defaulting to the token itself.
    public func fields(of token: String) -> [String: String] {
        var fields = entries[Self.normalized(token)] ?? [:]
        if fields["id"] == nil { fields["id"] = token }
        return fields
    }

    /// How many accounts have provisioned fields.
    public var count: Int { entries.count }

    /// `template` with the account's placeholders substituted: `{appAccountToken}` (and `.lower`, `.upper`) and
    /// `{account.NAME}` (a field it lacks renders empty). Placeholders of a delivery (`{productId}`...) render
    /// empty here.
    public func render(_ template: TemplateString, for token: String, encoding: TemplateString.Encoding) -> String {
        template.render(values(for: token), encoding: encoding)
    }

    /// The values an account contributes to every template.
    public func values(for token: String) -> TemplateValues {
        TemplateValues(appAccountToken: token, account: entries[Self.normalized(token)] ?? [:])
    }
}

extension AccountDirectory: CustomStringConvertible {
    /// `N provisioned accounts`.
    public var description: String { "\(count) provisioned account\(count == 1 ? "" : "s")" }
}
