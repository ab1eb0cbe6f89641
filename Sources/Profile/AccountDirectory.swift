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

    /// The tokens the backend dictated (a provisioning line's `dictatedToken`), keyed by the token provisioning
    /// was given in ``normalized(_:)`` form; the account's fields are keyed by the dictated token.
    public let dictatedTokens: [String: String]

    /// An empty directory (no provisioning).
    public init() {
        entries = Entries([:])
        dictatedTokens = [:]
    }

    /// A directory from provisioned fields keyed by `appAccountToken` in any case.
    /// - Parameters:
    ///   - fields: each account's fields, keyed by the token it is minted with (a dictated one where there is
    ///     one).
    ///   - dictatedTokens: the tokens the backend dictated, keyed by the token provisioning was given.
    public init(_ fields: [String: [String: String]], dictatedTokens: [String: String] = [:]) {
        entries = Entries(Self.normalizing(fields))
        self.dictatedTokens = Dictionary(dictatedTokens.map { (Self.normalized($0.key), $0.value) }) { $1 }
    }

    /// Why a later provisioning cannot be taken: it dictates another token for an account it prints (the world
    /// mints with the first for the whole run); nil when it can.
    /// - Parameter fresh: the later provisioning's directory.
    public func changedToken(in fresh: AccountDirectory) -> String? {
        for (given, token) in fresh.dictatedTokens
        where dictatedTokens[given].map({ !Self.sameAccount($0, token) }) ?? true {
            return "it now dictates the token \(token) for the account it was given as \(given)"
                + (dictatedTokens[given].map { ", which the run mints with \($0)" } ?? ", which the run mints as given")
        }
        let printed = fresh.snapshot
        for (given, token) in dictatedTokens where fresh.dictatedTokens[given] == nil && printed[given] != nil {
            return "it no longer dictates the token \(token) for the account it was given as \(given)"
        }
        return nil
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
        lhs.dictatedTokens == rhs.dictatedTokens && (lhs.entries === rhs.entries || lhs.snapshot == rhs.snapshot)
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(snapshot)
        hasher.combine(dictatedTokens)
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
