import AppStoreModel
import Foundation
import Primitives
import Profile
import Testing

@testable import Simulation

/// A profile with every product type, two groups, grace and retry, offers, family sharing, Ask to Buy and
/// mid-stream refunds, so a short run exercises every lifecycle.
func richProfile(seed: UInt64 = 7, accounts: Int = 40, seconds: Double = 120, devices: Int = 2) throws -> Profile {
    let text = """
        {
          name: "rich", seed: \(seed),
          target: { embeddedLedger: true, bundleId: "com.example.test" },
          catalog: {
            groups: [
              { id: "premium", gracePeriodSeconds: 2, billingRetrySeconds: 6 },
              { id: "news", billingRetrySeconds: 4 },
            ],
            products: [
              { id: "coins", type: "consumable", priceMilli: 990 },
              { id: "pro", type: "nonConsumable", priceMilli: 4990, familyShareable: true },
              { id: "gold", type: "autoRenewable", group: "premium", level: 1, priceMilli: 9990, periodSeconds: 4,
                familyShareable: true,
                offers: [
                  { id: "gold.intro", kind: "introductory", discount: "freeTrial", periods: 1 },
                  { id: "gold.promo", kind: "promotional", discount: "payAsYouGo", priceMilli: 4990, periods: 2 },
                ] },
              { id: "silver", type: "autoRenewable", group: "premium", level: 2, priceMilli: 4990, periodSeconds: 4,
                offers: [{ id: "silver.promo", kind: "promotional", discount: "payUpFront", priceMilli: 1990, periods: 1 }] },
              { id: "bronze", type: "autoRenewable", group: "premium", level: 3, priceMilli: 2990, periodSeconds: 4 },
              { id: "daily", type: "autoRenewable", group: "news", level: 1, priceMilli: 990, periodSeconds: 3 },
              { id: "pass", type: "nonRenewing", priceMilli: 2990, periodSeconds: 10 },
            ],
          },
          population: { accounts: \(accounts), devicesPerAccount: \(devices), familySharingFraction: 0.5 },
          actionMix: {
            consumable: 2, nonConsumable: 2, subscribe: 4, nonRenewing: 1, cancel: 1, resume: 1, upgrade: 1,
            downgrade: 1, refund: 2, refundReversal: 1, billingFailure: 2, offerRedemption: 1, priceIncrease: 1,
            deviceReport: 1, renewalExtension: 1,
          },
          timeCompression: { secondsPerMonth: 4 },
          schedule: [{ kind: "constant", rate: 10, seconds: \(seconds) }],
          faults: {
            askToBuy: { probability: 0.1, pendingSeconds: 2, approveProbability: 0.5 },
            refundMidStream: { probability: 0.05 },
          },
        }
        """
    return try Profile.decode(Data(text.utf8), file: "rich.json5")
}

let start: Int64 = 1_800_000_000_000

func run(_ profile: Profile) -> [Action] {
    Array(World(profile: profile, startMillis: start))
}

struct SimulationTests {
    @Test func sameSeedGivesSameStream() throws {
        let a = run(try richProfile(seed: 11))
        let b = run(try richProfile(seed: 11))
        #expect(a.count > 500)
        #expect(a == b)
    }

    @Test(arguments: [(1 as UInt64, 2 as UInt64), (3, 4)])
    func differentSeedGivesDifferentStream(first: UInt64, second: UInt64) throws {
        #expect(run(try richProfile(seed: first)) != run(try richProfile(seed: second)))
    }

    @Test func streamIsTimeOrderedAndNumbered() throws {
        let actions = run(try richProfile())
        for (index, action) in actions.enumerated() {
            #expect(action.sequence == UInt64(index))
            if index > 0 { #expect(actions[index - 1].at <= action.at) }
        }
    }

    @Test func generatorIsStable() {
        var rng = SplitMix64(seed: 0)
        // Reference values of SplitMix64 from seed 0 (Vigna's splitmix64.c).
        #expect(rng.next() == 0xE220_A839_7B1D_CDAF)
        #expect(rng.next() == 0x6E78_9E6A_A1B9_65F4)
        #expect(SplitMix64.uuid(0, 0) == "00000000-0000-4000-8000-000000000000")
    }

    /// Seed 8: family revocations are rare (each account buys its one shareable non-consumable once), and this
    /// seed's run has some.
    @Test func everyLifecycleHappens() throws {
        let seen = Set(run(try richProfile(seed: 8, accounts: 30, seconds: 200)).map(\.lifecycle))
        let missing = Set(Lifecycle.allCases).subtracting(seen)
        #expect(missing.isEmpty, "never produced: \(missing.map(\.rawValue).sorted())")
    }

    static let expectations: [(Lifecycle, String, String?)] = [
        (.purchase, "ONE_TIME_CHARGE", nil), (.familyShare, "ONE_TIME_CHARGE", nil),
        (.subscribe, "SUBSCRIBED", "INITIAL_BUY"), (.resubscribe, "SUBSCRIBED", "RESUBSCRIBE"),
        (.renewal, "DID_RENEW", nil), (.billingRecovery, "DID_RENEW", "BILLING_RECOVERY"),
        (.gracePeriodExpired, "GRACE_PERIOD_EXPIRED", nil), (.upgrade, "DID_CHANGE_RENEWAL_PREF", "UPGRADE"),
        (.downgrade, "DID_CHANGE_RENEWAL_PREF", "DOWNGRADE"),
        (.autoRenewDisabled, "DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_DISABLED"),
        (.autoRenewEnabled, "DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_ENABLED"),
        (.priceIncreasePending, "PRICE_INCREASE", "PENDING"), (.priceIncreaseAccepted, "PRICE_INCREASE", "ACCEPTED"),
        (.refund, "REFUND", nil), (.consumptionRequest, "CONSUMPTION_REQUEST", nil),
        (.refundDeclined, "REFUND_DECLINED", nil), (.familyRevoke, "REVOKE", nil),
        (.refundReversal, "REFUND_REVERSED", nil), (.renewalExtended, "RENEWAL_EXTENDED", nil),
        (.renewalExtensionFailed, "RENEWAL_EXTENSION", "FAILURE"),
    ]

    @Test(arguments: expectations)
    func lifecycleUsesMatrixTypeAndSubtype(lifecycle: Lifecycle, type: String, subtype: String?) throws {
        let notes = run(try richProfile(seed: 8, accounts: 30, seconds: 200)).compactMap {
            action -> NotificationFacts? in
            guard action.lifecycle == lifecycle, case .notification(let note) = action.delivery else { return nil }
            return note
        }
        #expect(!notes.isEmpty)
        for note in notes {
            #expect(note.notificationType.rawValue == type)
            #expect(note.payload.subtype?.rawValue == subtype)
            #expect(note.payload.version == "2.0")
            #expect(note.transaction != nil)
            if note.transaction?.type == "Auto-Renewable Subscription" {
                #expect(note.renewal?.originalTransactionId == note.transaction?.originalTransactionId)
                #expect(note.payload.data?.status != nil)
            } else {
                #expect(note.renewal == nil && note.payload.data?.status == nil)
            }
        }
    }

    @Test func fieldsAreCorrectlyRelated() throws {
        let profile = try richProfile(accounts: 30, seconds: 200)
        var lastPeriod: [String: (transaction: String, expires: Int64)] = [:]
        var uuids = Set<String>()
        for action in run(profile) {
            if case .notification(let note) = action.delivery {
                #expect(uuids.insert(note.notificationUUID).inserted)
                #expect(note.signedDate == start + Int64((action.truth.effectiveDate - start)))
            }
            guard let tx = action.transaction else { continue }
            #expect(tx.payload.appAccountToken == action.appAccountToken)
            #expect(UUID(uuidString: action.appAccountToken) != nil)
            #expect(tx.payload.bundleId == "com.example.test")
            #expect(tx.payload.environment == "Sandbox")
            #expect(tx.payload.currency == "USD" && tx.payload.storefront == "USA")
            #expect((tx.payload.price ?? -1) >= 0)
            #expect(tx.purchaseDate >= (tx.payload.originalPurchaseDate ?? .max))
            #expect(tx.signedDate >= start)
            switch tx.type {
            case "Auto-Renewable Subscription":
                let expires = try #require(tx.payload.expiresDate)
                #expect(expires > tx.purchaseDate)
                #expect(tx.payload.webOrderLineItemId != nil && tx.payload.subscriptionGroupIdentifier != nil)
                if action.lifecycle == .renewal {
                    #expect(tx.payload.transactionReason == "RENEWAL")
                    #expect(tx.transactionId != tx.originalTransactionId)
                    if let previous = lastPeriod[tx.originalTransactionId],
                        UInt64(previous.transaction)! < UInt64(tx.transactionId)!
                    {
                        #expect(tx.purchaseDate == previous.expires)
                    }
                }
                // Deliveries of one event are jittered, so the latest period is the one with the highest ID (a
                // renewal extension grants the same one again, ending later).
                let last = lastPeriod[tx.originalTransactionId]
                if action.truth.kind == .grant, UInt64(last?.transaction ?? "0")! <= UInt64(tx.transactionId)! {
                    let sameEnd = last?.transaction == tx.transactionId ? max(last!.expires, expires) : expires
                    lastPeriod[tx.originalTransactionId] = (tx.transactionId, sameEnd)
                }
                if tx.payload.offerType == 1 {
                    #expect(tx.payload.offerDiscountType == "FREE_TRIAL" && tx.payload.price == 0)
                }
            case "Consumable":
                #expect((1...3).contains(tx.quantity))
                #expect(tx.payload.price == 990 * Int64(tx.quantity))
                #expect(tx.transactionId == tx.originalTransactionId && tx.payload.expiresDate == nil)
            default:
                #expect(tx.payload.expiresDate == nil && tx.quantity == 1)
            }
            // A member's shared subscription renews, expires and changes with the purchaser's lifecycles.
            if tx.payload.inAppOwnershipType == "FAMILY_SHARED" {
                #expect(tx.payload.price == 0 && tx.payload.offerType == nil)
            } else {
                #expect(tx.payload.inAppOwnershipType == "PURCHASED")
                #expect(![.familyShare, .familySubscribe, .familyRevoke].contains(action.lifecycle))
            }
            let revoked = action.lifecycle == .refund || action.lifecycle == .familyRevoke
            #expect((tx.payload.revocationDate != nil) == revoked)
            if revoked {
                #expect(tx.payload.revocationPercentage == (action.lifecycle == .refund ? 100_000 : nil))
                #expect(tx.payload.revocationType == (action.lifecycle == .refund ? "REFUND_FULL" : "FAMILY_REVOKE"))
                #expect(action.truth.kind == .revoke)
            }
        }
    }

    @Test func askToBuyIsPendingThenResolved() throws {
        let actions = run(try richProfile(accounts: 30, seconds: 200))
        let pending = actions.filter { $0.lifecycle == .askToBuyPending }
        #expect(!pending.isEmpty)
        for action in pending {
            guard case .report(let report) = action.delivery else {
                Issue.record("pending without a report")
                continue
            }
            #expect(report.purchaseResult == "pending")
            #expect(action.truth.kind == .pending)
        }
        let approved = actions.filter { $0.lifecycle == .askToBuyApproved }
        for action in approved {
            if case .device(let device) = action.delivery { #expect(device.source == .updates) }
        }
        #expect(actions.contains { $0.lifecycle == .askToBuyDeclined && !$0.delivery.sends })
    }

    @Test(arguments: [1, 3])
    func everyDeviceGetsSubscriptionUpdates(devices: Int) throws {
        let actions = run(try richProfile(seconds: 60, devices: devices))
        var perEvent: [UInt64: Set<Int>] = [:]
        for action in actions where action.lifecycle == .renewal {
            if case .device(let delivery) = action.delivery {
                perEvent[action.event, default: []].insert(delivery.device)
            }
        }
        #expect(!perEvent.isEmpty)
        #expect(perEvent.values.allSatisfy { $0.count == devices })
    }

    @Test func tokensAreStableAndDistinct() {
        let tokens = (0..<1000).map { World.appAccountToken(seed: 5, account: $0) }
        #expect(Set(tokens).count == 1000)
        #expect(tokens[7] == World.appAccountToken(seed: 5, account: 7))
        #expect(tokens[7] != World.appAccountToken(seed: 6, account: 7))
    }
}

struct PayloadMappingTests {
    @Test func encodesEveryPayloadWithoutNulls() throws {
        let encoder = AppStoreJSON.encoder()
        var types = Set<String>()
        for action in run(try richProfile(accounts: 20, seconds: 60)) {
            switch action.delivery {
            case .notification(let note):
                // As the Minter signs it: the nested objects' JWS in `data`.
                var payload = note.payload
                payload.data?.signedTransactionInfo = note.transaction.map { _ in "t.t.t" }
                payload.data?.signedRenewalInfo = note.renewal.map { _ in "r.r.r" }
                let json = String(decoding: try encoder.encode(payload), as: UTF8.self)
                #expect(!json.contains("null"))
                types.insert(note.notificationType.rawValue)
                for nested in [
                    try note.transaction.map { try encoder.encode($0.payload) }, try note.renewal.map(encoder.encode),
                ] {
                    #expect(nested.map { !String(decoding: $0, as: UTF8.self).contains("null") } ?? true)
                }
            case .device(let device):
                let json = String(decoding: try encoder.encode(device.transaction.payload), as: UTF8.self)
                #expect(json.contains("\"price\":\(device.transaction.payload.price ?? -1)"))
                #expect(!json.contains("null"))
            case .report(let report):
                let body = try JSONSerialization.jsonObject(with: Data(report.body)) as? [String: String]
                #expect(body?["purchaseResult"] == report.purchaseResult)
            case .marker:
                break
            }
        }
        #expect(types.count > 8)
    }
}

/// Arrivals follow the profile's schedule exactly: a rate of 0 sends nothing new, and a ramp from 0
/// integrates to what it promises.
struct ScheduleArrivalTests {
    /// A consumable-only profile, so that every purchase is one arrival and nothing else is scheduled.
    func profile(_ schedule: String) throws -> Profile {
        let text = """
            {
              name: "arrivals", seed: 5,
              target: { embeddedLedger: true, bundleId: "com.example.test" },
              catalog: { products: [{ id: "coins", type: "consumable", priceMilli: 990 }] },
              population: { accounts: 50, devicesPerAccount: 1 },
              actionMix: { consumable: 1 },
              schedule: \(schedule),
            }
            """
        return try Profile.decode(Data(text.utf8), file: "arrivals.json5")
    }

    /// The times of the purchases (one per arrival).
    func purchaseTimes(_ profile: Profile) -> [Double] {
        var seen = Set<UInt64>()
        return run(profile).filter { $0.lifecycle == .purchase && seen.insert($0.event).inserted }.map(\.at)
    }

    @Test(arguments: [
        #"[{ kind: "constant", rate: 10, seconds: 2 }, { kind: "constant", rate: 0, seconds: 3 }, { kind: "constant", rate: 10, seconds: 2 }]"#,
        #"[{ kind: "constant", rate: 10, seconds: 2 }, { kind: "spike", base: 0, peak: 10, atSeconds: 3, spikeSeconds: 2, seconds: 5 }]"#,
    ])
    func aPauseSendsNothingNew(schedule: String) throws {
        let times = purchaseTimes(try profile(schedule))
        #expect(times.filter { $0 >= 2 && $0 < 5 }.isEmpty, "\(times.filter { $0 >= 2 && $0 < 5 })")
        #expect(times.filter { $0 < 2 }.count == 20)
        #expect(times.filter { $0 >= 5 }.count == 20)
    }

    @Test func aRampFromZeroIntegratesExactly() throws {
        let times = purchaseTimes(try profile(#"[{ kind: "ramp", from: 0, to: 10, seconds: 10 }]"#))
        // ∫ t dt over 10 s = 50; the n-th arrival is at √(2n/1) s.
        #expect(times.count == 50)
        #expect(times.filter { $0 < 5 }.count == 13)
        #expect(abs((times.last ?? 0) - (98.0).squareRoot()) < 1e-6)
    }

    @Test(arguments: [
        RateSegment(.constant(rate: 4), seconds: 2.5),
        RateSegment(.ramp(from: 2, to: 0), seconds: 3),
        RateSegment(.steps(from: 0, to: 6, count: 3), seconds: 3),
        RateSegment(.spike(base: 1, peak: 9, atSeconds: 1, spikeSeconds: 0.5), seconds: 2),
        RateSegment(.sine(mean: 3, amplitude: 3, periodSeconds: 2), seconds: 4),
    ])
    func timeForCountInvertsTheIntegral(segment: RateSegment) {
        let total = segment.count(until: segment.seconds)
        for step in 1..<10 {
            let target = total * Double(step) / 10
            #expect(abs(segment.count(until: segment.time(forCount: target)) - target) < 1e-6)
        }
    }
}
