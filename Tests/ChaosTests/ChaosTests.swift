import Chaos
import Foundation
import Profile
import Simulation
import Testing

func chaosProfile(
    faults: String,
    seed: UInt64 = 3,
    environment: String = "Sandbox",
    verifierOnlineChecks: Bool = false
) throws -> Profile {
    let text = """
        {
          name: "chaos", seed: \(seed),
          target: {
            embeddedLedger: true, environment: "\(environment)", appAppleId: 1,
            verifierOnlineChecks: \(verifierOnlineChecks),
          },
          catalog: {
            groups: [{ id: "g", gracePeriodSeconds: 1, billingRetrySeconds: 3 }],
            products: [
              { id: "coins", type: "consumable", priceMilli: 990 },
              { id: "pro", type: "nonConsumable", priceMilli: 4990 },
              { id: "gold", type: "autoRenewable", group: "g", level: 1, priceMilli: 9990, periodSeconds: 3 },
            ],
          },
          population: { accounts: 20, devicesPerAccount: 2 },
          actionMix: { consumable: 1, nonConsumable: 1, subscribe: 2, refund: 0.3, billingFailure: 0.3 },
          schedule: [{ kind: "constant", rate: 10, seconds: 30 }],
          faults: \(faults),
        }
        """
    return try Profile.decode(Data(text.utf8), file: "chaos.json5")
}

func deliveries(_ profile: Profile) -> [PlannedDelivery] {
    Array(ChaosStream(World(profile: profile, startMillis: 1_800_000_000_000), profile: profile))
}

struct ChaosTests {
    static let all = """
        {
          crashBeforeFinish: { probability: 0.1 }, duplicate: { probability: 0.2, maxCopies: 3 },
          lostResponse: { probability: 0.05 }, lateListener: { probability: 0.05, delaySeconds: 2 },
          refundMidStream: { probability: 0.1 }, reorder: { probability: 0.3, windowSeconds: 1 },
          askToBuy: { probability: 0.1, pendingSeconds: 1 }, forgery: { probability: 0.1 },
          networkTimeout: { probability: 0.05 }, networkReset: { probability: 0.05 },
          targetRestart: { count: 2, killCommand: ["kill"], startCommand: ["start"] },
        }
        """

    @Test func targetVerifyingWithOnlineChecksGetsOnlyForgeriesItRejects() throws {
        // With online checks the chain is validated now, not at signedDate: these two would be accepted.
        let acceptedOnline: Set = ["signed-date-before-chain", "dates-in-seconds"]
        func sent(online: Bool) throws -> Set<String> {
            let profile = try chaosProfile(faults: "{ forgery: { probability: 1 } }", verifierOnlineChecks: online)
            return Set(deliveries(profile).compactMap(\.forgery))
        }
        #expect(try sent(online: false) == Set(Faults.forgeryKinds))
        #expect(try sent(online: true) == Set(Faults.forgeryKinds).subtracting(acceptedOnline))
    }

    @Test func sameSeedGivesSameHostileStream() throws {
        let profile = try chaosProfile(faults: Self.all)
        #expect(deliveries(profile) == deliveries(profile))
        #expect(ChaosStream(World(profile: profile, startMillis: 0), profile: profile).restarts.count == 2)
    }

    @Test func streamIsTimeOrderedWithUniqueIDs() throws {
        let planned = deliveries(try chaosProfile(faults: Self.all))
        #expect(Set(planned.map(\.id)).count == planned.count)
        for (a, b) in zip(planned, planned.dropFirst()) { #expect(a.at <= b.at) }
    }

    @Test func withoutFaultsEveryActionIsDeliveredOnceUnchanged() throws {
        let profile = try chaosProfile(faults: "{}")
        let actions = Array(World(profile: profile, startMillis: 1_800_000_000_000))
        let planned = deliveries(profile)
        #expect(planned.map(\.action) == actions)
        #expect(planned.allSatisfy { $0.copy == .original && $0.faults.isEmpty && $0.at == $0.action.at })
    }

    @Test(arguments: [
        ("{ duplicate: { probability: 0.5, concurrent: 1, afterSuccess: 0 } }", "duplicate", Copy.concurrentDuplicate),
        ("{ duplicate: { probability: 0.5, concurrent: 0, afterSuccess: 0 } }", "duplicate", Copy.delayedDuplicate),
        ("{ forgery: { probability: 0.5, kinds: [\"alg-none\"] } }", "forgery", Copy.forged),
        ("{ reorder: { probability: 0.5 } }", "reorder", Copy.original),
        ("{ crashBeforeFinish: { probability: 0.5 } }", "crashBeforeFinish", Copy.original),
        ("{ lostResponse: { probability: 0.5 } }", "lostResponse", Copy.original),
        ("{ lateListener: { probability: 0.5 } }", "lateListener", Copy.original),
        ("{ networkTimeout: { probability: 0.5 } }", "networkTimeout", Copy.original),
        ("{ networkReset: { probability: 0.5 } }", "networkReset", Copy.original),
        ("{ askToBuy: { probability: 0.5 } }", "askToBuy", Copy.original),
        ("{ refundMidStream: { probability: 0.5 } }", "refundMidStream", Copy.original),
    ])
    func faultIsInjectedAndRecorded(faults: String, name: String, copy: Copy) throws {
        let planned = deliveries(try chaosProfile(faults: faults))
        let hit = planned.filter { $0.faults.contains { $0.fault == name } }
        #expect(!hit.isEmpty)
        #expect(hit.contains { $0.copy == copy })
        #expect(hit.allSatisfy { $0.faults.allSatisfy { !$0.detail.isEmpty } })
    }

    @Test func forgedCopiesOweNothingAndUseFreshIDs() throws {
        let planned = deliveries(try chaosProfile(faults: "{ forgery: { probability: 0.5 } }"))
        let genuine = Set(planned.filter { !$0.isForged }.compactMap { $0.action.transaction?.transactionId })
        let forged = planned.filter(\.isForged)
        #expect(!forged.isEmpty)
        for delivery in forged {
            #expect(delivery.action.truth.kind == .none)
            #expect(Faults.forgeryKinds.contains(delivery.forgery ?? ""))
            #expect(!genuine.contains(delivery.action.transaction?.transactionId ?? ""))
            if case .device = delivery.action.delivery {
                #expect(delivery.forgery != "forged-inner-transaction")
            } else {
                #expect(delivery.forgery != "bare-product-id")
            }
        }
    }

    @Test func duplicatesReuseTheOriginalBytes() throws {
        let planned = deliveries(try chaosProfile(faults: "{ duplicate: { probability: 0.5 } }"))
        let byID = Dictionary(uniqueKeysWithValues: planned.map { ($0.id, $0) })
        for copy in planned where copy.copy == .concurrentDuplicate || copy.copy == .delayedDuplicate {
            let original = try #require(byID[copy.sameBytesAs ?? 0])
            #expect(original.action == copy.action)
            #expect(copy.at >= original.at)
        }
    }

    struct FollowCase: Sendable, CustomStringConvertible {
        var device: Bool
        var network: NetworkFault?
        var crash: Bool
        var afterSuccess: Bool
        var environment: String
        var outcome: DeliveryOutcome
        var expected: [Copy]
        var description: String { "\(device ? "device" : "webhook") \(outcome) → \(expected)" }
    }

    static let followCases: [FollowCase] = [
        FollowCase(
            device: true,
            crash: true,
            afterSuccess: false,
            environment: "Sandbox",
            outcome: .acknowledged(status: 200),
            expected: [.redelivery]
        ),
        FollowCase(
            device: true,
            crash: false,
            afterSuccess: false,
            environment: "Sandbox",
            outcome: .acknowledged(status: 200),
            expected: []
        ),
        FollowCase(
            device: true,
            crash: false,
            afterSuccess: false,
            environment: "Sandbox",
            outcome: .rejected(status: 503),
            expected: [.redelivery]
        ),
        FollowCase(
            device: true,
            network: .lostResponse,
            crash: false,
            afterSuccess: false,
            environment: "Sandbox",
            outcome: .indeterminate(reason: "lost"),
            expected: [.redelivery]
        ),
        FollowCase(
            device: false,
            crash: false,
            afterSuccess: true,
            environment: "Sandbox",
            outcome: .acknowledged(status: 200),
            expected: [.afterSuccessDuplicate]
        ),
        FollowCase(
            device: false,
            crash: false,
            afterSuccess: true,
            environment: "Sandbox",
            outcome: .rejected(status: 500),
            expected: []
        ),
        FollowCase(
            device: false,
            crash: false,
            afterSuccess: false,
            environment: "Production",
            outcome: .rejected(status: 500),
            expected: [.retry]
        ),
        FollowCase(
            device: false,
            crash: false,
            afterSuccess: false,
            environment: "Production",
            outcome: .notSent(reason: "missed"),
            expected: []
        ),
        FollowCase(
            device: false,
            network: .lostResponse,
            crash: false,
            afterSuccess: false,
            environment: "Sandbox",
            outcome: .indeterminate(reason: "lost"),
            expected: [.retry]
        ),
    ]

    @Test(arguments: followCases)
    func followUpsMatchOutcome(c: FollowCase) throws {
        let profile = try chaosProfile(faults: "{}", environment: c.environment)
        let planned = deliveries(profile)
        var delivery = try #require(
            planned.first { p in
                if case .device = p.action.delivery { return c.device }
                if case .notification = p.action.delivery { return !c.device }
                return false
            }
        )
        delivery.network = c.network
        delivery.crashRelaunchSeconds = c.crash ? 1 : nil
        delivery.afterSuccessDelays = c.afterSuccess ? [0.5] : []
        let next = ChaosPolicy(profile: profile).followUps(after: delivery, outcome: c.outcome, at: 10)
        #expect(next.map(\.copy) == c.expected)
        for follow in next {
            #expect(follow.sameBytesAs == delivery.id)
            #expect(follow.at > 10 || follow.copy == .afterSuccessDuplicate)
            #expect(follow.id != delivery.id && follow.id >= 1 << 62)
            if case .device(let device) = follow.action.delivery { #expect(device.source == .unfinished) }
        }
    }
}
