package import AppStoreServerAPI
import Dispatch
import Foundation
import HTTPServer
import Load
import Primitives
package import Profile
package import Reporting
package import RunControl
import Signing
import Simulation
import Synchronization

/// The App Store Server API a run serves (profile `target.appStoreAPI`), for backends that verify by pulling:
/// HTTPS on loopback with a certificate from the run's PKI, answering from the run's world at its current time.
///
/// The world feeds it through ``APIFeed``: every action is recorded with its intended world time, before the
/// chaos stage decides what reaches the backend, so the API tells the truth even about a purchase whose every
/// delivery a fault dropped. Requests, the API's faults and the notifications it sends are queued here (the
/// server's threads) and written to the history on the engine's thread by ``drain(into:startMillis:)``.
package final class RunAPI: Sendable {
    /// What the App Store knows.
    package let store: APIStore
    let api: AppStoreServerAPI
    let server: APIServer
    /// Where the backend points its client, such as `https://127.0.0.1:8443`.
    let baseURL: String
    /// The PEM file of the root the backend's HTTP client trusts, in the report folder.
    let caFile: String
    private let pending: APILines
    private let counts = Mutex<[String: Int]>([:])
    private let sender: APINotificationSender

    /// Starts the API, or returns nil when the profile has no `target.appStoreAPI`; `file` is the profile's path,
    /// for error messages.
    /// - Throws: `RunError` naming the profile field (an unreadable public key: 66; a bad key or a port that
    ///   cannot be bound: 65 and 69) or the report file that cannot be written (73).
    package static func start(
        profile: Profile,
        file: String,
        target: PreparedTarget,
        folder: ReportFolder,
        log: @escaping @Sendable (String) -> Void
    ) throws(RunError) -> RunAPI? {
        guard let config = profile.target.appStoreAPI else { return nil }
        let field = "\(file): target.appStoreAPI"
        var configuration = APIConfiguration(
            bundleId: profile.target.bundleId,
            appAppleId: profile.target.appAppleId,
            environment: profile.target.environment,
            issuerId: config.issuerId,
            faults: APIFaults(
                // The run's seed, mixed, so API faults replay with the run but draw apart from chaos.
                seed: SplitMix64.mix(profile.seed ^ 0xA915_7081),
                rateLimitProbability: config.faults.rateLimit,
                retryAfterSeconds: config.faults.retryAfterSeconds,
                retryableErrorProbability: config.faults.serverErrors,
                internalErrorProbability: config.faults.internalErrors,
                slowProbability: config.faults.slow,
                slowSeconds: config.faults.slowSeconds,
                notFoundSeconds: config.faults.notFoundSeconds
            ),
            sharedSecret: config.sharedSecret
        )
        if let path = config.publicKey, let kid = config.keyId {
            guard let data = FileManager.default.contents(atPath: path) else {
                throw .noInput("\(field).publicKey: cannot read \(path)")
            }
            configuration.publicKeys = [kid: String(decoding: data, as: UTF8.self)]
        }
        do {
            return try RunAPI(
                configuration: configuration,
                config: config,
                pki: target.pki,
                webhook: target.endpoints,
                engine: try PayStormRun.loadEngine(profile: profile),
                caFile: folder.file("api-ca.pem"),
                log: log
            )
        } catch let error as APIConfigurationError {
            throw .badProfile("\(field).publicKey: \(error.message)")
        } catch let error as RunError {
            throw error
        } catch {
            throw .unreachable("\(field).listen: \(error)")
        }
    }

    private init(
        configuration: APIConfiguration,
        config: AppStoreAPIConfig,
        pki: TestPKI,
        webhook: Endpoints,
        engine: LoadEngine,
        caFile: URL,
        log: @escaping @Sendable (String) -> Void
    ) throws {
        let store = APIStore()
        let pending = APILines()
        let sender = APINotificationSender(endpoints: webhook, engine: engine, store: store, lines: pending)
        let api = try AppStoreServerAPI(
            store: store,
            configuration: configuration,
            pki: pki,
            deliver: { notification in sender.send(notification) }
        )
        let certificate = try TLSServerCertificate.issue(
            by: pki,
            hostNames: TLSServerCertificate.appStoreHostNames + config.hostNames
        )
        let server = try APIServer(
            api: api,
            host: config.host,
            port: config.port,
            tls: HTTPServerTLS(keyPEM: try certificate.keyPEM(), certificateChainPEM: certificate.certificatePEM),
            observe: { request, answer in
                let line = APILines.Line(
                    event: "call",
                    at: AppStoreServerAPI.wallClock(),
                    fields: [
                        ("method", request.method), ("path", request.path), ("endpoint", answer.endpoint ?? "-"),
                    ],
                    status: answer.response.status
                )
                pending.append(line)
            }
        )
        do {
            try Data(pki.root.pem().utf8).write(to: caFile)
        } catch {
            server.shutdown()
            throw RunError.cannotWrite("cannot write \(caFile.path): \(error.localizedDescription)")
        }
        self.store = store
        self.api = api
        self.server = server
        self.sender = sender
        self.pending = pending
        self.caFile = caFile.path
        baseURL = server.baseURL
        log("app store server api: \(baseURL) (ca: \(caFile.path))")
    }

    /// Writes the queued API lines to the history and counts the faults; call it on the engine's thread.
    /// - Parameters:
    ///   - history: the run's history.
    ///   - startMillis: the wall-clock instant where the history's `t` is 0.
    func drain(into history: HistoryLog, startMillis: Int64) {
        let (lines, faults) = pending.take { api.faultLog(since: $0) }
        let seconds = { (at: Int64) in Double(at - startMillis) / 1000 }
        for line in lines {
            history.writeAPI(event: line.event, at: seconds(line.at), fields: line.fields, status: line.status)
        }
        for fault in faults {
            history.writeAPI(
                event: "fault",
                at: seconds(fault.at),
                fields: [("endpoint", fault.endpoint), ("id", fault.id), ("fault", fault.kind.rawValue)]
            )
        }
        if !faults.isEmpty {
            counts.withLock { counts in
                for fault in faults { counts["api." + fault.kind.rawValue, default: 0] += 1 }
            }
        }
    }

    /// The API's faults so far, by name (`api.rateLimit`, `api.notFoundYet`...), for the report's fault counts.
    var faultCounts: [String: Int] { counts.withLock { $0 } }

    /// What the report's notes say about the API: where it served and what it was asked.
    var notes: [String] {
        [
            "app store server api served at \(baseURL) (ca: \(caFile)); \(store.transactions(at: Int64.max).count) "
                + "transactions known, \(sender.sent) notifications sent to the webhook"
        ]
    }

    /// Stops serving and waits for notifications still being sent.
    package func shutdown() {
        server.shutdown()
        sender.finish()
    }
}

/// Lines for the history, queued by the server's threads and the notification sender.
final class APILines: Sendable {
    struct Line: Sendable {
        var event: String
        var at: Int64
        var fields: [(String, String)]
        var status: Int?
    }

    private let state = Mutex<(lines: [Line], faultsSeen: Int)>(([], 0))

    func append(_ line: Line) { state.withLock { $0.lines.append(line) } }

    /// The queued lines and the faults logged since the last call (`newFaults` gets how many were seen).
    func take(newFaults: (Int) -> [APIFaultEvent]) -> ([Line], [APIFaultEvent]) {
        state.withLock { state in
            let faults = newFaults(state.faultsSeen)
            state.faultsSeen += faults.count
            defer { state.lines.removeAll(keepingCapacity: true) }
            return (state.lines, faults)
        }
    }
}

/// The world's actions, each recorded into the API's store at its intended world time as the chaos stage
/// takes it; with no store it only passes them on.
struct APIFeed: IteratorProtocol {
    private var world: World
    private let store: APIStore?

    init(_ world: World, store: APIStore?) {
        self.world = world
        self.store = store
    }

    mutating func next() -> Action? {
        guard let action = world.next() else { return nil }
        // Visible from its intended time only, so recording ahead of the schedule never leaks the future.
        store?.record(action, at: world.millis(action.at))
        return action
    }
}
