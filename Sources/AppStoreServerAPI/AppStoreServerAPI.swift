import AppStoreModel
internal import Foundation
public import HTTPServer
import Minting
public import Signing
public import Simulation

/// The App Store Server API as PayStorm plays it: Apple's paths, bearer checks, answers signed with the test
/// PKI from the ``APIStore`` at the world's current time, and the API's own failures (``APIFaults``).
///
/// The handler is pure (a request in, an answer out), so it is tested without sockets; ``APIServer`` serves it
/// over HTTPS. Notifications the API causes (a `TEST`, a `RENEWAL_EXTENDED`) go through the `deliver` hook,
/// which the run path points at the backend's webhook.
///
/// ```swift
/// let api = try AppStoreServerAPI(store: store, configuration: APIConfiguration(bundleId: "com.example.app"),
///                                 pki: pki) { notification in webhook.post(notification.signedPayload) }
/// let answer = api.answer(request)  // answer.response after answer.delaySeconds
/// ```
public final class AppStoreServerAPI: Sendable {
    /// The world as the App Store knows it.
    public let store: APIStore
    /// The configuration.
    public let configuration: APIConfiguration
    let minter: Minter
    private let authentication: BearerAuthentication
    let faults: FaultInjector
    let clock: @Sendable () -> Int64
    let deliver: (@Sendable (APINotification) -> Void)?

    /// Creates the API.
    /// - Parameters:
    ///   - store: the world it answers from.
    ///   - configuration: the app, the bearer keys and the faults.
    ///   - pki: the test PKI whose leaf signs every answer.
    ///   - clock: the world's current time in UNIX milliseconds (the wall clock by default).
    ///   - deliver: where notifications the API causes go; nil answers `POST /inApps/v1/notifications/test` with
    ///     `ServerNotificationUrlNotFoundError`, as Apple does for an app without a notification URL.
    /// - Throws: ``APIConfigurationError`` naming a public key that is not a P-256 PEM key.
    public init(
        store: APIStore,
        configuration: APIConfiguration,
        pki: TestPKI,
        clock: @escaping @Sendable () -> Int64 = AppStoreServerAPI.wallClock,
        deliver: (@Sendable (APINotification) -> Void)? = nil
    ) throws {
        var keys: [String: ES256PublicKey] = [:]
        for (kid, pem) in configuration.publicKeys {
            do { keys[kid] = try ES256PublicKey(pem: pem) } catch {
                throw APIConfigurationError(message: "public key for key id '\(kid)' is not a P-256 PEM public key")
            }
        }
        self.store = store
        self.configuration = configuration
        self.minter = Minter(
            pki: pki,
            app: AppIdentity(
                bundleId: configuration.bundleId,
                appAppleId: configuration.appAppleId,
                environment: configuration.environment
            )
        )
        self.authentication = BearerAuthentication(
            bundleId: configuration.bundleId,
            publicKeys: keys,
            issuerId: configuration.issuerId
        )
        self.faults = FaultInjector(configuration.faults)
        self.clock = clock
        self.deliver = deliver
    }

    /// The wall clock in UNIX milliseconds: PayStorm's world runs at real-time pace.
    public static let wallClock: @Sendable () -> Int64 = { Int64((Date().timeIntervalSince1970 * 1000).rounded(.down)) }

    /// Every fault injected so far, in order.
    public var faultLog: [APIFaultEvent] { faults.events }

    /// The faults injected after the first `index` ones, in order (a run drains the log as it goes).
    /// - Parameter index: how many events the caller has already seen.
    /// - Returns: the newer events.
    public func faultLog(since index: Int) -> [APIFaultEvent] { faults.events(since: index) }

    /// Answers one request.
    /// - Parameter request: the request (its path as decoded by the server, its raw query).
    /// - Returns: the response, and how long to hold it back (a slow-answer fault).
    public func answer(_ request: HTTPRequest) -> APIAnswer {
        let now = clock()
        let segments = request.path.split(separator: "/").map(String.init)
        if segments.first == "paystorm" { return APIAnswer(admin(request, segments: segments, now: now)) }
        if segments == ["verifyReceipt"] { return verifyReceipt(request, now: now) }
        guard let route = Route(method: request.method, segments: segments) else {
            return APIAnswer(
                HTTPResponse(status: 404, headers: ["Content-Type": "text/plain"], body: Array("Not Found".utf8))
            )
        }
        do {
            _ = try authentication.check(authorization: request.headers["authorization"], nowSeconds: now / 1000)
        } catch {
            // Apple answers a bad token with a bare 401 whose body is no JSON error.
            let body = Array("Unauthenticated\n\nRequest ID: \(UUID().uuidString.prefix(26)).0.0\n".utf8)
            return APIAnswer(HTTPResponse(status: 401, headers: ["Content-Type": "text/plain"], body: body))
        }
        if let fault = faults.drawError(at: now, endpoint: route.endpoint, id: route.id) {
            return APIAnswer(errorResponse(for: fault), endpoint: route.endpoint)
        }
        let response: HTTPResponse
        do {
            response = try handle(route, request: request, now: now)
        } catch let error as APIErrorCode {
            response = error.response
        } catch {
            response = APIErrorCode.generalInternal.response
        }
        return APIAnswer(
            response,
            delaySeconds: faults.drawSlow(at: now, endpoint: route.endpoint, id: route.id),
            endpoint: route.endpoint
        )
    }

    private func errorResponse(for fault: APIFaultEvent.Kind) -> HTTPResponse {
        switch fault {
        case .rateLimit:
            var response = APIErrorCode.rateLimitExceeded.response
            response.headers["Retry-After"] = String(configuration.faults.retryAfterSeconds)
            return response
        case .retryableError: return APIErrorCode.generalInternalRetryable.response
        default: return APIErrorCode.generalInternal.response
        }
    }

    private func handle(_ route: Route, request: HTTPRequest, now: Int64) throws -> HTTPResponse {
        let query = Query(request.query)
        switch route {
        case .transactionInfo(let id): return try transactionInfo(id, now: now)
        case .transactionHistory(let id): return try transactionHistory(id, query: query, now: now)
        case .subscriptionStatuses(let id): return try subscriptionStatuses(id, query: query, now: now)
        case .refundHistory(let id): return try refundHistory(id, query: query, now: now)
        case .orderLookup(let id): return try orderLookup(id, now: now)
        case .requestTestNotification: return try requestTestNotification(now: now)
        case .testNotificationStatus(let token): return try testNotificationStatus(token)
        case .notificationHistory: return try notificationHistory(request.body, query: query, now: now)
        case .consumption(let id): return try consumption(id, body: request.body, now: now)
        case .extend(let id): return try extend(id, body: request.body, now: now)
        }
    }

    private func admin(_ request: HTTPRequest, segments: [String], now: Int64) -> HTTPResponse {
        guard request.method == "GET" else { return HTTPResponse(status: 405) }
        switch segments.dropFirst().first {
        case "transactions":
            return .json(200, store.transactions(at: now).map(AdminTransaction.init))
        case "faults":
            return .json(
                200,
                faults.events.map {
                    ["at": String($0.at), "endpoint": $0.endpoint, "id": $0.id, "fault": $0.kind.rawValue]
                }
            )
        default:
            return HTTPResponse(status: 404)
        }
    }
}

/// What the handler answers: a response, and a delay before it is sent (0 unless a slow-answer fault struck).
public struct APIAnswer: Sendable {
    /// The response.
    public var response: HTTPResponse
    /// Seconds to hold the response back.
    public var delaySeconds: Double
    /// The endpoint's name (such as `getTransactionInfo`), nil for unknown and admin paths.
    public var endpoint: String?

    init(_ response: HTTPResponse, delaySeconds: Double = 0, endpoint: String? = nil) {
        self.response = response
        self.delaySeconds = delaySeconds
        self.endpoint = endpoint
    }
}

/// A notification the API causes (`TEST`, `RENEWAL_EXTENDED`), signed, for the run path to deliver to the
/// backend's webhook. The run path reports each attempt with ``APIStore/recordSendAttempt(notificationUUID:at:result:)``.
public struct APINotification: Sendable {
    /// The notification's facts.
    public var facts: NotificationFacts
    /// The `signedPayload` JWS; the webhook body is `{"signedPayload": "..."}`.
    public var signedPayload: String
}

/// A configuration the API cannot start with.
public struct APIConfigurationError: Error, Sendable, CustomStringConvertible {
    /// One line naming the field and the value.
    public var message: String
    /// The message.
    public var description: String { message }
}

private struct AdminTransaction: Encodable {
    var transactionId: String
    var originalTransactionId: String
    var productId: String
    var type: ProductType
    var customer: Int
    var appAccountToken: String?
    var orderId: String
    var firstSeen: Int64
    var revoked: Bool

    init(_ entry: APIStoreEntry) {
        transactionId = entry.transaction.transactionId
        originalTransactionId = entry.transaction.originalTransactionId
        productId = entry.transaction.productId
        type = entry.transaction.type
        customer = entry.customer
        appAccountToken = entry.transaction.payload.appAccountToken
        orderId = entry.orderId
        firstSeen = entry.firstSeen
        revoked = entry.transaction.payload.revocationDate != nil
    }
}
