import Chaos
import Foundation
import Primitives
import Profile
import Simulation
import Testing

func chaosProfile(
    faults: String,
    seed: UInt64 = 3,
    seconds: Int = 30,
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
          schedule: [{ kind: "constant", rate: 10, seconds: \(seconds) }],
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
        var faults = "{}"
        var outcome: DeliveryOutcome
        var expected: [Copy]
        var description: String { "\(device ? "device" : "webhook") \(outcome) → \(expected)" }
    }

    static let followCases: [FollowCase] = [
        FollowCase(
            device: true,
            crash: true,
            afterSuccess: false,
            outcome: .acknowledged(status: 200),
            expected: [.redelivery]
        ),
        FollowCase(
            device: true,
            crash: false,
            afterSuccess: false,
            outcome: .acknowledged(status: 200),
            expected: []
        ),
        FollowCase(
            device: true,
            crash: false,
            afterSuccess: false,
            outcome: .rejected(status: 503),
            expected: [.redelivery]
        ),
        FollowCase(
            device: true,
            network: .lostResponse,
            crash: false,
            afterSuccess: false,
            outcome: .indeterminate(reason: "lost"),
            expected: [.redelivery]
        ),
        FollowCase(
            device: false,
            crash: false,
            afterSuccess: true,
            outcome: .acknowledged(status: 200),
            expected: [.afterSuccessDuplicate]
        ),
        // No after-200 duplicate without a 2xx; the rejection itself is retried.
        FollowCase(
            device: false,
            crash: false,
            afterSuccess: true,
            outcome: .rejected(status: 500),
            expected: [.retry]
        ),
        FollowCase(
            device: false,
            crash: false,
            afterSuccess: false,
            outcome: .rejected(status: 500),
            expected: [.retry]
        ),
        // A refused connection is an attempt the App Store sees fail: it retries (a device does not relaunch).
        FollowCase(
            device: false,
            crash: false,
            afterSuccess: false,
            outcome: .notSent(reason: "refused"),
            expected: [.retry]
        ),
        FollowCase(
            device: true,
            crash: false,
            afterSuccess: false,
            outcome: .notSent(reason: "no device endpoint"),
            expected: []
        ),
        FollowCase(
            device: false,
            crash: false,
            afterSuccess: false,
            outcome: .indeterminate(reason: "timeout"),
            expected: [.retry]
        ),
        // A slot the harness missed (behind its schedule) never reached the target: no retry adds to the load.
        FollowCase(
            device: false,
            crash: false,
            afterSuccess: false,
            outcome: .notSent(reason: "missed", harnessLimited: true),
            expected: []
        ),
        FollowCase(
            device: false,
            crash: false,
            afterSuccess: false,
            outcome: .notSent(reason: "refused"),
            expected: [.retry]
        ),
        // Retries off plays the sandbox, which attempts once; a lost response still gets its one retry.
        FollowCase(
            device: false,
            crash: false,
            afterSuccess: false,
            faults: "{ appStoreRetries: { enabled: false } }",
            outcome: .rejected(status: 500),
            expected: []
        ),
        FollowCase(
            device: false,
            network: .lostResponse,
            crash: false,
            afterSuccess: false,
            faults: "{ appStoreRetries: { enabled: false } }",
            outcome: .indeterminate(reason: "lost"),
            expected: [.retry]
        ),
        FollowCase(
            device: false,
            network: .lostResponse,
            crash: false,
            afterSuccess: false,
            outcome: .indeterminate(reason: "lost"),
            expected: [.retry]
        ),
    ]

    @Test(arguments: followCases)
    func followUpsMatchOutcome(c: FollowCase) throws {
        let profile = try chaosProfile(faults: c.faults)
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
            #expect(follow.at >= 10)
            #expect(follow.id != delivery.id && follow.id >= 1 << 43 && follow.id < 1 << 44)
            if case .device(let device) = follow.action.delivery { #expect(device.source == .unfinished) }
        }
    }

    /// The first planned webhook of a profile, stripped of its own faults.
    func firstWebhook(_ profile: Profile) throws -> PlannedDelivery {
        var delivery = try #require(
            deliveries(profile).first { if case .notification = $0.action.delivery { true } else { false } }
        )
        delivery.network = nil
        delivery.afterSuccessDelays = []
        return delivery
    }

    /// Plays `outcomes` as the answers to a webhook and its retries (each answered 0.05 s after it is due) and
    /// returns every attempt.
    func attempts(of delivery: PlannedDelivery, _ profile: Profile, _ outcomes: [DeliveryOutcome]) -> [PlannedDelivery]
    {
        let policy = ChaosPolicy(profile: profile)
        var all = [delivery]
        for outcome in outcomes {
            guard let last = all.last else { break }
            let next = policy.followUps(after: last, outcome: outcome, at: last.at + 0.05).filter { $0.copy == .retry }
            guard let retry = next.first else { break }
            all.append(retry)
        }
        return all
    }

    /// Apple's schedule alone, without the real-time floor between attempts.
    static let noFloor = "{ appStoreRetries: { floorSeconds: 0 } }"

    @Test func unacknowledgedWebhookIsRetriedOnApplesScheduleFromItsFirstAttempt() throws {
        // A month of 60 s: an hour is 60 / 720 s.
        let profile = try chaosProfile(faults: Self.noFloor)
        let first = try firstWebhook(profile)
        let chain = attempts(of: first, profile, Array(repeating: .rejected(status: 500), count: 8))
        #expect(chain.count == 6)
        let offsets = chain.dropFirst().map { $0.at - first.at }
        let expected = [1.0, 12, 24, 48, 72].map { $0 * 60 / 720 }
        #expect(zip(offsets, expected).allSatisfy { abs($0 - $1) < 1e-9 }, "\(offsets)")
        for (index, retry) in chain.dropFirst().enumerated() {
            // The same bytes: the same notificationUUID and signedDate, resent, not re-signed.
            #expect(retry.sameBytesAs == first.id)
            #expect(retry.action == first.action)
            #expect(retry.attempt == index + 1)
            #expect(retry.faults.map(\.fault) == ["appStoreRetry"])
        }
    }

    /// A witness keeps 44 bits of a delivery's number: every attempt of a chain has its own number that fits,
    /// distinct from the planned ones and from the chains of the delivery's after-success duplicates (a delivery
    /// that is retried was not acknowledged, so its first duplicate, follow-up 0 like its retry, never exists).
    @Test func everyAttemptOfAChainHasItsOwnNumberInFortyFourBits() throws {
        let profile = try chaosProfile(faults: Self.noFloor)
        let first = try firstWebhook(profile)
        let chain = attempts(of: first, profile, Array(repeating: .rejected(status: 500), count: 8))
        let duplicates = (1..<10).map { ChaosPolicy.followUpID(of: first.id, $0) }
        let ids = chain.map(\.id) + duplicates + duplicates.map { ChaosPolicy.followUpID(of: $0, 0) }
        #expect(Set(ids).count == 6 + 9 + 9, "\(ids)")
        #expect(ids.dropFirst().allSatisfy { $0 >= 1 << 43 && $0 < 1 << 44 - 1 }, "\(ids)")
        // Past the sizes the number spells, a follow-up still gets a number of its own.
        #expect(ChaosPolicy.followUpID(of: 1 << 40, 0) != ChaosPolicy.followUpID(of: 1 << 40 + 1, 0))
    }

    /// Compressed, Apple's five retries fall within half a second of a refused attempt (an hour is 8 ms with a 6 s
    /// month): the floor gives the backend real seconds to act on between attempts, Apple's later slots kept.
    @Test func retriesComeNoSoonerThanTheFloorAfterTheAttemptBefore() throws {
        let profile = try chaosProfile(faults: "{ appStoreRetries: { floorSeconds: 2.5 } }")
        let first = try firstWebhook(profile)
        let chain = attempts(of: first, profile, Array(repeating: .rejected(status: 500), count: 8))
        #expect(chain.count == 6)
        // Each answered 0.05 s after it was due; the 72-hour slot (6 s after the first attempt) is earlier.
        let gaps = zip(chain.dropFirst(), chain).map { $0.at - $1.at }
        #expect(gaps.allSatisfy { abs($0 - 2.55) < 1e-9 }, "\(gaps)")
        // A slot later than the floor is kept: 96 hours of a 60 s month come 8 s after the first attempt.
        let slow = try chaosProfile(faults: "{ appStoreRetries: { floorSeconds: 2.5, scheduleHours: [1, 96] } }")
        let slowFirst = try firstWebhook(slow)
        let slowChain = attempts(of: slowFirst, slow, Array(repeating: .rejected(status: 500), count: 3))
        #expect(abs(slowChain[1].at - (slowFirst.at + 2.55)) < 1e-9)
        #expect(abs(slowChain[2].at - (slowFirst.at + 96 * 60 / 720)) < 1e-9)
    }

    /// A restart that declares 96 hours of App Store time (8 s with a 60 s month) from its kill: Apple's retries of a
    /// notification refused inside it keep their compressed schedule there (the target is down, nothing to act on),
    /// and the floor applies again to the first slot after it.
    @Test func retriesInsideADeclaredOutageKeepApplesScheduleAndTheFloorComesBackAfterIt() throws {
        let profile = try chaosProfile(
            faults: "{ targetRestart: { count: 1, outageHours: 96 }, appStoreRetries: { floorSeconds: 2 } }"
        )
        let policy = ChaosPolicy(profile: profile)
        let outage = try #require(policy.declaredOutages.first)
        #expect(policy.declaredOutages.count == 1 && abs(outage.upperBound - outage.lowerBound - 8) < 1e-9)
        #expect(outage.lowerBound == TargetRestartEvent.planned(by: profile).first?.at)
        #expect(policy.inDeclaredOutage(outage.lowerBound) && !policy.inDeclaredOutage(outage.upperBound))
        let refused = Array(repeating: DeliveryOutcome.notSent(reason: "refused"), count: 8)
        var first = try firstWebhook(profile)
        first.at = outage.lowerBound + 0.5
        let inside = attempts(of: first, profile, refused)
        // All six attempts inside: 1, 12, 24, 48 and 72 hours after the first, compressed, no floor between them.
        let offsets = inside.dropFirst().map { $0.at - first.at }
        let expected = [1.0, 12, 24, 48, 72].map { $0 * 60 / 720 }
        #expect(inside.count == 6 && zip(offsets, expected).allSatisfy { abs($0 - $1) < 1e-9 }, "\(offsets)")
        // Refused 7 s after the kill: the 1-hour slot is inside, the 12-hour one falls at the outage's end, where
        // the floor holds it 2 s after the attempt before.
        first.at = outage.lowerBound + 7
        let late = attempts(of: first, profile, refused)
        #expect(abs(late[1].at - (first.at + 60.0 / 720)) < 1e-9)
        #expect(abs(late[2].at - (late[1].at + 0.05 + 2)) < 1e-9)
        // Without a declared outage nothing is inside one.
        #expect(
            ChaosPolicy(profile: try chaosProfile(faults: "{ targetRestart: { count: 2 } }")).declaredOutages.isEmpty
        )
    }

    @Test func retriesStopOnceAnAttemptIsAcknowledged() throws {
        let profile = try chaosProfile(faults: "{}")
        let chain = attempts(
            of: try firstWebhook(profile),
            profile,
            [.notSent(reason: "refused"), .indeterminate(reason: "timeout"), .acknowledged(status: 200)]
        )
        #expect(chain.map(\.attempt) == [0, 1, 2])
    }

    @Test func answerLaterThanTheNextSlotIsRetriedWhenKnownNeverBefore() throws {
        let profile = try chaosProfile(faults: Self.noFloor)
        let first = try firstWebhook(profile)
        // A timeout known 5 s after the first attempt: the 1-hour slot (0.083 s) has passed.
        let next = ChaosPolicy(profile: profile).followUps(
            after: first,
            outcome: .indeterminate(reason: "timeout"),
            at: first.at + 5
        )
        #expect(next.map(\.at) == [first.at + 5])
        #expect(next.first?.firstAttemptAt == first.at)
    }

    @Test func lostResponseRetryIsTheChainsSecondAttempt() throws {
        let profile = try chaosProfile(
            faults: "{ lostResponse: { probability: 0.5, retrySeconds: 3 }, appStoreRetries: { floorSeconds: 0 } }"
        )
        var first = try firstWebhook(profile)
        first.network = .lostResponse
        let chain = attempts(
            of: first,
            profile,
            [.indeterminate(reason: "lost")] + Array(repeating: .rejected(status: 500), count: 8)
        )
        // The lost answer's own retry, then Apple's schedule from the first attempt: 6 attempts in all.
        #expect(chain.count == 6)
        #expect(abs(chain[1].at - (first.at + 0.05 + 3)) < 1e-9)
        #expect(chain[1].faults.map(\.fault) == ["lostResponse"])
        // The 12-hour slot (1 s) passed while the lost answer's retry waited: the next attempt goes when known.
        #expect(abs(chain[2].at - (chain[1].at + 0.05)) < 1e-9)
        #expect(abs(chain[4].at - (first.at + 48 * 60 / 720)) < 1e-9)
        #expect(abs(chain[5].at - (first.at + 72 * 60 / 720)) < 1e-9)
    }

    @Test func forgedWebhooksAreNeverRetried() throws {
        let profile = try chaosProfile(faults: "{ forgery: { probability: 1, kinds: [\"alg-none\"] } }")
        let forged = try #require(
            deliveries(profile).first { if case .notification = $0.action.delivery { $0.isForged } else { false } }
        )
        let policy = ChaosPolicy(profile: profile)
        for outcome in [
            DeliveryOutcome.rejected(status: 401), .notSent(reason: "refused"), .indeterminate(reason: "x"),
        ] {
            #expect(policy.followUps(after: forged, outcome: outcome, at: forged.at + 1).isEmpty)
        }
    }

    /// Issue 9 item 6: a whole run's planned stream, with its retries and redeliveries, never sends a delivery
    /// before the signedDate it carries (reordering once moved 7-24% of notifications earlier).
    @Test(arguments: [3 as UInt64, 4, 5])
    func noDeliveryIsDueBeforeItsSignedDate(seed: UInt64) throws {
        let faults = """
            {
              reorder: { probability: 0.6, windowSeconds: 4 },
              duplicate: { probability: 0.4, maxCopies: 3, maxDelaySeconds: 2 },
              lostResponse: { probability: 0.2, retrySeconds: 1 }, networkTimeout: { probability: 0.1 },
              crashBeforeFinish: { probability: 0.2 }, lateListener: { probability: 0.2, delaySeconds: 2 },
              forgery: { probability: 0.1 }, refundMidStream: { probability: 0.2 },
            }
            """
        let profile = try chaosProfile(faults: faults, seed: seed, seconds: 60)
        let world = World(profile: profile, startMillis: 1_800_000_000_000)
        let policy = ChaosPolicy(profile: profile)
        var rng = SplitMix64(seed: seed)
        var work = Array(ChaosStream(world, profile: profile))
        var checked = 0
        var reordered = 0
        var followUps = 0
        while let delivery = work.popLast() {
            if let signed = delivery.signedDate {
                #expect(world.millis(delivery.at) >= signed, "delivery \(delivery.id) \(delivery.faults)")
                checked += 1
            }
            if delivery.faults.contains(where: { $0.fault == "reorder" }) { reordered += 1 }
            if delivery.attempt > 0 { followUps += 1 }
            guard delivery.sends else { continue }
            // Every kind of answer, late or quick, so every follow-up rule is exercised.
            let outcomes: [DeliveryOutcome] = [
                .acknowledged(status: 200), .rejected(status: 503), .indeterminate(reason: "timeout"),
                .notSent(reason: "refused"),
            ]
            let outcome = outcomes[rng.below(outcomes.count)]
            work += policy.followUps(after: delivery, outcome: outcome, at: delivery.at + rng.between(0, 1))
        }
        #expect(checked > 500 && reordered > 100 && followUps > 100, "\(checked) \(reordered) \(followUps)")
    }
}

/// A run's identities (account tokens, transaction IDs) live in a namespace beside the seed, so that a second run
/// of a seed against a target that kept the first one's purchases does not deliver them again.
struct IdentityNamespaceTests {
    /// What a delivery is, without the identities that name it.
    struct Shape: Hashable {
        var id: UInt64, at: Double, account: Int, lifecycle: String, kind: String, product: String?
        var forgery: String?, network: String?, faults: [String], copy: String

        init(_ planned: PlannedDelivery) {
            (id, at, account) = (planned.id, planned.at, planned.action.account)
            lifecycle = "\(planned.action.lifecycle)"
            kind = "\(planned.action.truth.kind)"
            product = planned.action.truth.productId
            (forgery, network) = (planned.forgery, planned.network.map { "\($0)" })
            faults = planned.faults.map(\.fault)
            copy = "\(planned.copy)"
        }
    }

    @Test func theSeedDecidesWhatHappensAndTheNamespaceOnlyWhatItIsCalled() throws {
        var own = try chaosProfile(faults: ChaosTests.all, seconds: 20)
        own.faults.targetRestart = nil
        var other = own
        other.namespace = 0x5A17
        let (a, b) = (deliveries(own), deliveries(other))
        #expect(a.count > 150)
        #expect(a.map(Shape.init) == b.map(Shape.init))
        // Every identity differs: no account token and no transaction ID of one is the other's.
        #expect(Set(a.map(\.action.appAccountToken)).isDisjoint(with: b.map(\.action.appAccountToken)))
        let ids = { (stream: [PlannedDelivery]) in Set(stream.compactMap(\.action.truth.transactionId)) }
        #expect(!ids(a).isEmpty && ids(a).isDisjoint(with: ids(b)))
        let uuids = { (stream: [PlannedDelivery]) in
            Set(
                stream.compactMap {
                    if case .notification(let note) = $0.action.delivery { note.notificationUUID } else { nil }
                }
            )
        }
        #expect(!uuids(a).isEmpty && uuids(a).isDisjoint(with: uuids(b)))
        // Namespace 0 is the seed's own identities, as every run had before namespaces.
        #expect(a.first?.action.appAccountToken == World.appAccountToken(seed: own.seed, account: a[0].action.account))
    }

    @Test func aNamespacesTransactionIDsFitASigned64BitColumn() throws {
        var profile = try chaosProfile(faults: "{}", seconds: 5)
        for namespace: UInt64 in [1, 0x5A17, .max] {
            profile.namespace = namespace
            for id in deliveries(profile).compactMap(\.action.truth.transactionId) {
                #expect(Int64(id) != nil, "\(id)")
            }
        }
    }

    @Test func aTokenIsFoundInItsOwnNamespaceOnly() {
        let token = World.appAccountToken(seed: 9, namespace: 77, account: 12)
        #expect(World.account(of: token.lowercased(), seed: 9, namespace: 77, accounts: 20) == 12)
        #expect(World.account(of: token, seed: 9, accounts: 20) == nil)
    }
}
