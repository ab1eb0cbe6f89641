import AppStoreModel
import AppStoreServerAPI
import Chaos
import Checking
import Foundation
import HTTPServer
import Load
import Minting
import Profile
import Signing
import Simulation
import Testing

@testable import PayStorm

/// The run's webhook attempts reach the App Store Server API's notification history with their real outcome.
struct WebhookAttemptsTests {
    static func result(status: Int = 0, error: LoadErrorClass? = nil, at seconds: Double = 1) -> LoadResult {
        LoadResult(
            id: 0,
            kind: "webhook",
            intended: .milliseconds(Int64(seconds * 1000)),
            sent: .milliseconds(Int64(seconds * 1000)),
            wireStart: .milliseconds(Int64(seconds * 1000) + 5),
            received: .milliseconds(Int64(seconds * 1000) + 50),
            status: status,
            error: error
        )
    }

    @Test(
        arguments: [
            (200, nil, DeliveryOutcome.acknowledged(status: 200, alreadyHad: false), SendAttemptResult.success),
            (500, nil, .rejected(status: 500), .unsuccessfulHTTPResponseCode),
            (429, nil, .deferred(status: 429), .unsuccessfulHTTPResponseCode),
            (0, .timeout, .indeterminate(reason: "timeout"), .timedOut),
            (0, .reset, .indeterminate(reason: "reset"), .prematureClose),
            (0, .hungUp, .indeterminate(reason: "hung up"), .noResponse),
            (0, .tls, .indeterminate(reason: "tls"), .tlsIssue),
            (0, .other, .indeterminate(reason: "other"), .other),
            (0, .refused, .notSent(reason: "refused"), .socketIssue),
            (0, .missed, .notSent(reason: "missed", harnessLimited: true), .other),
        ] as [(Int, LoadErrorClass?, DeliveryOutcome, SendAttemptResult)]
    )
    func namesEachOutcomeAsApple(status: Int, error: LoadErrorClass?, outcome: DeliveryOutcome, name: SendAttemptResult)
    {
        #expect(SendAttemptResult(Self.result(status: status, error: error), outcome: outcome) == name)
        #expect(name.isKnown)
    }

    /// A genuine notification refused, then acknowledged on its retry, and a forgery, as a run records them.
    @Test func recordsGenuineNotificationsAttemptsAndIgnoresForgeries() throws {
        let profile = try DeliveryRequestsTests.profile(target: #"{ webhookURL: "http://127.0.0.1:1/n" }"#)
        let start: Int64 = 1_800_000_000_000
        let store = APIStore()
        let planned = Array(
            ChaosStream(APIFeed(World(profile: profile, startMillis: start), store: store), profile: profile)
        )
        let genuine = try #require(
            planned.first {
                if case .notification = $0.action.delivery { return !$0.isForged }
                return false
            }
        )
        guard case .notification(let notification) = genuine.action.delivery else { return }
        var forged = genuine
        forged.forgery = "bad-signature"
        let attempts = WebhookAttempts(store: store, startMillis: start)
        attempts.record(genuine, result: Self.result(status: 500, at: 1), outcome: .rejected(status: 500))
        attempts.record(
            forged,
            result: Self.result(status: 200, at: 2),
            outcome: .acknowledged(status: 200, alreadyHad: false)
        )
        attempts.record(genuine, result: Self.result(error: .refused, at: 3), outcome: .notSent(reason: "refused"))
        attempts.record(
            genuine,
            result: Self.result(status: 200, at: 4),
            outcome: .acknowledged(status: 200, alreadyHad: false)
        )
        let recorded = store.sendAttempts(notificationUUID: notification.notificationUUID)
        #expect(recorded.map(\.result) == [.unsuccessfulHTTPResponseCode, .socketIssue, .success])
        // On the wire 5 ms after the intended time; a refused connection at its intended time.
        #expect(recorded.map(\.attemptDate) == [start + 1_005, start + 3_000, start + 4_005])
    }

    /// The run's scheduler hands each webhook answer to the API's history: of a run whose target refused its first
    /// notification and acknowledged the others, `onlyFailures` lists that one alone.
    @Test func onlyTheRefusedWebhookOfARunIsAFailureInTheHistory() throws {
        let text = ProfileText.minimal.replacingOccurrences(
            of: "TARGET",
            with: #"{ webhookURL: "http://127.0.0.1:1/n" }"#
        )
        .replacingOccurrences(of: "schedule:", with: "faults: { appStoreRetries: { enabled: false } }, schedule:")
        let profile = try Profile.decode(Data(text.utf8), file: "t.json5")
        // A minute ago: the API answers at the wall clock's time, and shows what happened by then.
        let start = Int64(Date().timeIntervalSince1970 * 1000) - 60_000
        let store = APIStore()
        let planned = Array(
            ChaosStream(APIFeed(World(profile: profile, startMillis: start), store: store), profile: profile)
        )
        let endpoints = Endpoints(
            webhook: try #require(profile.target.webhook),
            deviceDelivery: nil,
            deviceReport: nil,
            probe: nil,
            headers: [],
            probeMapping: nil
        )
        let (scheduler, pipeline) = try RunSchedulerTests.scheduler(
            planned,
            profile: profile,
            endpoints: endpoints,
            checker: Checker(profile: profile, startMillis: start),
            recorder: try LoadRecorder(directory: nil),
            clock: 0,
            attempts: WebhookAttempts(store: store, startMillis: start)
        )
        pipeline.start()
        defer { pipeline.stopAndWait() }
        var answered = 0
        let deadline = Date(timeIntervalSinceNow: 30)
        while let due = scheduler.nextDue(), Date() < deadline {
            guard scheduler.nextIsReady else {
                Thread.sleep(forTimeInterval: 0.001)
                continue
            }
            guard let request = scheduler.take(due) else { continue }
            scheduler.handle(Self.result(status: answered == 0 ? 500 : 200, at: due.seconds).with(id: request.id))
            answered += 1
        }
        try #require(answered > 1)
        let api = try AppStoreServerAPI(store: store, configuration: APIConfiguration(), pki: try TestPKI.generate())
        let body = try JSONSerialization.data(withJSONObject: [
            "startDate": start - 1, "endDate": start + 3_600_000, "onlyFailures": false,
        ])
        func listed(onlyFailures: Bool) throws -> Int {
            var fields = try #require(try JSONSerialization.jsonObject(with: body) as? [String: Any])
            fields["onlyFailures"] = onlyFailures
            let answer = api.answer(
                HTTPRequest(
                    method: "POST",
                    path: "/inApps/v1/notifications/history",
                    query: nil,
                    headers: ["authorization": "Bearer " + (try APINotificationSenderTests.bearer())],
                    body: Array(try JSONSerialization.data(withJSONObject: fields))
                )
            )
            let object = try #require(
                try JSONSerialization.jsonObject(with: Data(answer.response.body)) as? [String: Any]
            )
            return (object["notificationHistory"] as? [Any])?.count ?? -1
        }
        #expect(try listed(onlyFailures: false) == answered)
        #expect(try listed(onlyFailures: true) == 1)
    }
}

extension LoadResult {
    fileprivate func with(id: Int) -> LoadResult {
        var copy = self
        copy.id = id
        return copy
    }
}
