internal import AppStoreModel
public import Foundation

/// A run profile: what to drive, with which catalog and population, at what rate, with which faults.
///
/// Load one with ``Profile/load(path:variables:)`` or ``Profile/decode(_:file:variables:)``. Every section is validated strictly:
/// an unknown key, a wrong type or an impossible value throws one ``ProfileError`` that names the file, the
/// JSON path and what was expected.
///
/// ```swift
/// let profile = try Profile.load(path: "Profiles/smoke.json5")
/// print(profile.durationSeconds, profile.seed)
/// ```
public struct Profile: Sendable, Hashable {
    /// A short name used in report folder names.
    public var name: String
    /// The seed of every random choice in the run.
    public var seed: UInt64
    /// What the run drives and how it reads state back.
    public var target: Target
    /// Products, groups, prices.
    public var catalog: Catalog
    /// How many accounts and devices.
    public var population: Population
    /// Relative weights of the lifecycle actions started by the schedule.
    public var actionMix: ActionMix
    /// How fast simulated calendar time runs.
    public var timeCompression: TimeCompression
    /// The rate of new actions over the run, segment after segment.
    public var schedule: [RateSegment]
    /// The faults and their probabilities.
    public var faults: Faults
    /// Seconds to wait after the last action before the final probes.
    public var settleSeconds: Double
    /// Pass/fail thresholds such as `"p99 < 250ms"` or `"errors < 1%"`, evaluated by Reporting.
    public var thresholds: [Threshold]

    /// Total seconds of the schedule (the settle time excluded).
    public var durationSeconds: Double { schedule.reduce(0) { $0 + $1.seconds } }

    static let keys = [
        "$schema", "name", "seed", "target", "catalog", "population", "actionMix", "timeCompression", "schedule",
        "faults",
        "settleSeconds", "thresholds",
    ]

    /// Reads and validates a JSON5 profile file, with its `${NAME}` variables substituted.
    /// - Parameters:
    ///   - path: the profile file.
    ///   - variables: the values of `${NAME}` references (`--set` values, then the process environment).
    /// - Throws: ``ProfileUnreadable`` when the file is missing, is a directory or cannot be read;
    ///   ``ProfileError`` naming the file, the path and the expectation when it is not a valid profile.
    public static func load(path: String, variables: ProfileVariables = ProfileVariables()) throws -> Profile {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw ProfileUnreadable(file: path, reason: "no such file")
        }
        guard !isDirectory.boolValue else {
            throw ProfileUnreadable(file: path, reason: "it is a directory, not a profile file")
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ProfileUnreadable(file: path, reason: "permission denied or not a regular file")
        }
        return try decode(data, file: path, variables: variables)
    }

    /// Decodes and validates JSON5 text; `file` is only used in error messages.
    ///
    /// A key given twice in one object is an error (a decoder alone would keep one of the two silently),
    /// and syntax errors name their line and column. `${NAME}` references in string values are substituted
    /// from `variables` before validation (see ``ProfileVariables``).
    /// - Throws: ``ProfileError``.
    public static func decode(
        _ data: Data,
        file: String,
        variables: ProfileVariables = ProfileVariables()
    ) throws -> Profile {
        let scanned = JSON5Scan.firstProblem(in: Array(data))
        if let scanned, scanned.kind == .duplicateKey {
            throw ProfileError(
                file: file,
                path: scanned.path,
                expected: scanned.message,
                line: scanned.line,
                column: scanned.column
            )
        }
        let decoder = JSONDecoder()
        decoder.allowsJSON5 = true
        do {
            return try decoder.decode(Profile.self, from: try substituted(data, variables: variables, decoder: decoder))
        } catch let issue as ProfileIssue {
            throw ProfileError(file: file, path: issue.path, expected: issue.expected)
        } catch DecodingError.dataCorrupted(let context) {
            // The decoder refused the text: the scan says where, in the words of this project.
            if let scanned {
                throw ProfileError(
                    file: file,
                    path: scanned.path,
                    expected: "valid JSON5: \(scanned.message)",
                    line: scanned.line,
                    column: scanned.column
                )
            }
            let detail = (context.underlyingError as? NSError)?.userInfo[NSDebugDescriptionErrorKey] as? String
            throw ProfileError(
                file: file,
                path: jsonPath(context.codingPath),
                expected: "valid JSON5 (\(detail ?? context.debugDescription))"
            )
        } catch {
            throw ProfileError(file: file, path: "", expected: "valid JSON5 (\(error))")
        }
    }

    /// The document with its variables substituted in string values, as JSON; the text itself when it has no
    /// `${` (so a profile without variables decodes exactly as written) or does not parse (the decoder then
    /// reports the syntax error on the original text).
    private static func substituted(
        _ data: Data,
        variables: ProfileVariables,
        decoder: JSONDecoder
    ) throws(ProfileIssue) -> Data {
        guard data.firstRange(of: Data("${".utf8)) != nil,
            let tree = try? decoder.decode(TemplateJSON.self, from: data)
        else { return data }
        return Data(try tree.substituting(variables).jsonText.utf8)
    }
}

extension Profile: Decodable {
    /// Strict decoding; see ``Profile``.
    public init(from decoder: any Decoder) throws {
        let f = try Fields(decoder, allowed: Self.keys)
        name = try f.text("name", default: nil)
        let seed = try f.integer("seed", in: 0...Int64.max, default: nil)
        self.seed = UInt64(seed)
        target = try f.required("target")
        catalog = try f.required("catalog")
        population = try f.required("population")
        actionMix = try f.value("actionMix", default: ActionMix())
        timeCompression = try f.value("timeCompression", default: TimeCompression())
        schedule = try f.required("schedule")
        faults = try f.value("faults", default: Faults())
        settleSeconds = try f.number("settleSeconds", in: 0...86_400, default: 10)
        thresholds = try f.value("thresholds", default: [])
        if schedule.isEmpty {
            throw ProfileIssue(path: f.at("schedule"), expected: "at least one rate segment")
        }
        if actionMix.total <= 0 {
            throw ProfileIssue(path: f.at("actionMix"), expected: "at least one weight above 0")
        }
        let refundsMidStream = (faults.refundMidStream?.probability ?? 0) > 0
        try catalog.checkMix(actionMix, refundsMidStream: refundsMidStream, path: f.at("actionMix"))
        if let forgery = faults.forgery, forgery.kinds(onlineChecks: target.verifierOnlineChecks).isEmpty {
            throw ProfileIssue(
                path: f.at("faults") + ".forgery.kinds",
                expected: "a forgery a verifier with online checks rejects (target.verifierOnlineChecks is true; "
                    + "it accepts \(Faults.forgeriesAcceptedWithOnlineChecks.sorted().joined(separator: " and ")))"
            )
        }
        if let restart = faults.targetRestart, restart.killCommand.isEmpty, !target.embeddedLedger {
            throw ProfileIssue(
                path: f.at("faults") + ".targetRestart.killCommand",
                expected: "kill and start argument vectors for an external target"
            )
        }
    }
}

/// A profile file that is missing or cannot be read (a directory, no permission): not a malformed profile,
/// so a command line can tell the two apart (the README's exit 66 rather than 65).
public struct ProfileUnreadable: Error, Sendable, Hashable, CustomStringConvertible {
    /// The path as given.
    public var file: String
    /// Why it cannot be read.
    public var reason: String

    /// Creates an error.
    public init(file: String, reason: String) {
        self.file = file
        self.reason = reason
    }

    /// `cannot read profile PATH: REASON`, on one line.
    public var description: String { "cannot read profile \(file): \(reason)" }
}

// MARK: - Target

/// The backend under test.
public struct Target: Sendable, Hashable, Decodable {
    /// Start the embedded reference ledger on an ephemeral loopback port instead of driving a URL.
    public var embeddedLedger: Bool
    /// The webhook URL (App Store → backend), as written in `webhookURL` or `webhook.url`; required unless
    /// ``embeddedLedger``.
    public var webhookURL: String?
    /// The device delivery URL (app → backend), as written in `deviceURL` or `deviceDelivery.url`; without it
    /// device deliveries (and the faults that need them) are skipped.
    public var deviceURL: String?
    /// How webhooks are sent and their answers read (`webhook`, or contract v1 at `webhookURL`); nil for the
    /// embedded ledger, whose address is known only when it starts.
    public var webhook: RequestTemplate?
    /// How device deliveries are sent (`deviceDelivery`, or contract v1 at `deviceURL`).
    public var deviceDelivery: RequestTemplate?
    /// How device reports are sent (`deviceReport`, or contract v1 at `deviceURL`); without it reports are
    /// skipped.
    public var deviceReport: RequestTemplate?
    /// How the backend knows the run's accounts (`accounts`); nil when each account is its `appAccountToken`.
    public var accounts: AccountsConfig?
    /// How to read an account's state; without it state invariants are listed as unchecked.
    public var probe: ProbeConfig?
    /// Extra HTTP headers sent with every request.
    public var headers: [String: String]
    /// A PEM file of CA certificates to trust for HTTPS targets.
    public var tlsCAFile: String?
    /// Non-loopback host names the run may contact; all others are refused.
    public var allowedHosts: [String]
    /// The bundle identifier minted into every payload.
    public var bundleId: String
    /// The app's Apple ID, written into every notification's `data` as Apple always does; required when
    /// ``environment`` is `Production` (the target checks it there), `1234567890` otherwise, the same
    /// default as `paystorm mint`.
    public var appAppleId: Int64?
    /// The environment minted into every payload: `Sandbox`, `Production`, `Xcode` or `LocalTesting`.
    public var environment: String
    /// Seconds after its intended send time (waiting for a connection included) before a request counts
    /// as timed out (an indeterminate outcome).
    public var requestTimeoutSeconds: Double
    /// Whether the target verifies with online checks on (Apple's `SignedDataVerifier` with
    /// `enable_online_checks=True`): it then validates the chain at the current time instead of at the
    /// payload's `signedDate`, so it accepts the forgeries in ``Faults/forgeriesAcceptedWithOnlineChecks``,
    /// which the run therefore does not send.
    public var verifierOnlineChecks: Bool
    /// The App Store Server API the run serves for a backend that pulls (`appStoreAPI`); nil: none.
    public var appStoreAPI: AppStoreAPIConfig?

    static let keys = [
        "embeddedLedger", "webhookURL", "deviceURL", "probe", "headers", "tlsCAFile", "allowedHosts", "bundleId",
        "appAppleId", "environment", "requestTimeoutSeconds", "verifierOnlineChecks", "webhook", "deviceDelivery",
        "deviceReport", "accounts", "appStoreAPI",
    ]

    /// Strict decoding.
    public init(from decoder: any Decoder) throws {
        let f = try Fields(decoder, allowed: Self.keys)
        embeddedLedger = try f.value("embeddedLedger", default: false)
        headers = try f.value("headers", default: [:])
        tlsCAFile = try f.optional("tlsCAFile")
        allowedHosts = try f.value("allowedHosts", default: [])
        bundleId = try f.text("bundleId", default: "com.example.paystorm")
        environment = try f.choice(
            "environment",
            Environment.allKnown.map(\.rawValue),
            default: Environment.sandbox.rawValue
        )
        let appAppleId: Int64? = try f.optional("appAppleId")
        requestTimeoutSeconds = try f.number("requestTimeoutSeconds", in: 0.001...600, default: 5)
        verifierOnlineChecks = try f.value("verifierOnlineChecks", default: false)
        if environment == Environment.production.rawValue && appAppleId == nil {
            throw ProfileIssue(
                path: f.at("appAppleId"),
                expected: "an integer app Apple ID when environment is Production"
            )
        }
        // Outside Production nobody checks it, but backends store it: a placeholder beats a missing key.
        self.appAppleId = appAppleId ?? 1_234_567_890
        let webhookShorthand = try Self.url(f, "webhookURL", allowedHosts: allowedHosts)
        let deviceShorthand = try Self.url(f, "deviceURL", allowedHosts: allowedHosts)
        accounts = try f.optional("accounts")
        probe = try f.optional("probe")
        appStoreAPI = try f.optional("appStoreAPI")
        if embeddedLedger && webhookShorthand != nil {
            throw ProfileIssue(path: f.at("webhookURL"), expected: "no webhookURL when embeddedLedger is true")
        }
        if embeddedLedger, let role = RequestRole.allCases.first(where: { f.has($0.rawValue) }) {
            throw ProfileIssue(
                path: f.at(role.rawValue),
                expected: "no \(role.rawValue) section when embeddedLedger is true (the ledger speaks contract v1)"
            )
        }
        if !embeddedLedger && webhookShorthand == nil && !f.has("webhook") {
            throw ProfileIssue(path: f.at("webhookURL"), expected: "an http(s) URL (or set embeddedLedger: true)")
        }
        webhook = try Self.role(.webhook, f, shorthand: (webhookShorthand, "webhookURL"), allowedHosts: allowedHosts)
        deviceDelivery = try Self.role(
            .deviceDelivery,
            f,
            shorthand: (deviceShorthand, "deviceURL"),
            allowedHosts: allowedHosts
        )
        // Reports go where contract v1 sends them (the device URL) unless a section of their own says otherwise.
        deviceReport = try Self.role(
            .deviceReport,
            f,
            shorthand: (deviceShorthand, "deviceURL"),
            allowedHosts: allowedHosts,
            sectionFallbackURL: deviceDelivery?.url.text
        )
        webhookURL = webhook?.url.text
        deviceURL = deviceDelivery?.url.text
        for template in [webhook, deviceDelivery, deviceReport].compactMap({ $0 }) where accounts?.provision == nil {
            if let (field, path) = template.accountFields.min(by: { $0.value < $1.value }) {
                throw ProfileIssue(
                    path: path,
                    expected: "placeholders the run can fill: {account.\(field)} needs target.accounts.provision "
                        + "(only {account.id} has a default)"
                )
            }
        }
        if let probe, let url = probe.url {
            _ = try Self.check(url, path: f.at("probe.url"), allowedHosts: allowedHosts)
        }
    }

    /// A role's template: its section, or contract v1 at the shorthand URL, or nil.
    private static func role(
        _ role: RequestRole,
        _ f: Fields,
        shorthand: (url: String?, key: String),
        allowedHosts: [String],
        sectionFallbackURL: String? = nil
    ) throws -> RequestTemplate? {
        let key = role.rawValue
        guard f.has(key) else {
            guard let url = shorthand.url else { return nil }
            do {
                return try RequestTemplate.contractV1(role, url: url)
            } catch {
                throw ProfileIssue(path: f.at(shorthand.key), expected: error.message)
            }
        }
        let section = try f.container.superDecoder(forKey: AnyKey(stringValue: key))
        let fields = try Fields(section, allowed: RequestTemplate.keys)
        if let url = shorthand.url, fields.has("url"), role != .deviceReport {
            throw ProfileIssue(
                path: fields.at("url"),
                expected: "one URL: \(shorthand.key) \"\(url)\" is the shorthand of \(key).url, give only one"
            )
        }
        let template = try RequestTemplate(fields, role: role, fallbackURL: shorthand.url ?? sectionFallbackURL)
        let urlPath = fields.has("url") ? fields.at("url") : f.at(shorthand.url != nil ? shorthand.key : key)
        // The host must be literal: a placeholder cannot choose where the run sends.
        guard template.origin != nil else {
            throw ProfileIssue(path: urlPath, expected: "a URL whose scheme and host hold no placeholder")
        }
        let sample = template.url.render(TemplateValues(appAccountToken: "x"), encoding: .url)
        _ = try check(sample, path: urlPath, allowedHosts: allowedHosts)
        return template
    }

    private static func url(_ f: Fields, _ key: String, allowedHosts: [String]) throws -> String? {
        guard let text: String = try f.optional(key) else { return nil }
        return try check(text, path: f.at(key), allowedHosts: allowedHosts)
    }

    private static func check(_ text: String, path: String, allowedHosts: [String]) throws -> String {
        // Placeholders (`{appAccountToken}`, `{account.id}`...) stand for path text; the URL around them must parse.
        let probeText =
            (try? TemplateString(text).render(TemplateValues(appAccountToken: "x"), encoding: .url))
            ?? text.replacingOccurrences(of: "{appAccountToken}", with: "x")
        guard let url = URL(string: probeText), let scheme = url.scheme, ["http", "https"].contains(scheme),
            let host = url.host, !host.isEmpty
        else {
            throw ProfileIssue(path: path, expected: "an http:// or https:// URL with a host, found \"\(text)\"")
        }
        let loopback = ["127.0.0.1", "localhost", "::1", "[::1]"]
        if !loopback.contains(host) && !allowedHosts.contains(host) {
            throw ProfileIssue(
                path: path,
                expected: "a loopback host or one listed in target.allowedHosts, found host \"\(host)\""
            )
        }
        return text
    }
}

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
    /// The URL for `http` and `pointer`, containing `{appAccountToken}`.
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

    /// Strict decoding.
    public init(from decoder: any Decoder) throws {
        let f = try Fields(
            decoder,
            allowed: [
                "kind", "url", "command", "pointers", "transform", "timeoutSeconds", "intervalSeconds",
                "sampleAccounts",
            ]
        )
        kind = Kind(rawValue: try f.choice("kind", Kind.allCases.map(\.rawValue), default: nil))!
        url = try f.optional("url")
        command = try f.optional("command")
        pointers = try f.optional("pointers")
        transform = try f.optional("transform")
        timeoutSeconds = try f.number("timeoutSeconds", in: 0.1...3600, default: 30)
        intervalSeconds = try f.number("intervalSeconds", in: 0...3600, default: 2)
        sampleAccounts = Int(try f.integer("sampleAccounts", in: 1...1_000_000, default: 50))
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
            guard let url, Self.namesAccount(url) else {
                throw ProfileIssue(path: f.at("url"), expected: "a URL containing {appAccountToken}")
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

    /// Strict decoding.
    public init(from decoder: any Decoder) throws {
        let f = try Fields(
            decoder,
            allowed: ["entitlements", "productId", "transactionId", "expiresDate", "balances", "grants"]
        )
        entitlements = try Self.pointer(f, "entitlements", default: nil)
        productId = try Self.pointer(f, "productId", default: "/productId")
        transactionId = try f.has("transactionId") ? Self.pointer(f, "transactionId", default: nil) : nil
        expiresDate = try f.has("expiresDate") ? Self.pointer(f, "expiresDate", default: nil) : nil
        balances = try f.has("balances") ? Self.pointer(f, "balances", default: nil) : nil
        grants = try f.has("grants") ? Self.pointer(f, "grants", default: nil) : nil
    }

    private static func pointer(_ f: Fields, _ key: String, default fallback: String?) throws -> String {
        let value = try f.optional(key, String.self) ?? fallback
        guard let value, value.isEmpty || value.hasPrefix("/") else {
            throw ProfileIssue(path: f.at(key), expected: "a JSON pointer starting with /")
        }
        return value
    }
}

// MARK: - Population, mix, time

/// How many accounts and devices the world has.
public struct Population: Sendable, Hashable, Decodable {
    /// Number of accounts, each with its own `appAccountToken`.
    public var accounts: Int
    /// Devices per account (each has its own listener and unfinished queue).
    public var devicesPerAccount: Int
    /// Fraction of accounts that belong to a Family Sharing group with one other account.
    public var familySharingFraction: Double

    /// Strict decoding.
    public init(from decoder: any Decoder) throws {
        let f = try Fields(decoder, allowed: ["accounts", "devicesPerAccount", "familySharingFraction"])
        accounts = Int(try f.integer("accounts", in: 1...100_000_000, default: nil))
        devicesPerAccount = Int(try f.integer("devicesPerAccount", in: 1...16, default: 1))
        familySharingFraction = try f.number("familySharingFraction", in: 0...1, default: 0)
    }

    /// Creates a population.
    public init(accounts: Int, devicesPerAccount: Int = 1, familySharingFraction: Double = 0) {
        self.accounts = accounts
        self.devicesPerAccount = devicesPerAccount
        self.familySharingFraction = familySharingFraction
    }
}

/// Relative weights of the actions the schedule starts. Zero disables an action.
public struct ActionMix: Sendable, Hashable, Decodable {
    /// Buy a consumable (quantity 1–3).
    public var consumable: Double = 3
    /// Buy a non-consumable.
    public var nonConsumable: Double = 2
    /// Subscribe to an auto-renewable subscription (initial buy or resubscribe).
    public var subscribe: Double = 3
    /// Buy a non-renewing subscription.
    public var nonRenewing: Double = 1
    /// Turn auto-renew off (the subscription then expires voluntarily).
    public var cancel: Double = 1
    /// Turn auto-renew back on.
    public var resume: Double = 0.5
    /// Upgrade within a group (immediate).
    public var upgrade: Double = 0.5
    /// Downgrade within a group (at next renewal).
    public var downgrade: Double = 0.5
    /// Refund one earlier purchase.
    public var refund: Double = 0.5
    /// Reverse an earlier refund.
    public var refundReversal: Double = 0.1
    /// Make the next renewal fail (billing retry, grace period).
    public var billingFailure: Double = 0.5
    /// Redeem a promotional offer on an active subscription.
    public var offerRedemption: Double = 0.2
    /// Announce a price increase for an active subscription.
    public var priceIncrease: Double = 0.2
    /// A device reports a purchase outcome (pending or cancelled) that must not grant.
    public var deviceReport: Double = 0.3
    /// Apple extends an active subscription's renewal date (`RENEWAL_EXTENDED`; one in ten fails,
    /// `RENEWAL_EXTENSION`/`FAILURE`).
    public var renewalExtension: Double = 0.1

    static let keys = [
        "consumable", "nonConsumable", "subscribe", "nonRenewing", "cancel", "resume", "upgrade", "downgrade",
        "refund", "refundReversal", "billingFailure", "offerRedemption", "priceIncrease", "deviceReport",
        "renewalExtension",
    ]

    /// The default mix.
    public init() {}

    /// Strict decoding: keys absent from the object weigh 0.
    public init(from decoder: any Decoder) throws {
        let f = try Fields(decoder, allowed: Self.keys)
        func w(_ key: String) throws -> Double { try f.number(key, in: 0...1_000_000, default: 0) }
        consumable = try w("consumable")
        nonConsumable = try w("nonConsumable")
        subscribe = try w("subscribe")
        nonRenewing = try w("nonRenewing")
        cancel = try w("cancel")
        resume = try w("resume")
        upgrade = try w("upgrade")
        downgrade = try w("downgrade")
        refund = try w("refund")
        refundReversal = try w("refundReversal")
        billingFailure = try w("billingFailure")
        offerRedemption = try w("offerRedemption")
        priceIncrease = try w("priceIncrease")
        deviceReport = try w("deviceReport")
        renewalExtension = try w("renewalExtension")
    }

    /// The weights, in the order their fields are declared.
    public var weights: [Double] {
        [
            consumable, nonConsumable, subscribe, nonRenewing, cancel, resume, upgrade, downgrade, refund,
            refundReversal, billingFailure, offerRedemption, priceIncrease, deviceReport, renewalExtension,
        ]
    }

    /// The sum of the weights.
    public var total: Double { weights.reduce(0, +) }
}

/// How fast simulated calendar time runs, as in the sandbox (a month can last seconds).
public struct TimeCompression: Sendable, Hashable, Decodable {
    /// Real seconds that one simulated 30-day month lasts.
    public var secondsPerMonth: Double = 60

    /// The default: a month lasts 60 seconds.
    public init() {}

    /// Strict decoding.
    public init(from decoder: any Decoder) throws {
        let f = try Fields(decoder, allowed: ["secondsPerMonth"])
        secondsPerMonth = try f.number("secondsPerMonth", in: 0.1...2_592_000, default: 60)
    }

    /// Real seconds for a number of simulated days.
    public func seconds(days: Double) -> Double { days * secondsPerMonth / 30 }
}

// MARK: - Thresholds

/// One threshold such as `p99 < 250ms` or `webhook.errorRate < 1%`, kept as written.
///
/// The grammar (metrics, kinds, units, operators) belongs to the load engine, which evaluates thresholds;
/// a run parses each one with it before sending anything and names `thresholds[i]` on an error.
public struct Threshold: Sendable, Hashable, Decodable, CustomStringConvertible {
    /// The text as written.
    public var text: String

    /// Keeps a threshold's text.
    public init(_ text: String) {
        self.text = text
    }

    /// Decodes from a non-empty string.
    public init(from decoder: any Decoder) throws {
        let path = jsonPath(decoder.codingPath)
        guard let text = try? decoder.singleValueContainer().decode(String.self),
            !text.trimmingCharacters(in: .whitespaces).isEmpty
        else {
            throw ProfileIssue(path: path, expected: "a threshold string such as \"p99 < 250ms\"")
        }
        self.text = text
    }

    /// The text as written.
    public var description: String { text }
}
