import AppStoreModel
internal import Foundation
public import HTTPServer
import Primitives
import Synchronization

#if canImport(Glibc)
internal import Glibc
#endif

/// PayStorm's embedded purchase backend: the target contract v1 over libmicrohttpd and SQLite, correct by
/// default and flawed on request.
///
/// ```swift
/// let ledger = try ReferenceLedger(configuration: LedgerConfiguration(
///     databasePath: "/tmp/ledger.sqlite", trustedRoots: [pki.root.der], bundleId: "com.example.app"))
/// let address = try ledger.start()   // "127.0.0.1:PORT"
/// // … POST /notifications, POST /transactions, GET /accounts/{token}, /health, /metrics
/// ledger.stop()
/// ```
public final class ReferenceLedger: Sendable {
    /// The configuration it runs with.
    public let configuration: LedgerConfiguration
    let store: LedgerStore
    let metrics = LedgerMetrics()
    let verifier: any PayloadVerifier
    private let checksFieldFormats: Bool
    private let server = Mutex<HTTPServer?>(nil)
    private let committer: GroupCommitter

    /// Opens the database (running migrations) and builds the verifier; does not listen yet.
    /// - Throws: `LedgerError` or `SQLiteError` naming the problem.
    public convenience init(configuration: LedgerConfiguration) throws {
        let verifier = try makeVerifier(configuration)
        try self.init(configuration: configuration, verifier: verifier)
    }

    init(configuration: LedgerConfiguration, verifier base: any PayloadVerifier) throws {
        self.configuration = configuration
        let policy = LedgerPolicy(flaws: configuration.flaws)
        verifier = policy.verifier(wrapping: base)
        checksFieldFormats = policy.checksFieldFormats
        store = try LedgerStore(path: configuration.databasePath, flaws: configuration.flaws)
        committer = GroupCommitter(
            store: store,
            metrics: metrics,
            late: policy.acknowledgesBeforeCommit ? configuration.lateCommitDelay : nil
        )
    }

    /// Starts serving and returns the bound address (`HOST:PORT`).
    /// - Throws: `HTTPServerError` when it cannot listen.
    @discardableResult
    public func start() throws -> String {
        try server.withLock { server in
            if let server { return server.address }
            let started = try HTTPServer(
                host: configuration.host,
                port: configuration.port,
                threads: configuration.threads,
                maxBodyBytes: configuration.maxBodyBytes
            ) { [self] request, respond in
                handle(request, respond: respond)
            }
            server = started
            return started.address
        }
    }

    /// The bound address, or nil before `start()`.
    public var address: String? { server.withLock { $0?.address } }

    /// Stops listening, waits for running requests, commits what is queued (a clean shutdown commits
    /// even with `ack-before-commit`; only a crash loses it), then checkpoints and closes the database
    /// and releases its lock, so the database file is complete on its own (no `-wal` beside it).
    /// Safe to call twice; requests handled in-process afterwards get 500.
    public func stop() {
        let running = server.withLock { server -> HTTPServer? in
            defer { server = nil }
            return server
        }
        running?.shutdown()
        committer.flush()
        store.close()
    }

    deinit {
        committer.flush()
        store.close()
    }

    // MARK: - Routing

    /// Handles one request in-process, without HTTP, and waits for its answer.
    public func handle(_ request: HTTPRequest) -> HTTPResponse {
        let done = DispatchSemaphore(value: 0)
        let answer = Mutex<HTTPResponse?>(nil)
        handle(request) { response in
            answer.withLock { $0 = response }
            done.signal()
        }
        done.wait()
        return answer.withLock { $0 } ?? .json(500, ErrorBody(error: "no response"))
    }

    /// What a request needs: an answer now, or a commit first.
    enum Step {
        case respond(HTTPResponse)
        case commit(LedgerEvent)
    }

    /// Handles one request; `respond` is called once, after the commit for deliveries (possibly on the
    /// committer's thread), so no HTTP thread waits for an fsync.
    public func handle(_ request: HTTPRequest, respond: @escaping @Sendable (HTTPResponse) -> Void) {
        let started = ContinuousClock.now
        // A delivery announces itself before it verifies, so that a commit starting now can wait for it.
        let delivery = request.method == "POST"
        if delivery { committer.expect() }
        let (route, step) = route(request)
        let finish: @Sendable (HTTPResponse) -> Void = { [metrics] response in
            metrics.request(route: route, status: response.status, seconds: (ContinuousClock.now - started).seconds)
            respond(response)
        }
        switch step {
        case .respond(let response):
            if delivery { committer.abandon() }
            finish(response)
        case .commit(let event):
            committer.submit(event, expected: delivery) { [self] result in
                finish(commitResponse(result))
            }
        }
    }

    private func route(_ request: HTTPRequest) -> (String, Step) {
        let route: String
        let response: HTTPResponse
        switch (request.method, request.path) {
        case ("POST", "/notifications"):
            return ("/notifications", timed { postNotification(request.body) })
        case ("POST", "/transactions"):
            return ("/transactions", timed { postTransaction(request.body) })
        case ("GET", let path) where path.hasPrefix("/accounts/"):
            route = "/accounts"
            response = getAccount(String(path.dropFirst("/accounts/".count)))
        case ("GET", "/health"):
            route = "/health"
            response = .json(200, Health(status: "ok", schemaVersion: store.schemaVersion, flaws: flawNames))
        case ("GET", "/metrics"):
            route = "/metrics"
            response = HTTPResponse(
                status: 200,
                headers: ["Content-Type": "text/plain; version=0.0.4"],
                body: Array(metrics.render(schemaVersion: store.schemaVersion).utf8)
            )
        case (_, "/notifications"), (_, "/transactions"), (_, "/health"), (_, "/metrics"):
            route = "other"
            response = .json(405, ErrorBody(error: "method \(request.method) not allowed on \(request.path)"))
        case (_, let path) where path.hasPrefix("/accounts/"):
            route = "other"
            response = .json(405, ErrorBody(error: "method \(request.method) not allowed on /accounts"))
        default:
            route = "other"
            response = .json(404, ErrorBody(error: "no route \(request.method) \(request.path)"))
        }
        return (route, .respond(response))
    }

    private var flawNames: [String] { configuration.flaws.map(\.rawValue).sorted() }

    // Both use the thread's CPU clock, so time spent preempted or waiting for a commit is not counted.
    private func timed(_ body: () -> Step) -> Step {
        let started = threadCPUNanoseconds()
        defer { metrics.handleNanoseconds.add(threadCPUNanoseconds() - started, ordering: .relaxed) }
        return body()
    }

    private func verify<T>(_ body: () -> Result<T, Rejection>) -> Result<T, Rejection> {
        let started = threadCPUNanoseconds()
        defer {
            metrics.verifyNanoseconds.add(threadCPUNanoseconds() - started, ordering: .relaxed)
            metrics.verifications.add(1, ordering: .relaxed)
        }
        return body()
    }

    private func reject(_ rejection: Rejection, field: String? = nil) -> Step {
        metrics.rejection(rejection.reason)
        let detail = field.map { "\($0): \(rejection.detail)" } ?? rejection.detail
        return .respond(.json(rejection.retryable ? 503 : 422, ErrorBody(error: detail, reason: rejection.reason)))
    }

    private func badRequest(_ message: String) -> Step {
        metrics.rejection("BAD_REQUEST")
        return .respond(.json(400, ErrorBody(error: message, reason: "BAD_REQUEST")))
    }

    private func postNotification(_ body: [UInt8]) -> Step {
        // One CPU clock read on each side of a delivery's verifications, not of each (a read is a system call).
        let started = threadCPUNanoseconds()
        var verified = 0
        defer {
            metrics.verifyNanoseconds.add(threadCPUNanoseconds() - started, ordering: .relaxed)
            metrics.verifications.add(Int64(verified), ordering: .relaxed)
        }
        let payload: ResponseBodyV2DecodedPayload
        switch notification(in: body, verified: &verified) {
        case .success(let value): payload = value
        case .failure(.badRequest(let message)): return badRequest(message)
        case .failure(.rejected(let rejection)): return reject(rejection, field: "signedPayload")
        }
        guard let uuid = payload.notificationUUID, !uuid.isEmpty else {
            return badRequest("notification has no notificationUUID")
        }
        guard let signedDate = payload.signedDate else { return badRequest("notification has no signedDate") }
        if let problem = Self.implausibleDate(signedDate) { return reject(problem, field: "signedDate") }
        var transaction: JWSTransactionDecodedPayload?
        var renewal: JWSRenewalInfoDecodedPayload?
        if let jws = payload.data?.signedTransactionInfo {
            verified += 1
            switch verifier.transaction(jws) {
            case .success(let value): transaction = value
            case .failure(let rejection): return reject(rejection, field: "signedTransactionInfo")
            }
        }
        if let jws = payload.data?.signedRenewalInfo {
            verified += 1
            switch verifier.renewal(jws) {
            case .success(let value): renewal = value
            case .failure(let rejection): return reject(rejection, field: "signedRenewalInfo")
            }
        }
        if let transaction {
            if let problem = check(transaction) { return reject(problem, field: "signedTransactionInfo") }
            if let renewal, let left = transaction.originalTransactionId, let right = renewal.originalTransactionId,
                left != right
            {
                return reject(
                    Rejection(reason: "INCONSISTENT_PAYLOAD", detail: "transaction and renewal info disagree"),
                    field: "signedRenewalInfo"
                )
            }
        }
        let event = LedgerEvent(
            source: .webhook,
            notificationUUID: uuid,
            notificationType: payload.notificationType,
            subtype: payload.subtype,
            signedDate: signedDate,
            status: payload.data?.status,
            transaction: transaction,
            renewal: renewal
        )
        return .commit(event)
    }

    private func postTransaction(_ body: [UInt8]) -> Step {
        guard let object = jsonObject(body) else { return badRequest("body is not a JSON object") }
        if let jws = object["signedTransaction"]?.stringValue {
            let transaction: JWSTransactionDecodedPayload
            switch verify({ verifier.transaction(jws) }) {
            case .success(let value): transaction = value
            case .failure(let rejection): return reject(rejection, field: "signedTransaction")
            }
            if let problem = check(transaction) { return reject(problem, field: "signedTransaction") }
            let event = LedgerEvent(
                source: .device,
                signedDate: transaction.signedDate ?? 0,
                transaction: transaction
            )
            return .commit(event)
        }
        guard let result = object["purchaseResult"]?.stringValue else {
            return badRequest("expected signedTransaction or purchaseResult")
        }
        guard let productId = object["productId"]?.stringValue, !productId.isEmpty else {
            return badRequest("report has no productId")
        }
        guard let token = object["appAccountToken"]?.stringValue, AppStoreJSON.isValidUUID(token) else {
            return badRequest("report appAccountToken is not a UUID")
        }
        let report = ReceivedDeviceReport(
            purchaseResult: result,
            productId: productId,
            appAccountToken: token.lowercased(),
            transactionId: object["transactionId"]?.stringValue
        )
        do {
            let outcome = try store.record(report, now: Self.nowMilliseconds())
            metrics.grants.add(Int64(outcome.granted), ordering: .relaxed)
            return .respond(CommitBody(status: "recorded", granted: outcome.granted).response(202))
        } catch {
            return .respond(.json(500, ErrorBody(error: "storage failed: \(error)", reason: "STORAGE")))
        }
    }

    private func commitResponse(_ result: Result<ApplyOutcome, any Error>) -> HTTPResponse {
        switch result {
        case .success(let outcome):
            if outcome.duplicate { metrics.duplicates.add(1, ordering: .relaxed) }
            metrics.grants.add(Int64(outcome.granted), ordering: .relaxed)
            return CommitBody(status: outcome.duplicate ? "duplicate" : "processed", granted: outcome.granted)
                .response(200)
        case .failure(let error):
            return .json(500, ErrorBody(error: "storage failed: \(error)", reason: "STORAGE"))
        }
    }

    /// Checks a careful backend adds beyond the verifier: the fields it keys on must be there.
    private func check(_ transaction: JWSTransactionDecodedPayload) -> Rejection? {
        guard let id = transaction.transactionId, !id.isEmpty, transaction.productId?.isEmpty == false else {
            return Rejection(reason: "MISSING_FIELD", detail: "transaction lacks transactionId or productId")
        }
        if let signed = transaction.signedDate, let problem = Self.implausibleDate(signed) { return problem }
        guard checksFieldFormats else { return nil }
        if let token = transaction.appAccountToken, !AppStoreJSON.isValidUUID(token) {
            return Rejection(reason: "INVALID_APP_ACCOUNT_TOKEN", detail: "appAccountToken is not a UUID")
        }
        return nil
    }

    /// Dates in seconds instead of milliseconds land in January 1970.
    private static func implausibleDate(_ milliseconds: Int64) -> Rejection? {
        milliseconds < 946_684_800_000
            ? Rejection(reason: "IMPLAUSIBLE_DATE", detail: "date \(milliseconds) is not in milliseconds") : nil
    }

    private func getAccount(_ token: String) -> HTTPResponse {
        guard AppStoreJSON.isValidUUID(token) else {
            return .json(400, ErrorBody(error: "appAccountToken '\(token)' is not a UUID", reason: "BAD_REQUEST"))
        }
        do {
            let state = try store.account(token.lowercased(), now: Self.nowMilliseconds())
            return .json(200, state)
        } catch {
            return .json(500, ErrorBody(error: "storage failed: \(error)", reason: "STORAGE"))
        }
    }

    func jsonObject(_ body: [UInt8]) -> [String: JSONValue]? {
        guard !body.isEmpty else { return nil }
        return try? JSONDecoder().decode([String: JSONValue].self, from: Data(body))
    }

    static func nowMilliseconds() -> Int64 {
        Int64((Date().timeIntervalSince1970 * 1000).rounded(.down))
    }
}

struct ErrorBody: Encodable {
    var error: String
    var reason: String?
}

struct Health: Encodable {
    var status: String
    var schemaVersion: Int
    var flaws: [String]
}

/// CPU time consumed by the calling thread, in nanoseconds.
func threadCPUNanoseconds() -> Int64 {
    var time = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
    return Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec)
}

extension Duration {
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
    var nanoseconds: Int64 { components.seconds * 1_000_000_000 + components.attoseconds / 1_000_000_000 }
}
