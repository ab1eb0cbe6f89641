import Chaos
import Checking
import Foundation
import Load
import Minting
import Primitives
import Profile
import Signing
import Simulation
import Testing

@testable import PayStorm

/// The run's scheduler under overload: what the mint pipeline shed is booked in bulk, off the engine's
/// per-request path, and the oracle still knows it never left the harness.
struct RunSchedulerTests {
    static let start: Int64 = 1_800_000_000_000

    static let profile = """
        {
          name: "shed", seed: 5,
          target: { webhookURL: "http://127.0.0.1:1/n", deviceURL: "http://127.0.0.1:1/t" },
          catalog: { products: [{ id: "pro", type: "nonConsumable", priceMilli: 4990 }] },
          population: { accounts: 300 },
          actionMix: { nonConsumable: 1 },
          schedule: [{ kind: "constant", rate: 200, seconds: 4 }],
          faults: { appStoreRetries: { enabled: false } },
        }
        """

    /// The first genuine webhook that grants a purchase.
    static func purchaseWebhook(in planned: [PlannedDelivery]) throws -> PlannedDelivery {
        try #require(
            planned.first {
                guard case .notification = $0.action.delivery else { return false }
                return $0.forgery == nil && $0.network == nil && $0.action.truth.kind == .grant
            }
        )
    }

    /// A scheduler over a pipeline of `planned` (signed as "signed") whose clock reads `clock`, with the schedule
    /// ending at 4 s and follow-ups at 10 s; the pipeline is not started.
    static func scheduler(
        _ planned: [PlannedDelivery],
        profile: Profile,
        endpoints: Endpoints,
        checker: Checker,
        recorder: LoadRecorder,
        clock: Double,
        attempts: WebhookAttempts? = nil
    ) throws -> (RunScheduler, MintPipeline) {
        let pipeline = MintPipeline(
            stream: planned.makeIterator(),
            sign: { $0.sends ? Array("signed".utf8) : nil },
            cache: BodyCache(),
            clock: { clock },
            shedAfter: MintPipeline.defaultShedAfter,
            limits: MintBufferLimits(),
            batchSize: 256
        )
        let scheduler = RunScheduler(
            pipeline: pipeline,
            cache: BodyCache(),
            bodies: DeliveryBodies(minter: Minter(pki: try TestPKI.generate()), endpoints: endpoints),
            checker: checker,
            policy: ChaosPolicy(profile: profile),
            endpoints: endpoints,
            history: try HistoryLog(directory: nil, capBytes: 1 << 20, startMillis: start),
            recorder: recorder,
            only: nil,
            restartWindows: RestartWindows([]),
            endOfSchedule: 4,
            endOfFollowUps: 10,
            attempts: attempts
        )
        return (scheduler, pipeline)
    }

    /// Drives the scheduler as the engine's thread does, over a pipeline whose clock is far past the schedule
    /// (so it sheds every delivery that sends), and returns the engine's view.
    static func drive(
        _ planned: [PlannedDelivery],
        profile: Profile,
        checker: Checker,
        recorder: LoadRecorder
    ) throws -> (takes: Int, requests: Int, booked: Int) {
        let endpoints = Endpoints(
            webhook: try #require(profile.target.webhook),
            deviceDelivery: profile.target.deviceDelivery,
            deviceReport: profile.target.deviceReport,
            probe: nil,
            headers: [],
            probeMapping: nil
        )
        let (scheduler, pipeline) = try Self.scheduler(
            planned,
            profile: profile,
            endpoints: endpoints,
            checker: checker,
            recorder: recorder,
            clock: 1_000
        )
        pipeline.start()
        defer { pipeline.stopAndWait() }
        var (takes, requests, booked) = (0, 0, 0)
        let deadline = Date(timeIntervalSinceNow: 30)
        while let due = scheduler.nextDue(), Date() < deadline {
            guard scheduler.nextIsReady else {
                Thread.sleep(forTimeInterval: 0.001)
                continue
            }
            takes += 1
            if scheduler.take(due) != nil { requests += 1 }
            booked += scheduler.takeBookedMissed()
        }
        scheduler.flushShed()
        return (takes, requests, booked)
    }

    @Test func shedDeliveriesAreBookedInBulkAsMissedWithoutARequestEach() throws {
        let profile = try Profile.decode(Data(Self.profile.utf8), file: "shed.json5")
        let planned = Array(ChaosStream(World(profile: profile, startMillis: Self.start), profile: profile))
        let sending = planned.filter(\.sends).count
        try #require(sending > 500)
        let checker = Checker(profile: profile, startMillis: Self.start)
        let recorder = try LoadRecorder(directory: nil)
        let engine = try Self.drive(planned, profile: profile, checker: checker, recorder: recorder)
        // Nothing reaches the engine as a request; it is told how many were missed instead.
        #expect(engine.requests == 0)
        #expect(engine.booked == sending)
        #expect(recorder.totals.missed == sending && recorder.totals.scheduled == sending)
        #expect(recorder.totals.sent == 0)
        // A take books a whole run of shed deliveries, not one each.
        #expect(engine.takes * 10 < sending)
        // The oracle booked every one of them.
        let accounts = Set(planned.filter(\.sends).map(\.action.appAccountToken))
        #expect(Set(checker.knownAccounts()) == accounts)
    }

    @Test func purchaseWhoseCopyWasShedIsNotJudgedLostByTheTarget() throws {
        let profile = try Profile.decode(Data(Self.profile.utf8), file: "shed.json5")
        var planned = Array(ChaosStream(World(profile: profile, startMillis: Self.start), profile: profile))
        let webhook = try Self.purchaseWebhook(in: planned)
        let account = webhook.action.appAccountToken
        // The purchase's webhook went out and was rejected; its delayed duplicate is due later, and is shed.
        var copy = webhook
        copy.id = 9_000_000
        copy.copy = .delayedDuplicate
        copy.sameBytesAs = webhook.id
        copy.at = webhook.at + 0.5
        // Only the copy can speak for the purchase: the account's other deliveries are left out.
        planned.removeAll { $0.action.appAccountToken == account }
        planned.insert(copy, at: planned.firstIndex { $0.at >= copy.at } ?? planned.endIndex)
        func rejected() -> Checker {
            let checker = Checker(profile: profile, startMillis: Self.start)
            checker.sent(webhook, at: webhook.at)
            checker.record(webhook, outcome: .rejected(status: 500), at: webhook.at + 0.01)
            return checker
        }
        // Without the copy, a rejected purchase that the target never granted is lost: the check can fail.
        let alone = rejected().check(account: account, state: AccountState(), at: 30, final: true)
        #expect(alone.contains { if case .fail = $0.outcome { $0.invariant == .noLostPurchase } else { false } })

        let checker = rejected()
        _ = try Self.drive(planned, profile: profile, checker: checker, recorder: try LoadRecorder(directory: nil))
        // The shed copy never left the harness: the target cannot be blamed for a purchase it may never have seen.
        let results = checker.check(account: account, state: AccountState(), at: 30, final: true)
        #expect(!results.contains { if case .fail = $0.outcome { $0.invariant == .noLostPurchase } else { false } })
    }
}
