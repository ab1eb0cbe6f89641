public import AppStoreModel
import Foundation

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
    public var environment: Environment
    /// Seconds after its intended send time (waiting for a connection included) before a request counts
    /// as timed out (an indeterminate outcome).
    public var requestTimeoutSeconds: Double
    /// Connections the run keeps to each host (HTTP/1.1; over HTTP/2 each carries up to 100 streams). With
    /// every one busy the next deliveries wait inside PayStorm, so a slow target needs rate × latency of them
    /// (Little's law) to be driven at the schedule's rate; the report says when deliveries waited.
    public var connections: Int
    /// Whether the target verifies with online checks on (Apple's `SignedDataVerifier` with
    /// `enable_online_checks=True`): it then validates the chain at the current time instead of at the
    /// payload's `signedDate`, so it accepts the forgeries in ``Faults/forgeriesAcceptedWithOnlineChecks``,
    /// which the run therefore does not send.
    public var verifierOnlineChecks: Bool
    /// The App Store Server API the run serves for a backend that pulls (`appStoreAPI`); nil: none.
    public var appStoreAPI: AppStoreAPIConfig?
    /// The command each rendered request of its roles goes through before it is sent (`requestHook`); nil: none.
    public var requestHook: RequestHookConfig?

    static let keys = [
        "embeddedLedger", "webhookURL", "deviceURL", "probe", "headers", "tlsCAFile", "allowedHosts", "bundleId",
        "appAppleId", "environment", "requestTimeoutSeconds", "connections", "verifierOnlineChecks", "webhook",
        "deviceDelivery", "deviceReport", "accounts", "appStoreAPI", "requestHook",
    ]

    /// Strict decoding.
    public init(from decoder: any Decoder) throws {
        let f = try Fields(decoder, allowed: Self.keys)
        embeddedLedger = try f.value("embeddedLedger", default: false)
        headers = try f.headers()
        try Self.refusePlaceholders(in: headers, f)
        tlsCAFile = try f.optional("tlsCAFile")
        allowedHosts = try f.value("allowedHosts", default: [])
        bundleId = try f.text("bundleId", default: "com.example.paystorm")
        environment = Environment(
            rawValue: try f.choice(
                "environment",
                Environment.allKnown.map(\.rawValue),
                default: Environment.sandbox.rawValue
            )
        )
        let appAppleId: Int64? = try f.optional("appAppleId")
        requestTimeoutSeconds = try f.number("requestTimeoutSeconds", in: 0.001...600, default: 5)
        connections = Int(try f.integer("connections", in: 1...1024, default: 32))
        verifierOnlineChecks = try f.value("verifierOnlineChecks", default: false)
        self.appAppleId = try Self.appAppleId(appAppleId, environment: environment, f)
        let webhookShorthand = try Self.url(f, "webhookURL", allowedHosts: allowedHosts)
        let deviceShorthand = try Self.url(f, "deviceURL", allowedHosts: allowedHosts)
        accounts = try f.optional("accounts")
        probe = try f.optional("probe")
        appStoreAPI = try f.optional("appStoreAPI")
        requestHook = try f.optional("requestHook")
        try Self.checkWhereWebhooksGo(f, embeddedLedger: embeddedLedger, webhookShorthand: webhookShorthand)
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
        try checkAccountFieldsCanBeFilled()
        if let probe, let url = probe.url {
            _ = try Self.check(url, path: f.at("probe.url"), allowedHosts: allowedHosts)
        }
    }

    /// `target.headers` go as written on every request of every role (webhooks from the App Store among them),
    /// so a placeholder there would reach the backend literally: the role headers are where placeholders render.
    private static func refusePlaceholders(in headers: [String: String], _ f: Fields) throws {
        for name in headers.keys.sorted() {
            guard let value = headers[name], let template = try? TemplateString(value),
                !template.placeholders.isEmpty
            else { continue }
            throw ProfileIssue(
                path: f.at("headers.\(name)"),
                expected: "a value sent as written, found \"\(value)\": target.headers are "
                    + "not rendered; put this header in the role's headers (target.deviceDelivery.headers, "
                    + "target.deviceReport.headers, target.webhook.headers, target.probe.headers), rendered per request"
            )
        }
    }

    /// The app Apple ID: required in Production. Outside Production nobody checks it, but backends store it: a
    /// placeholder beats a missing key.
    private static func appAppleId(_ given: Int64?, environment: Environment, _ f: Fields) throws -> Int64 {
        if environment == .production && given == nil {
            throw ProfileIssue(
                path: f.at("appAppleId"),
                expected: "an integer app Apple ID when environment is Production"
            )
        }
        return given ?? 1_234_567_890
    }

    /// Webhooks go to the embedded ledger (then no URL nor role section of their own) or to a URL.
    private static func checkWhereWebhooksGo(_ f: Fields, embeddedLedger: Bool, webhookShorthand: String?) throws {
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
    }

    /// Every `{account.FIELD}` placeholder but `{account.id}` needs provisioning to fill it.
    private func checkAccountFieldsCanBeFilled() throws {
        let fieldsUsed =
            [webhook, deviceDelivery, deviceReport].compactMap { $0?.accountFields } + [
                probe?.accountFields ?? [:]
            ]
        for fields in fieldsUsed where accounts?.provision == nil {
            if let (field, path) = fields.min(by: { $0.value < $1.value }) {
                throw ProfileIssue(
                    path: path,
                    expected: "placeholders the run can fill: {account.\(field)} needs target.accounts.provision "
                        + "(only {account.id} has a default)"
                )
            }
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
        let probeText: String
        do {
            probeText = try TemplateString(text).render(TemplateValues(appAccountToken: "x"), encoding: .url)
        } catch {
            throw ProfileIssue(path: path, expected: error.message)
        }
        if let problem = TargetURL.problem(probeText) {
            throw ProfileIssue(path: path, expected: problem)
        }
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
