import Foundation

/// How a run reads what the target granted to an account.
public struct ProbeConfig: Sendable, Hashable, Decodable {
    /// The probe kinds.
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        /// `GET url` with `{appAccountToken}` substituted; the body is the contract's normalized JSON.
        case http
        /// `GET url` on the backend's own endpoint; ``ProbeConfig/pointers`` map its JSON onto the contract.
        case pointer
        /// Runs ``ProbeConfig/command`` once per account (with `{appAccountToken}` substituted); stdout is
        /// the normalized JSON.
        case command
        /// Runs ``ProbeConfig/command`` once; stdout is JSON lines, one account per line with an
        /// `appAccountToken` field.
        case bulk
    }
    /// Which kind of probe.
    public var kind: Kind
    /// The URL for `http` and `pointer`, naming the account: `{appAccountToken}` or `{account.id}`.
    public var url: String?
    /// The argument vector for `command` and `bulk` (no shell).
    public var command: [String]?
    /// The JSON-pointer mapping for `pointer`.
    public var pointers: PointerMapping?
    /// For `http`: an argument vector (no shell) that gets the account's HTTP body on stdin and prints the
    /// contract JSON on stdout, such as `["jq", "-c", "..."]`.
    public var transform: [String]?
    /// Seconds a probe command (`command`, `bulk`, `transform`) may run before it is killed and the accounts
    /// it was reading are unknown.
    public var timeoutSeconds: Double
    /// Seconds between safety probe rounds during the run (0 = only the final probe). Rounds never overlap.
    public var intervalSeconds: Double
    /// How many accounts a round of a per-account `command` probe reads at most; the rest wait for the next
    /// round. (A `bulk` round reads every pending account with one run.)
    public var sampleAccounts: Int
    /// The share of accounts (0 to 1, drawn from the seed) whose subscription state changes (renewals, expiries,
    /// grace, billing recovery, upgrades, and each of them reordered or retried) also get a safety probe during
    /// the run, so a regression that a later event repairs is seen while it lasts.
    public var windowShare: Double
    /// Real seconds a backend keeps a subscription entitled past its expiry (a renewal-latency buffer it
    /// declares): an entitlement within them is no wrong subscription state. 0 (the default) allows none.
    public var expiryGraceSeconds: Double
    /// For `http` and `pointer`: headers of each account's probe request, merged over `target.headers` (the
    /// account's own bearer token, say: `{account.token}`), with the account's placeholders only.
    public var headers: [RequestTemplate.Header]

    /// The keys of `target.probe`.
    public static let keys = [
        "kind", "url", "command", "pointers", "transform", "timeoutSeconds", "intervalSeconds", "sampleAccounts",
        "headers", "windowShare", "expiryGraceSeconds",
    ]

    /// Strict decoding.
    public init(from decoder: any Decoder) throws {
        let f = try Fields(decoder, allowed: Self.keys)
        kind = Kind(rawValue: try f.choice("kind", Kind.allCases.map(\.rawValue), default: nil))!
        url = try f.optional("url")
        command = try f.optional("command")
        pointers = try f.optional("pointers")
        transform = try f.optional("transform")
        timeoutSeconds = try f.number("timeoutSeconds", in: 0.1...3600, default: 30)
        intervalSeconds = try f.number("intervalSeconds", in: 0...3600, default: 2)
        sampleAccounts = Int(try f.integer("sampleAccounts", in: 1...1_000_000, default: 50))
        windowShare = try f.number("windowShare", in: 0...1, default: Self.defaultWindowShare)
        expiryGraceSeconds = try f.number("expiryGraceSeconds", in: 0...31_536_000, default: 0)
        headers = try Self.headers(f, kind: kind)
        if let transform {
            guard kind == .http else {
                throw ProfileIssue(path: f.at("transform"), expected: "no transform: it applies to kind http only")
            }
            guard !transform.isEmpty, !transform[0].isEmpty else {
                throw ProfileIssue(path: f.at("transform"), expected: "a non-empty argument array")
            }
        }
        switch kind {
        case .http, .pointer:
            // A backend keyed by its own user ids names the account by the id provisioning gave it.
            guard let url, Self.namesAccount(url) || url.contains("{account.id}") else {
                throw ProfileIssue(
                    path: f.at("url"),
                    expected: "a URL naming the account: {appAccountToken} (.lower, .upper) or {account.id}"
                )
            }
            if kind == .pointer && pointers == nil {
                throw ProfileIssue(path: f.at("pointers"), expected: "a JSON-pointer mapping for kind pointer")
            }
        case .command, .bulk:
            guard let command, !command.isEmpty, !command[0].isEmpty else {
                throw ProfileIssue(path: f.at("command"), expected: "a non-empty argument array")
            }
            if kind == .command && !command.contains(where: Self.namesAccount) {
                throw ProfileIssue(path: f.at("command"), expected: "an argument containing {appAccountToken}")
            }
        }
    }
}

extension ProbeConfig {
    /// The share of accounts whose subscription state changes get a safety probe, unless the profile says.
    public static let defaultWindowShare = 0.1

    /// The account fields (`{account.NAME}`, `id` aside) the probe's headers use, each with its path, so that the
    /// target can ask for the provisioning that fills them.
    public var accountFields: [String: String] {
        var fields: [String: String] = [:]
        for header in headers {
            for case .account(let field) in header.value.placeholders where field != "id" && fields[field] == nil {
                fields[field] = "target.probe.headers.\(header.name)"
            }
        }
        return fields
    }

    /// The probe's headers: names of token characters, values without control characters and with the account's placeholders only.
    private static func headers(_ f: Fields, kind: Kind) throws -> [RequestTemplate.Header] {
        let values = try f.headers()
        guard !values.isEmpty else { return [] }
        guard kind == .http || kind == .pointer else {
            throw ProfileIssue(path: f.at("headers"), expected: "no headers: they apply to kinds http and pointer")
        }
        return try values.keys.sorted().map { name in
            let path = f.at("headers.\(name)")
            let value: TemplateString
            do throws(TemplateError) {
                value = try TemplateString(values[name]!)
            } catch {
                throw ProfileIssue(path: path, expected: error.message)
            }
            for placeholder in value.placeholders {
                switch placeholder {
                case .appAccountToken, .appAccountTokenLower, .appAccountTokenUpper, .account: continue
                default:
                    throw ProfileIssue(
                        path: path,
                        expected: "the account's placeholders only ({appAccountToken}, {account.NAME}): a probe "
                            + "reads an account, not a delivery"
                    )
                }
            }
            return RequestTemplate.Header(name: name, value: value)
        }
    }

    private static let accountPlaceholders = [
        "{appAccountToken}", "{appAccountToken.lower}", "{appAccountToken.upper}",
    ]

    /// Whether a probe URL or argument names the account (`{appAccountToken}`, or its `.lower` or `.upper`
    /// form, for backends that store UUIDs in one case).
    static func namesAccount(_ text: String) -> Bool { accountPlaceholders.contains { text.contains($0) } }

    /// `text` with the account's placeholders replaced by `appAccountToken` as minted, lowercased or uppercased.
    public static func substitute(account appAccountToken: String, in text: String) -> String {
        text.replacingOccurrences(of: "{appAccountToken}", with: appAccountToken)
            .replacingOccurrences(of: "{appAccountToken.lower}", with: appAccountToken.lowercased())
            .replacingOccurrences(of: "{appAccountToken.upper}", with: appAccountToken.uppercased())
    }
}

/// JSON pointers (RFC 6901) from a backend's own account JSON onto the probe contract.
public struct PointerMapping: Sendable, Hashable, Decodable {
    /// Pointer to the array of entitlements.
    public var entitlements: String
    /// Pointer, relative to one entitlement, to its product identifier.
    public var productId: String
    /// Pointer, relative to one entitlement, to its transaction identifier.
    public var transactionId: String?
    /// Pointer, relative to one entitlement, to its expiry (integer milliseconds).
    public var expiresDate: String?
    /// Pointer to an object of consumable balances keyed by product identifier.
    public var balances: String?
    /// Pointer to an array of `{transactionId, count}` grants.
    public var grants: String?
    /// Pointer to an array of `{transactionId, count}` refunds applied.
    public var refunds: String?

    /// Strict decoding.
    public init(from decoder: any Decoder) throws {
        let f = try Fields(
            decoder,
            allowed: ["entitlements", "productId", "transactionId", "expiresDate", "balances", "grants", "refunds"]
        )
        entitlements = try Self.pointer(f, "entitlements", default: nil)
        productId = try Self.pointer(f, "productId", default: "/productId")
        transactionId = try f.has("transactionId") ? Self.pointer(f, "transactionId", default: nil) : nil
        expiresDate = try f.has("expiresDate") ? Self.pointer(f, "expiresDate", default: nil) : nil
        balances = try f.has("balances") ? Self.pointer(f, "balances", default: nil) : nil
        grants = try f.has("grants") ? Self.pointer(f, "grants", default: nil) : nil
        refunds = try f.has("refunds") ? Self.pointer(f, "refunds", default: nil) : nil
    }

    private static func pointer(_ f: Fields, _ key: String, default fallback: String?) throws -> String {
        let value = try f.optional(key, String.self) ?? fallback
        guard let value, value.isEmpty || value.hasPrefix("/") else {
            throw ProfileIssue(path: f.at(key), expected: "a JSON pointer starting with /")
        }
        return value
    }
}
