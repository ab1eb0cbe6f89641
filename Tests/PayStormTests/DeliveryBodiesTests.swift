import AppStoreModel
import Chaos
import Foundation
import Minting
import Profile
import Signing
import Simulation
import Testing

@testable import PayStorm

/// A run's payloads (the world's actions → `DeliveryBodies` → `Minter`) against what `paystorm mint` mints
/// for the same kind and against the fields Apple always sends (reference §4 and §5), key by key.
struct DeliveryBodiesTests {
    /// Every product type, subscriptions with offers, grace and retry, price increases, refunds, reversals
    /// and Family Sharing, so that a short run produces every notification the world can send.
    static let profile = """
        {
          name: "payloads", seed: 11,
          target: { embeddedLedger: true, deviceURL: "http://127.0.0.1:1/transactions" },
          catalog: {
            groups: [{ id: "premium", gracePeriodSeconds: 2, billingRetrySeconds: 6 }],
            products: [
              { id: "coins", type: "consumable", priceMilli: 990 },
              { id: "pro", type: "nonConsumable", priceMilli: 4990, familyShareable: true },
              { id: "gold", type: "autoRenewable", group: "premium", level: 1, priceMilli: 9990, periodSeconds: 4,
                familyShareable: true,
                offers: [
                  { id: "gold.intro", kind: "introductory", discount: "freeTrial", periods: 1 },
                  { id: "gold.promo", kind: "promotional", discount: "payAsYouGo", priceMilli: 4990, periods: 2 },
                ] },
              { id: "silver", type: "autoRenewable", group: "premium", level: 2, priceMilli: 4990, periodSeconds: 4 },
              { id: "pass", type: "nonRenewing", priceMilli: 2990, periodSeconds: 10 },
            ],
          },
          population: { accounts: 30, devicesPerAccount: 2, familySharingFraction: 0.5 },
          actionMix: {
            consumable: 2, nonConsumable: 2, subscribe: 4, nonRenewing: 1, cancel: 1, resume: 1, upgrade: 1,
            downgrade: 1, refund: 1, refundReversal: 1, billingFailure: 2, offerRedemption: 1, priceIncrease: 1,
          },
          timeCompression: { secondsPerMonth: 4 },
          schedule: [{ kind: "constant", rate: 10, seconds: 90 }],
          faults: { askToBuy: { probability: 0.1, pendingSeconds: 2 }, refundMidStream: { probability: 0.05 } },
        }
        """

    // MARK: - What Apple always sends (reference §4.1–4.4)

    static let notificationKeys: Set = ["notificationType", "notificationUUID", "data", "version", "signedDate"]
    /// `data` of a notification that carries a transaction; subscriptions add the renewal info and status.
    static let dataKeys: Set = ["appAppleId", "bundleId", "bundleVersion", "environment", "signedTransactionInfo"]
    static let subscriptionDataKeys = dataKeys.union(["signedRenewalInfo", "status"])
    static let transactionKeys: Set = [
        "originalTransactionId", "transactionId", "bundleId", "productId", "purchaseDate", "originalPurchaseDate",
        "quantity", "type", "appAccountToken", "inAppOwnershipType", "signedDate", "environment", "storefront",
        "storefrontId", "transactionReason", "currency", "price", "appTransactionId",
    ]
    static let subscriptionTransactionKeys = transactionKeys.union([
        "webOrderLineItemId", "subscriptionGroupIdentifier", "expiresDate",
    ])
    static let renewalKeys: Set = [
        "originalTransactionId", "autoRenewProductId", "productId", "autoRenewStatus", "isInBillingRetryPeriod",
        "signedDate", "environment", "recentSubscriptionStartDate", "currency", "renewalPrice", "appAccountToken",
        "appTransactionId",
    ]

    /// Optional keys whose presence follows the account's history, which the world tracks and `mint` cannot
    /// know from a kind alone (an offer still running in this period, a price increase answered earlier, a
    /// subscription refunded before this notification): they may differ between the two paths; every other
    /// key must be in both.
    static let historyKeys: Set = [
        "offerType", "offerIdentifier", "offerDiscountType", "offerPeriod", "revocationDate", "revocationReason",
        "revocationType", "revocationPercentage", "priceIncreaseStatus", "expirationIntent",
        "gracePeriodExpiresDate", "renewalDate",
    ]

    /// Optional keys a notification's kind implies, so both paths must carry them whatever the history.
    static func impliedKeys(type: String, subtype: String?) -> [String: Set<String>] {
        let revocation: Set = ["revocationDate", "revocationReason", "revocationType"]
        switch (type, subtype) {
        // A Family Sharing revoke refunds nothing, so it carries no revocationPercentage.
        case ("REFUND", _): return ["transaction": revocation.union(["revocationPercentage"])]
        case ("REVOKE", _): return ["transaction": revocation]
        case ("EXPIRED", _): return ["renewal": ["expirationIntent"]]
        case ("DID_FAIL_TO_RENEW", "GRACE_PERIOD"): return ["renewal": ["gracePeriodExpiresDate"]]
        case ("PRICE_INCREASE", _): return ["renewal": ["priceIncreaseStatus"]]
        default: return [:]
        }
    }

    // MARK: - Decoding

    /// The JSON object in a JWS's payload segment.
    static func claims(_ jws: String) throws -> [String: Any] {
        let parts = jws.split(separator: ".", omittingEmptySubsequences: false)
        let bytes = try #require(parts.count == 3 ? JWS.base64URLDecode(String(parts[1])) : nil)
        return try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
    }

    /// A signed object and the signed objects nested in it, by path: `notification`, `data`,
    /// `transaction`, `renewal`.
    static func objects(notification jws: String) throws -> [String: [String: Any]] {
        let outer = try claims(jws)
        var result = ["notification": outer]
        let data = try #require(outer["data"] as? [String: Any])
        result["data"] = data
        if let inner = data["signedTransactionInfo"] as? String { result["transaction"] = try claims(inner) }
        if let inner = data["signedRenewalInfo"] as? String { result["renewal"] = try claims(inner) }
        return result
    }

    /// The one JWS in a body such as `{"signedPayload": "..."}`.
    static func jws(in body: [UInt8], key: String) throws -> String {
        let object = try #require(try JSONSerialization.jsonObject(with: Data(body)) as? [String: String])
        return try #require(object[key])
    }

    /// The differences between a run's object and the mint path's, and the Apple fields either lacks.
    static func compare(
        _ run: [String: Any],
        _ minted: [String: Any],
        always: Set<String>,
        what: String
    ) -> [String] {
        let runKeys = Set(run.keys)
        let mintKeys = Set(minted.keys)
        var problems: [String] = []
        for key in always.subtracting(runKeys).sorted() { problems.append("\(what): the run's payload lacks \(key)") }
        for key in always.subtracting(mintKeys).sorted() { problems.append("\(what): mint's payload lacks \(key)") }
        // Keys Apple always sends were reported above.
        let optional = historyKeys.union(always)
        for key in mintKeys.subtracting(runKeys).subtracting(optional).sorted() {
            problems.append("\(what): \(key) is in mint's payload only")
        }
        for key in runKeys.subtracting(mintKeys).subtracting(optional).sorted() {
            problems.append("\(what): \(key) is in the run's payload only")
        }
        return problems
    }

    /// The kind of the transaction a device posts, as `mint --transaction --type` takes it.
    static func deviceKind(_ lifecycle: Lifecycle) -> NotificationKind? {
        switch lifecycle {
        case .refund: NotificationMatrix.kind(.refund, nil)
        case .familyRevoke: NotificationMatrix.kind(.revoke, nil)
        default: nil
        }
    }

    @Test func runPayloadsCarryEveryFieldMintAndAppleDo() throws {
        let profile = try Profile.decode(Data(Self.profile.utf8), file: "payloads.json5")
        let minter = Minter(
            pki: try TestPKI.generate(),
            app: AppIdentity(
                bundleId: profile.target.bundleId,
                appAppleId: profile.target.appAppleId,
                environment: profile.target.environment
            )
        )
        let bodies = DeliveryBodies(minter: minter)
        var problems = Set<String>()
        var kinds = Set<String>()
        var devices = Set<String>()
        for delivery in ChaosStream(World(profile: profile, startMillis: 1_800_000_000_000), profile: profile) {
            let action = delivery.action
            let transaction = action.transaction
            let productType = transaction?.type
            let isSubscription = productType == .autoRenewableSubscription
            switch action.delivery {
            case .notification(let facts):
                let name = [facts.notificationType.rawValue, facts.payload.subtype?.rawValue].compactMap { $0 }.joined(
                    separator: "/"
                )
                let what = "\(name) (\(transaction.map { "\($0.type)" } ?? "no transaction"))"
                kinds.insert(what)
                let kind = try #require(
                    NotificationMatrix.kind(facts.notificationType, facts.payload.subtype),
                    "\(name) is not in Apple's matrix"
                )
                let run = try Self.objects(
                    notification: Self.jws(in: try #require(try bodies.body(for: delivery)), key: "signedPayload")
                )
                let mintable = Minter.impliedTransaction(
                    by: kind,
                    productId: transaction?.productId ?? "com.example.paystorm.monthly",
                    productType: productType,
                    appAccountToken: action.appAccountToken,
                    signedDate: facts.signedDate
                )
                let minted = try Self.objects(
                    notification: minter.notification(kind, transaction: mintable, signedDate: facts.signedDate)
                        .signedPayload
                )
                let always: [String: Set<String>] = [
                    "notification": Self.notificationKeys,
                    "data": isSubscription ? Self.subscriptionDataKeys : Self.dataKeys,
                    "transaction": isSubscription ? Self.subscriptionTransactionKeys : Self.transactionKeys,
                    "renewal": isSubscription ? Self.renewalKeys : [],
                ]
                let implied = Self.impliedKeys(
                    type: facts.notificationType.rawValue,
                    subtype: facts.payload.subtype?.rawValue
                )
                for (path, keys) in always.merging(implied, uniquingKeysWith: { $0.union($1) }) {
                    problems.formUnion(
                        Self.compare(run[path] ?? [:], minted[path] ?? [:], always: keys, what: "\(what) \(path)")
                    )
                }
            case .device(let device):
                let what = "device \(action.lifecycle) (\(device.transaction.type))"
                devices.insert(what)
                let run = try Self.claims(
                    Self.jws(in: try #require(try bodies.body(for: delivery)), key: "signedTransaction")
                )
                let kind = Self.deviceKind(action.lifecycle)
                let mintable = Minter.impliedTransaction(
                    by: kind,
                    productId: device.transaction.productId,
                    productType: productType,
                    appAccountToken: action.appAccountToken,
                    signedDate: device.transaction.signedDate
                )
                let minted = try Self.claims(
                    minter.transaction(mintable, kind: kind, signedDate: device.transaction.signedDate).jws
                )
                var always = isSubscription ? Self.subscriptionTransactionKeys : Self.transactionKeys
                if let kind {
                    always.formUnion(
                        Self.impliedKeys(type: kind.notificationType.rawValue, subtype: nil)["transaction"] ?? []
                    )
                }
                problems.formUnion(Self.compare(run, minted, always: always, what: what))
            case .report, .marker:
                break
            }
        }
        #expect(problems.isEmpty, "\(problems.sorted().joined(separator: "\n"))")
        // The run covered what the world sends: every subscription event and each one-time kind.
        #expect(kinds.count >= 28, "\(kinds.sorted())")
        #expect(devices.count >= 14, "\(devices.sorted())")
    }
}
