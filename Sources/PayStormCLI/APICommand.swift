import AppStoreModel
import AppStoreServerAPI
import Foundation
import HTTPServer
import PayStorm
import Profile
import RunControl
import Signing
import Simulation
import Synchronization

extension Command {
    /// `paystorm api serve`: the App Store Server API over HTTPS on loopback, for a separately started backend.
    static let api = Command(
        name: "api",
        summary: "serve the App Store Server API (HTTPS, Apple's paths) from a profile's world",
        help: apiHelp
    ) { arguments in
        var arguments = arguments
        guard let verb = arguments.positional() else {
            throw CLIError(.usage, "missing subcommand; try 'paystorm api serve --help'")
        }
        guard verb == "serve" else { throw CLIError(.usage, "unknown api subcommand '\(verb)'") }
        return try serveAPI(&arguments)
    }

    private static let apiHelp = """
        paystorm api serve: the App Store Server API as PayStorm plays it, over HTTPS on loopback

        Usage: paystorm api serve --pki DIR [--profile PROFILE [--seed N]] [OPTIONS]

        Prints the base URL (https://HOST:PORT) as its first line and the CA file to trust as its second, then
        serves until SIGTERM or SIGINT. With --profile it plays the profile's world in real time into the API
        (nothing is delivered to any backend), so a backend started separately can pull what it buys;
        GET /paystorm/transactions lists the transactions known so far (JSON, no token needed).

        Options:
          --listen HOST:PORT        address to listen on (default 127.0.0.1:0, any free port; loopback only)
          --pki DIR                 the test PKI: signs every answer, and its root issues the TLS certificate
          --profile FILE            play this profile's world (JSON5); --seed N and --set NAME=VALUE apply
          --seed N                  the world's seed (default: the profile's)
          --set NAME=VALUE          a profile variable; repeatable
          --bundle-id ID            the app's bundle id, checked as the token's bid (default: com.example.paystorm)
          --environment ENV         Sandbox (default) or Production, written into answers
          --app-apple-id N          the app's Apple ID (default 1234567890)
          --key-id KID              with --public-key: tokens with this kid must be signed by that key
          --public-key FILE         the backend's API key's public half (PEM, P-256); without it, claims only
          --host-name NAME          another name for the TLS certificate; repeatable
          --shared-secret S         the app's shared secret: verifyReceipt answers 21004 to a receipt with an
                                    auto-renewable subscription sent without it as password
          --http                    plain HTTP instead of HTTPS
          --fault-seed N            the seed of the API's faults (default: the world's seed, else 0)
          --rate-limit P            chance per request of 429 RateLimitExceededError (default 0)
          --retry-after S           its Retry-After in seconds (default 1)
          --retryable-errors P      chance of 500 GeneralInternalRetryableError (default 0)
          --internal-errors P       chance of 500 GeneralInternalError (default 0)
          --slow P                  chance of an answer held back --slow-seconds (default 0)
          --slow-seconds S          how long a slow answer waits (default 2)
          --not-found-seconds S     a new transaction is TransactionIdNotFoundError this long (default 0)
          --threads N               HTTP worker threads (default 4)

        Endpoints: GET /inApps/v1/transactions/{id}, GET /inApps/v2/history/{id},
        GET /inApps/v1/subscriptions/{id}, GET /inApps/v2/refund/lookup/{id}, GET /inApps/v1/lookup/{orderId},
        POST /inApps/v1/notifications/test, GET /inApps/v1/notifications/test/{token},
        POST /inApps/v1/notifications/history, PUT /inApps/v1/transactions/consumption/{id},
        PUT /inApps/v1/subscriptions/extend/{originalTransactionId}; and Apple's legacy POST /verifyReceipt (no
        token; buy.itunes.apple.com is Production, sandbox.itunes.apple.com Sandbox; the faults above strike it too:
        --rate-limit as status 21005, --retryable-errors as 21199 with is-retryable, --internal-errors as HTTP 500).

        """

    private static func serveAPI(_ arguments: inout Arguments) throws -> ExitCode {
        // Each argument is checked as it is read, so the first bad one is the one named.
        let listen = try arguments.option("--listen") ?? "127.0.0.1:0"
        let (host, port) = try ListenAddress.parse(listen)
        guard ListenAddress.isLoopback(host) else {
            throw CLIError(.usage, "refusing to listen on non-loopback \(host)")
        }
        guard let pkiDirectory = try arguments.option("--pki") else { throw CLIError(.usage, "missing --pki DIR") }
        let profilePath = try arguments.option("--profile")
        let seed = try arguments.seed()
        let variables = try profileVariables(&arguments)
        var configuration = try apiConfiguration(&arguments)
        let hostNames = try arguments.options("--host-name")
        let plain = arguments.flag("--http")
        let faultSeed = try arguments.uint64("--fault-seed")
        let threads = try arguments.int("--threads") ?? 4
        guard threads > 0, threads <= 256 else { throw CLIError(.usage, "--threads must be 1…256") }
        try arguments.finish()

        let pki = try MintCommand.loadPKI(pkiDirectory)
        var profile: Profile?
        if let profilePath {
            profile = try loadProfile(profilePath, variables: variables, seed: seed)
        }
        configuration.faults.seed = faultSeed ?? profile?.seed ?? 0

        let store = APIStore()
        let api: AppStoreServerAPI
        do {
            // Nothing is delivered: notifications the API causes are kept for the history and the test status.
            api = try AppStoreServerAPI(store: store, configuration: configuration, pki: pki, deliver: { _ in })
        } catch {
            throw CLIError(.badInput, "--public-key: \(error)")
        }
        let tls = plain ? nil : try tlsSettings(pki: pki, hostNames: hostNames + [host])
        let termination = TerminationSignal.listen()
        let server: APIServer
        do {
            server = try APIServer(api: api, host: host, port: port, tls: tls, threads: threads)
        } catch {
            throw CLIError(.unreachable, "\(error)")
        }
        let feeder = profile.map { WorldFeeder(profile: $0, store: store) }
        let caFile = (pkiDirectory as NSString).appendingPathComponent("root.pem")
        FileHandle.standardOutput.write(Data("\(server.baseURL)\nca: \(caFile)\n".utf8))
        return termination.wait {
            feeder?.stop()
            server.shutdown()
        }
    }

    /// The app, the bearer key and the faults, from their flags.
    private static func apiConfiguration(_ arguments: inout Arguments) throws -> APIConfiguration {
        var configuration = APIConfiguration()
        configuration.bundleId = try arguments.option("--bundle-id") ?? configuration.bundleId
        configuration.environment = try arguments.option("--environment").map(Environment.init(rawValue:)) ?? .sandbox
        guard [Environment.sandbox, .production].contains(configuration.environment) else {
            throw CLIError(.usage, "--environment must be Sandbox or Production, got '\(configuration.environment)'")
        }
        configuration.appAppleId = try arguments.int("--app-apple-id").map { Int64($0) } ?? configuration.appAppleId
        configuration.sharedSecret = try arguments.option("--shared-secret")
        if configuration.sharedSecret?.isEmpty == true { throw CLIError(.usage, "--shared-secret must not be empty") }
        switch (try arguments.option("--key-id"), try arguments.option("--public-key")) {
        case (let kid?, let path?):
            guard let data = FileManager.default.contents(atPath: path) else {
                throw CLIError(.noInput, "cannot read --public-key \(path)")
            }
            configuration.publicKeys = [kid: String(decoding: data, as: UTF8.self)]
        case (nil, nil): break
        default: throw CLIError(.usage, "--key-id and --public-key go together")
        }
        configuration.faults = try faults(&arguments)
        return configuration
    }

    /// A fresh TLS certificate from the PKI's root for Apple's API hosts and `hostNames`.
    private static func tlsSettings(pki: TestPKI, hostNames: [String]) throws -> HTTPServerTLS {
        let certificate = try TLSServerCertificate.issue(
            by: pki,
            hostNames: TLSServerCertificate.appStoreHostNames + hostNames
        )
        return HTTPServerTLS(keyPEM: try certificate.keyPEM(), certificateChainPEM: certificate.certificatePEM)
    }

    private static func faults(_ arguments: inout Arguments) throws -> APIFaults {
        var faults = APIFaults()
        func probability(_ flag: String) throws -> Double {
            guard let value = try arguments.double(flag) else { return 0 }
            guard (0...1).contains(value) else { throw CLIError(.usage, "\(flag) must be between 0 and 1") }
            return value
        }
        func seconds(_ flag: String, _ fallback: Double) throws -> Double {
            guard let value = try arguments.double(flag) else { return fallback }
            guard value >= 0, value <= 3600 else { throw CLIError(.usage, "\(flag) must be 0…3600 seconds") }
            return value
        }
        faults.rateLimitProbability = try probability("--rate-limit")
        faults.retryAfterSeconds = Int(try seconds("--retry-after", 1).rounded(.up))
        faults.retryableErrorProbability = try probability("--retryable-errors")
        faults.internalErrorProbability = try probability("--internal-errors")
        faults.slowProbability = try probability("--slow")
        faults.slowSeconds = try seconds("--slow-seconds", 2)
        faults.notFoundSeconds = try seconds("--not-found-seconds", 0)
        return faults
    }

    private static func loadProfile(_ path: String, variables: [String: String], seed: UInt64?) throws -> Profile {
        do {
            var profile = try Profile.load(path: path, variables: ProfileVariables(set: variables))
            if let seed { profile.seed = seed }
            return profile
        } catch let error as ProfileUnreadable {
            throw CLIError(.noInput, error.description)
        } catch {
            throw CLIError(.badInput, "\(error)")
        }
    }
}

/// Plays a profile's world into the store in real time, a little ahead of the clock (the store shows each fact
/// only from its own time), on a thread of its own until the world ends or ``stop()``.
private final class WorldFeeder: Sendable {
    private let stopped = Mutex(false)

    init(profile: Profile, store: APIStore) {
        let start = Int64((Date().timeIntervalSince1970 * 1000).rounded(.down))
        let thread = Thread { [self] in
            var world = World(profile: profile, startMillis: start)
            while let action = world.next() {
                let due = world.millis(action.at)
                // Recorded up to a second early: the store keeps it hidden until `due`.
                while Int64(Date().timeIntervalSince1970 * 1000) < due - 1000 {
                    if isStopped { return }
                    Thread.sleep(forTimeInterval: 0.1)
                }
                if isStopped { return }
                store.record(action, at: due)
            }
        }
        thread.start()
    }

    private var isStopped: Bool { stopped.withLock { $0 } }

    func stop() { stopped.withLock { $0 = true } }
}
