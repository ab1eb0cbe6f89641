import Foundation
import Synchronization

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
///
/// Copies share their entries: a refresh (``refresh(with:)``) reaches every part of a run that renders requests
/// with a copy (minting, sending, probing), as a soak's credentials must.
public struct AccountDirectory: Sendable, Hashable {
    /// Fields by normalized token, behind a lock that a refresh takes while requests are rendered.
    private final class Entries: Sendable {
        let fields: Mutex<[String: [String: String]]>
        init(_ fields: [String: [String: String]]) { self.fields = Mutex(fields) }
    }

    private let entries: Entries

    /// An empty directory (no provisioning).
    public init() {
        entries = Entries([:])
    }

    /// A directory from provisioned fields keyed by `appAccountToken` in any case.
    public init(_ fields: [String: [String: String]]) {
        entries = Entries(Self.normalizing(fields))
    }

    private static func normalizing(_ fields: [String: [String: String]]) -> [String: [String: String]] {
        var normalized: [String: [String: String]] = [:]
        for (token, values) in fields { normalized[Self.normalized(token), default: [:]].merge(values) { $1 } }
        return normalized
    }

    /// Takes a later provisioning's fields, for this directory and every copy of it: an account it prints gets
    /// its fields, one it leaves out keeps what it had.
    /// - Parameter fresh: the later provisioning's directory.
    public func refresh(with fresh: AccountDirectory) {
        let update = fresh.snapshot
        entries.fields.withLock { $0.merge(update) { $1 } }
    }

    /// The fields by normalized token, as they are now.
    private var snapshot: [String: [String: String]] { entries.fields.withLock { $0 } }

    public static func == (lhs: AccountDirectory, rhs: AccountDirectory) -> Bool {
        lhs.entries === rhs.entries || lhs.snapshot == rhs.snapshot
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(snapshot)
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
        var fields = entries.fields.withLock { $0[Self.normalized(token)] } ?? [:]
        if fields["id"] == nil { fields["id"] = token }
        return fields
    }

    /// How many accounts have provisioned fields.
    public var count: Int { entries.fields.withLock { $0.count } }

    /// `template` with the account's placeholders substituted: `{appAccountToken}` (and `.lower`, `.upper`) and
    /// `{account.NAME}` (a field it lacks renders empty). Placeholders of a delivery (`{productId}`...) render
    /// empty here.
    public func render(_ template: TemplateString, for token: String, encoding: TemplateString.Encoding) -> String {
        template.render(values(for: token), encoding: encoding)
    }

    /// The values an account contributes to every template.
    public func values(for token: String) -> TemplateValues {
        let key = Self.normalized(token)
        return TemplateValues(appAccountToken: token, account: entries.fields.withLock { $0[key] } ?? [:])
    }
}

extension AccountDirectory: CustomStringConvertible {
    /// `N provisioned accounts`.
    public var description: String { "\(count) provisioned account\(count == 1 ? "" : "s")" }
}
