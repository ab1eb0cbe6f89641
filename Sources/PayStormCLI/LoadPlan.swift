import Foundation
import Load
import PayStorm
import RunControl

import enum Profile.HeaderField
import enum Profile.TargetURL

/// `paystorm load`'s options as given on the command line, before any of them is checked.
struct LoadOptions {
    var url: String
    var rate: Double?
    var durationText: String?
    var scheduleText: String?
    var arrivalsText: String
    var seed: Int
    var users: Int?
    var thinkText: String
    var headerTexts: [String]
    var bodyFile: String?
    var kind: String
    var connections: Int
    var maxInFlight: Int
    var timeoutText: String
    var connectTimeoutText: String
    var http2: Bool
    var libcurlTransfers: Bool
    var caFile: String?
    var allowedHosts: [String]
    var outDirectory: String?
    var thresholdTexts: [String]
    var quiet: Bool
    var method: String?

    /// Reads every option of the command, with its default, and refuses anything left over.
    init(parsing arguments: inout Arguments) throws {
        guard let url = try arguments.option("--url") else { throw CLIError(.usage, "--url is required") }
        self.url = url
        rate = try arguments.double("--rate")
        durationText = try arguments.option("--duration")
        scheduleText = try arguments.option("--schedule")
        arrivalsText = try arguments.option("--arrivals") ?? "uniform"
        seed = try arguments.int("--seed") ?? 1
        users = try arguments.int("--users")
        thinkText = try arguments.option("--think") ?? "0s"
        headerTexts = try arguments.options("--header")
        bodyFile = try arguments.option("--body-file")
        kind = try arguments.option("--kind") ?? "default"
        connections = try arguments.int("--connections") ?? 64
        maxInFlight = try arguments.int("--max-in-flight") ?? 4096
        timeoutText = try arguments.option("--timeout") ?? "30s"
        connectTimeoutText = try arguments.option("--connect-timeout") ?? "5s"
        http2 = arguments.flag("--http2")
        libcurlTransfers = arguments.flag("--libcurl-transfers")
        caFile = try arguments.option("--ca-file")
        allowedHosts = try arguments.options("--allow-host")
        outDirectory = try arguments.option("--out")
        thresholdTexts = try arguments.options("--threshold")
        quiet = arguments.flag("--quiet")
        method = try arguments.option("--method")
        try arguments.finish()
    }
}

/// What `paystorm load` will do, every option checked: the mode, the one request it repeats, the thresholds
/// and the engine's settings. Checks run in the order of the options' help, so the first problem is the one
/// named.
struct LoadPlan {
    var url: String
    var arrivalsText: String
    var seed: Int
    var mode: LoadMode
    /// How long the run is meant to last, for the status line's progress.
    var planned: Duration
    var kind: String
    var method: String
    var headers: [(name: String, value: String)]
    var body: [UInt8]
    var thresholds: [Threshold]
    var configuration: LoadEngineConfiguration
    var outDirectory: String?
    var quiet: Bool

    /// Checks the options.
    /// - Throws: ``CLIError`` (usage, or no input for an unreadable body file), or ``LoadConfigurationError``
    ///   for a bad duration, schedule or threshold, which the command reports as a usage error.
    init(_ options: LoadOptions) throws {
        url = options.url
        try Self.checkHost(of: options.url, allowed: options.allowedHosts)
        arrivalsText = options.arrivalsText
        seed = options.seed
        (mode, planned) = try Self.mode(options, arrivals: try Self.arrivals(options.arrivalsText, seed: options.seed))
        guard options.connections >= 1 else { throw CLIError(.usage, "--connections must be at least 1") }
        guard options.maxInFlight >= 1 else { throw CLIError(.usage, "--max-in-flight must be at least 1") }
        headers = try options.headerTexts.map(Self.header)
        var method = options.method
        body = []
        if let bodyFile = options.bodyFile {
            guard let data = FileManager.default.contents(atPath: bodyFile) else {
                throw CLIError(.noInput, "cannot read the body file \(bodyFile)")
            }
            body = Array(data)
            if method == nil { method = "POST" }
        }
        self.method = method ?? "GET"
        kind = options.kind
        // Every request of this command carries the one --kind label, so that is the only kind a threshold
        // may name.
        thresholds = try options.thresholdTexts.map { text throws(LoadConfigurationError) in
            try Threshold.parse(text, kinds: [options.kind])
        }
        configuration = LoadEngineConfiguration(
            connectionsPerHost: options.connections,
            maxInFlight: options.maxInFlight,
            connectTimeout: try Self.duration(options.connectTimeoutText, flag: "--connect-timeout"),
            totalTimeout: try Self.duration(options.timeoutText, flag: "--timeout"),
            httpVersion: options.http2 ? .http2 : .http1_1,
            caFile: options.caFile,
            captureBodies: false,
            libcurlTransfers: options.libcurlTransfers
        )
        outDirectory = options.outDirectory
        quiet = options.quiet
    }

    /// The request sent each time.
    func request(id: Int) -> LoadRequest {
        LoadRequest(id: id, kind: kind, method: method, url: url, headers: headers, body: body)
    }

    /// The settings the summary records.
    var settings: [String: String] {
        [
            "url": url, "method": method, "connections": String(configuration.connectionsPerHost),
            "arrivals": arrivalsText, "seed": String(seed), "maxInFlight": String(configuration.maxInFlight),
            "mode": LoadCLI.describe(mode), "http": configuration.httpVersion.rawValue,
        ]
    }

    /// Safety first: never aim at a host the user did not name.
    static func checkHost(of url: String, allowed: [String]) throws {
        if let problem = TargetURL.problem(url) { throw CLIError(.usage, "--url: expected \(problem)") }
        guard let components = URLComponents(string: url), let scheme = components.scheme,
            scheme == "http" || scheme == "https", let host = components.host, !host.isEmpty
        else { throw CLIError(.usage, "--url '\(url)' is not an http:// or https:// URL") }
        let bareHost = host.trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
        guard ListenAddress.isLoopback(bareHost) || allowed.contains(bareHost) else {
            throw CLIError(
                .usage,
                "refusing non-loopback host '\(bareHost)'; pass --allow-host \(bareHost) to allow it"
            )
        }
    }

    static func arrivals(_ text: String, seed: Int) throws -> Arrivals {
        switch text {
        case "uniform": return .uniform
        case "poisson": return .poisson(seed: UInt64(truncatingIfNeeded: seed))
        default: throw CLIError(.usage, "--arrivals must be uniform or poisson, got '\(text)'")
        }
    }

    /// Closed loop with `--users`, else the open loop of `--schedule` or of `--rate` for `--duration`; and
    /// how long it lasts.
    static func mode(_ options: LoadOptions, arrivals: Arrivals) throws -> (LoadMode, Duration) {
        if let users = options.users {
            guard users >= 1 else { throw CLIError(.usage, "--users must be at least 1") }
            guard let durationText = options.durationText else { throw CLIError(.usage, "--users needs --duration") }
            guard options.rate == nil, options.scheduleText == nil else {
                throw CLIError(.usage, "--users (closed loop) cannot be combined with --rate or --schedule")
            }
            let planned = try duration(durationText, flag: "--duration")
            let think = try duration(options.thinkText, flag: "--think")
            return (.closed(users: users, thinkTime: think, duration: planned), planned)
        }
        if let scheduleText = options.scheduleText {
            guard options.rate == nil, options.durationText == nil else {
                throw CLIError(.usage, "--schedule replaces --rate and --duration")
            }
            let schedule: RateSchedule
            do {
                schedule = try RateSchedule.parse(scheduleText, arrivals: arrivals)
            } catch {
                throw CLIError(.usage, "--schedule: \(error)")
            }
            return (.open(schedule), schedule.duration)
        }
        guard let rate = options.rate, let durationText = options.durationText else {
            throw CLIError(.usage, "give --rate and --duration, --schedule, or --users and --duration")
        }
        let schedule = RateSchedule.constant(rate, for: try duration(durationText, flag: "--duration"))
            .with(arrivals: arrivals)
        try schedule.validate()
        return (.open(schedule), schedule.duration)
    }

    /// A duration flag's value.
    /// - Throws: `CLIError` with `.usage` naming the flag.
    static func duration(_ text: String, flag: String) throws -> Duration {
        do {
            return try parseDuration(text)
        } catch {
            throw CLIError(.usage, "\(flag): \(error)")
        }
    }

    /// `Name: value`, both sides trimmed; a name of token characters and a value without control characters
    /// (a CR or LF would start another header on the wire).
    static func header(_ text: String) throws -> (name: String, value: String) {
        guard let colon = text.firstIndex(of: ":") else {
            throw CLIError(.usage, "--header '\(text)' must look like 'Name: value'")
        }
        let name = String(text[..<colon]).trimmingCharacters(in: .whitespaces)
        let value = String(text[text.index(after: colon)...]).trimmingCharacters(in: .whitespaces)
        if let problem = HeaderField.nameProblem(name) ?? HeaderField.valueProblem(value) {
            throw CLIError(.usage, "--header: expected \(problem)")
        }
        return (name, value)
    }
}
