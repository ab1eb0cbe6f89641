import Chaos
import Checking
import Foundation
import Profile
import Simulation
import Testing

let start: Int64 = 1_800_000_000_000

func checkingProfile(faults: String = "{}", seed: UInt64 = 5) throws -> Profile {
    let text = """
        {
          name: "check", seed: \(seed),
          target: { embeddedLedger: true },
          catalog: {
            groups: [{ id: "g", gracePeriodSeconds: 1, billingRetrySeconds: 3 }],
            products: [
              { id: "coins", type: "consumable", priceMilli: 990 },
              { id: "pro", type: "nonConsumable", priceMilli: 4990 },
              { id: "extra", type: "nonConsumable", priceMilli: 1990 },
              { id: "gold", type: "autoRenewable", group: "g", level: 1, priceMilli: 9990, periodSeconds: 4 },
              { id: "silver", type: "autoRenewable", group: "g", level: 2, priceMilli: 4990, periodSeconds: 4 },
              { id: "pass", type: "nonRenewing", priceMilli: 2990, periodSeconds: 100 },
            ],
          },
          population: { accounts: 30 },
          actionMix: { consumable: 2, nonConsumable: 1, subscribe: 2, nonRenewing: 1, cancel: 0.5, upgrade: 0.5,
                       refund: 1, refundReversal: 0.3, billingFailure: 0.5, deviceReport: 0.5 },
          schedule: [{ kind: "constant", rate: 8, seconds: 40 }],
          faults: \(faults),
        }
        """
    return try Profile.decode(Data(text.utf8), file: "check.json5")
}

/// A correct target: applies each verified delivery once, ignores forgeries and reports, keeps the latest
/// subscription snapshot by signed date, and the latest of a transaction's refund and its reversal by signed
/// date (a redelivered refund does not undo a later reversal).
struct IdealTarget {
    struct Account {
        var granted: [String: Truth] = [:]
        var revoked: Set<String> = []
        /// The signed date of the latest refund or reversal applied, per transaction: a late copy of an older
        /// one changes nothing.
        var refundChanged: [String: Int64] = [:]
        var subs: [String: Truth] = [:]
    }
    var accounts: [String: Account] = [:]

    mutating func apply(_ delivery: PlannedDelivery) {
        guard delivery.sends, !delivery.isForged else { return }
        let truth = delivery.action.truth
        var account = accounts[delivery.action.appAccountToken] ?? Account()
        defer { accounts[delivery.action.appAccountToken] = account }
        guard let id = truth.transactionId else { return }
        switch truth.kind {
        case .grant:
            account.granted[id] = truth
        case .revoke, .reinstate:
            guard truth.effectiveDate > account.refundChanged[id] ?? .min else { break }
            account.refundChanged[id] = truth.effectiveDate
            if truth.kind == .revoke { account.revoked.insert(id) } else { account.revoked.remove(id) }
        case .subscriptionStatus, .none, .pending:
            break
        }
        if truth.productType == .autoRenewable, let original = truth.originalTransactionId, truth.status != nil,
            truth.kind != .none
        {
            if let current = account.subs[original], current.effectiveDate > truth.effectiveDate { return }
            account.subs[original] = truth
        }
    }

    func state(_ token: String, at t: Double) -> AccountState {
        let now = start + Int64(t * 1000)
        guard let account = accounts[token] else { return AccountState() }
        var state = AccountState(grants: [])
        // Sorted, so every run of a test picks the same transaction (dictionary order is randomized).
        for (id, truth) in account.granted.sorted(by: { $0.key < $1.key }) {
            state.grants?.append(.init(transactionId: id, count: 1))
            guard !account.revoked.contains(id), let product = truth.productId else { continue }
            switch truth.productType {
            case .consumable: state.balances[product, default: 0] += truth.quantity
            case .nonConsumable: state.entitlements.append(.init(productId: product, transactionId: id))
            case .nonRenewing:
                if now < truth.expiresDate ?? 0 {
                    state.entitlements.append(.init(productId: product, transactionId: id))
                }
            default: break
            }
        }
        for sub in account.subs.values {
            let end = sub.status == .gracePeriod ? (sub.gracePeriodExpiresDate ?? 0) : (sub.expiresDate ?? 0)
            if (sub.status == .active || sub.status == .gracePeriod) && now < end {
                state.entitlements.append(
                    .init(productId: sub.productId!, transactionId: sub.transactionId, expiresDate: sub.expiresDate)
                )
            }
        }
        return state
    }
}

/// Plays a whole run against the ideal target, every delivery acknowledged.
func play(_ profile: Profile, foldAbove: Int = 16) -> (Checker, IdealTarget, [PlannedDelivery]) {
    var options = Checker.Options()
    options.foldAbove = foldAbove
    let checker = Checker(profile: profile, startMillis: start, options: options)
    var ideal = IdealTarget()
    let planned = Array(ChaosStream(World(profile: profile, startMillis: start), profile: profile))
    for delivery in planned {
        checker.sent(delivery, at: delivery.at)
        ideal.apply(delivery)
        if delivery.sends { checker.record(delivery, outcome: .acknowledged(status: 200), at: delivery.at) }
    }
    return (checker, ideal, planned)
}

func failures(_ results: [CheckResult]) -> [Invariant] {
    results.compactMap { if case .fail = $0.outcome { $0.invariant } else { nil } }
}

struct CheckingTests {
    /// Folding (a tiny threshold of 4 forces it everywhere) only loosens bounds: still no false alarm.
    @Test(arguments: [1 as UInt64, 2, 3, 4, 5], [16, 4])
    func correctTargetPasses(seed: UInt64, foldAbove: Int) throws {
        let profile = try checkingProfile(
            faults: "{ forgery: { probability: 0.2 }, askToBuy: { probability: 0.2, pendingSeconds: 2 } }",
            seed: seed
        )
        let (checker, ideal, _) = play(profile, foldAbove: foldAbove)
        let t = profile.durationSeconds + 7
        for token in checker.knownAccounts() {
            let results = checker.check(account: token, state: ideal.state(token, at: t), at: t, final: true)
            #expect(failures(results).isEmpty, "\(results)")
        }
        let verdict = checker.verdict(unchecked: [])
        #expect(verdict.violationCount == 0)
        #expect(verdict.outcome == .pass)
        let json = String(decoding: try JSONEncoder().encode(verdict), as: UTF8.self)
        #expect(json.contains("\"no-double-grant\":{"))
    }

    enum Flaw: String, CaseIterable, Sendable {
        case doubleBalance, doubleGrantCount, unlockNeverBought, unlockForged, creditForgedCoins, unlockPending,
            keepRefunded, loseNonConsumable, loseCoins, entitleExpired
    }

    static let expected: [Flaw: Invariant] = [
        .doubleBalance: .noDoubleGrant, .doubleGrantCount: .noDoubleGrant,
        .unlockNeverBought: .noUnlockWithoutVerifiedPurchase,
        .unlockForged: .noUnlockWithoutVerifiedPurchase, .creditForgedCoins: .noUnlockWithoutVerifiedPurchase,
        .unlockPending: .noUnlockWithoutVerifiedPurchase,
        .keepRefunded: .revocationHonored, .loseNonConsumable: .noLostPurchase, .loseCoins: .noLostPurchase,
        .entitleExpired: .subscriptionState,
    ]

    @Test(arguments: Flaw.allCases)
    func flawedTargetFailsWithTheRightInvariant(flaw: Flaw) throws {
        let profile = try checkingProfile(
            faults:
                "{ forgery: { probability: 0.3 }, askToBuy: { probability: 0.3, pendingSeconds: 2, approveProbability: 0 } }"
        )
        // Folding can take every coin purchase of the account picked for a double balance into counts, leaving
        // no history to cite in its witness; that account is kept whole here (the folding tests cover folding).
        let (checker, ideal, planned) = play(profile, foldAbove: flaw == .doubleBalance ? 10_000 : 16)
        let t = profile.durationSeconds + 7
        let tokens = checker.knownAccounts()
        func account(_ predicate: (String, AccountState) -> Bool) throws -> (String, AccountState) {
            let found = tokens.lazy.map { ($0, ideal.state($0, at: t)) }.first { predicate($0.0, $0.1) }
            return try #require(found)
        }
        var token: String
        var state: AccountState
        switch flaw {
        case .doubleBalance:
            // An account with no forged coins and no refunds: there, an excess could also be a forgery credited
            // or a refund not taken back.
            (token, state) = try account { token, state in
                state.balances["coins", default: 0] > 0
                    && !planned.contains {
                        $0.action.appAccountToken == token && $0.action.truth.productId == "coins"
                            && ($0.isForged || $0.action.truth.kind == .revoke)
                    }
            }
            state.balances["coins"]! += 1
        case .doubleGrantCount:
            (token, state) = try account { !($1.grants ?? []).isEmpty }
            // The newest transaction: older ones may be folded into counts, with no history left to cite.
            state.grants![state.grants!.count - 1].count = 2
        case .unlockNeverBought:
            (token, state) = try account { token, _ in
                !planned.contains { $0.action.appAccountToken == token && $0.action.truth.productId == "extra" }
            }
            state.entitlements.append(.init(productId: "extra"))
        case .unlockForged:
            let forged = try #require(planned.first { $0.isForged && $0.action.truth.productType == .nonConsumable })
            token = forged.action.appAccountToken
            state = ideal.state(token, at: t)
            state.entitlements.append(.init(productId: "x-forged", transactionId: forged.action.truth.transactionId))
            state.entitlements[state.entitlements.count - 1].productId = forged.action.truth.productId!
        case .creditForgedCoins:
            // A backend that skips verification credits a forged consumable; its probe shows balances only,
            // so the excess over the genuine purchases is all there is to see.
            // An account without refunds: there, an excess could also be a refund not taken back.
            let forged = try #require(
                planned.first { forged in
                    let token = forged.action.appAccountToken
                    return forged.isForged && forged.action.truth.productType == .consumable
                        && ideal.state(token, at: t).balances["coins", default: 0] > 0
                        && !planned.contains { $0.action.appAccountToken == token && $0.action.truth.kind == .revoke }
                }
            )
            token = forged.action.appAccountToken
            state = ideal.state(token, at: t)
            state.grants = nil
            state.balances["coins"]! += forged.action.truth.quantity
        case .unlockPending:
            let pending = try #require(
                planned.first { p in
                    p.action.lifecycle == .askToBuyPending && p.action.truth.productType == .nonConsumable
                        && !planned.contains {
                            $0.action.appAccountToken == p.action.appAccountToken && $0.action.truth.kind == .grant
                                && $0.action.truth.productId == p.action.truth.productId && !$0.isForged
                        }
                }
            )
            token = pending.action.appAccountToken
            state = ideal.state(token, at: t)
            state.entitlements.append(.init(productId: pending.action.truth.productId!))
        case .keepRefunded:
            let refund = try #require(
                planned.first { $0.action.lifecycle == .refund && $0.action.truth.productType == .nonConsumable }
            )
            token = refund.action.appAccountToken
            state = ideal.state(token, at: t)
            state.entitlements.append(
                .init(productId: refund.action.truth.productId!, transactionId: refund.action.truth.transactionId)
            )
        case .loseNonConsumable:
            (token, state) = try account { $1.entitlements.contains { $0.productId == "pro" } }
            state.entitlements.removeAll { $0.productId == "pro" }
        case .loseCoins:
            (token, state) = try account { $1.balances["coins", default: 0] > 0 }
            state.balances["coins"]! -= 1
        case .entitleExpired:
            (token, state) = try account { token, state in
                state.entitlements.allSatisfy { $0.productId != "gold" && $0.productId != "silver" }
                    && planned.contains {
                        $0.action.appAccountToken == token && $0.action.truth.productType == .autoRenewable
                            && $0.action.truth.kind == .grant
                    }
            }
            state.entitlements.append(.init(productId: "gold", expiresDate: start))
        }
        let results = checker.check(account: token, state: state, at: t, final: true)
        let failed = failures(results)
        #expect(failed.contains(Self.expected[flaw]!), "\(results)")
        if flaw == .creditForgedCoins {
            // Forged units explain the excess: filed as a forgery granted, not as a double grant.
            #expect(!failed.contains(.noDoubleGrant), "\(results)")
        }
        let verdict = checker.verdict(unchecked: [])
        #expect(verdict.outcome == .fail)
        let witness = try #require(verdict.violations.first)
        #expect(witness.account == token)
        #expect(witness.seed == profile.seed)
        #expect(witness.prose.contains(witness.invariant.rawValue))
        let json = try JSONEncoder().encode(witness)
        #expect(!json.isEmpty)
        if flaw != .unlockNeverBought && flaw != .entitleExpired && flaw != .unlockPending {
            #expect(!witness.entries.isEmpty)
        }
    }

    @Test func expiryMovingBackIsAStaleRegression() throws {
        let profile = try checkingProfile()
        let (checker, _, planned) = play(profile)
        let grants = planned.filter { $0.action.truth.productType == .autoRenewable && $0.action.truth.kind == .grant }
        let first = try #require(grants.first)
        let series = grants.filter { $0.action.truth.originalTransactionId == first.action.truth.originalTransactionId }
        let last = try #require(series.last)
        #expect(last.action.truth.transactionId != first.action.truth.transactionId)
        let token = first.action.appAccountToken
        let product = first.action.truth.productId!
        // Probed after every answer: only what the target acknowledged by the time a probe asked counts.
        let end = (planned.map(\.at).max() ?? 0) + 60
        var state = AccountState(entitlements: [.init(productId: product, expiresDate: last.action.truth.expiresDate)])
        #expect(failures(checker.check(account: token, state: state, at: end, final: false)).isEmpty)
        state.entitlements = [.init(productId: product, expiresDate: first.action.truth.expiresDate)]
        #expect(
            failures(checker.check(account: token, state: state, at: end + 1, final: false)) == [.noStaleRegression]
        )
    }

    @Test(arguments: [-0.5, 0.0, 0.5, 1.5])
    func resultNearAnExpiryIsUnknown(offset: Double) throws {
        let profile = try checkingProfile()
        let (checker, ideal, planned) = play(profile)
        // The last period of some subscription: nothing renews it after the schedule ends.
        let grants = planned.filter { $0.action.truth.productType == .autoRenewable && $0.action.truth.kind == .grant }
        let last = try #require(grants.last)
        let token = last.action.appAccountToken
        let expires = try #require(last.action.truth.expiresDate)
        let t = Double(expires - start) / 1000 + offset
        let results = checker.check(account: token, state: ideal.state(token, at: t), at: t, final: true)
        let subscription = try #require(results.first { $0.invariant == .subscriptionState })
        guard case .unknown = subscription.outcome else {
            Issue.record("expected unknown, got \(subscription.outcome)")
            return
        }
        // Either side of the boundary, even a wrong answer is not a failure.
        var wrong = ideal.state(token, at: t)
        if wrong.entitlements.isEmpty {
            wrong.entitlements.append(.init(productId: last.action.truth.productId!))
        } else {
            wrong.entitlements.removeAll()
        }
        let again = checker.check(account: token, state: wrong, at: t, final: true)
        #expect(!failures(again).contains(.subscriptionState))
    }

    /// A refund reversal that arrives before its refund (reordered) still wins: its signedDate is newer.
    @Test(arguments: [1 as UInt64, 2, 3, 4, 5, 6, 7, 8])
    func reversalOutranksAnOlderRefundWhateverTheArrivalOrder(seed: UInt64) throws {
        let profile = try checkingProfile(seed: seed)
        let planned = Array(ChaosStream(World(profile: profile, startMillis: start), profile: profile))
        guard let reversal = planned.first(where: { $0.action.truth.kind == .reinstate }),
            let id = reversal.action.truth.transactionId,
            let refund = planned.last(where: {
                $0.action.truth.kind == .revoke && $0.action.truth.transactionId == id && $0.at < reversal.at
            })
        else { return }
        var ideal = IdealTarget()
        for delivery in planned where delivery.at <= reversal.at { ideal.apply(delivery) }
        let checker = Checker(profile: profile, startMillis: start)
        // Arrival order: everything up to the reversal except the refund, then the refund last.
        for delivery in planned where delivery.at <= reversal.at && delivery.id != refund.id {
            checker.sent(delivery, at: delivery.at)
            if delivery.sends { checker.record(delivery, outcome: .acknowledged(status: 200), at: delivery.at) }
        }
        checker.sent(refund, at: reversal.at)
        checker.record(refund, outcome: .acknowledged(status: 200), at: reversal.at)
        let token = reversal.action.appAccountToken
        let results = checker.check(
            account: token,
            state: ideal.state(token, at: reversal.at),
            at: reversal.at,
            final: true
        )
        #expect(!failures(results).contains(.revocationHonored))
    }

    @Test func indeterminateDeliveryIsNotOwed() throws {
        let profile = try checkingProfile()
        let checker = Checker(profile: profile, startMillis: start)
        let planned = Array(ChaosStream(World(profile: profile, startMillis: start), profile: profile))
        let purchase = try #require(
            planned.first { $0.action.truth.productId == "pro" && $0.action.truth.kind == .grant }
        )
        let token = purchase.action.appAccountToken
        for delivery in planned where delivery.action.appAccountToken == token {
            checker.sent(delivery, at: delivery.at)
            checker.record(delivery, outcome: .indeterminate(reason: "timeout"), at: delivery.at)
        }
        let t = profile.durationSeconds + 7
        let results = checker.check(account: token, state: AccountState(), at: t, final: true)
        #expect(!failures(results).contains(.noLostPurchase))
    }

    @Test func probeFailureCountsAsUnknown() throws {
        let checker = Checker(profile: try checkingProfile(), startMillis: start)
        checker.probeFailed(account: "A", error: ProbeError.transport("refused"), at: 1, final: true)
        let verdict = checker.verdict(unchecked: [])
        #expect(verdict.outcome == .unknown)
        #expect(verdict.tallies[.noLostPurchase]?.unknown == 1)
    }

    @Test func probeFailureSaysProbeFailedOnce() throws {
        // A ProbeError describes itself as a probe's; other errors are named a probe failure here, once.
        let checker = Checker(profile: try checkingProfile(), startMillis: start)
        checker.probeFailed(account: "A", error: ProbeError.transport("refused"), at: 1, final: false)
        checker.probeFailed(account: "B", error: OtherProbeError(), at: 1, final: false)
        // The verdict's own reason (nothing decided) may come first; the probe samples follow.
        let samples = checker.verdict(unchecked: []).unknownSamples.filter { $0.contains(": probe") }
        // Two safety probes, each of three invariants (no-double-refund only once a probe listed refunds).
        #expect(samples.count == 6)
        for sample in samples {
            #expect(sample.components(separatedBy: "probe failed").count == 2, "\(sample)")
        }
    }

    private struct OtherProbeError: Error, CustomStringConvertible {
        var description: String { "connection refused" }
    }

    @Test(arguments: [
        ("{ embeddedLedger: false, webhookURL: \"http://127.0.0.1:1/n\" }", 7),
        (
            "{ embeddedLedger: false, webhookURL: \"http://127.0.0.1:1/n\", probe: { kind: \"http\", url: \"http://127.0.0.1:1/a/{appAccountToken}\" } }",
            1
        ),
        ("{ embeddedLedger: true }", 0),
    ])
    func listsUncheckedInvariants(target: String, count: Int) throws {
        let decoded = try JSONDecoder.json5().decode(Wrapper.self, from: Data("{ target: \(target) }".utf8))
        #expect(Checker.unchecked(target: decoded.target, probeReturnsGrants: true).count == count)
    }

    struct Wrapper: Decodable { var target: Target }

    @Test func mapsBackendJSONWithPointers() throws {
        let mappingText = """
            { entitlements: "/user/access", productId: "/sku", transactionId: "/tx", expiresDate: "/until",
              balances: "/wallet", refunds: "/refundLog" }
            """
        let mapping = try JSONDecoder.json5().decode(PointerMapping.self, from: Data(mappingText.utf8))
        let body = """
            {"user": {"access": [{"sku": "gold", "tx": 123, "until": 1800000000000}, {"sku": "pro"}]},
             "wallet": {"coins": 7}, "refundLog": [{"transactionId": 99, "count": 2}]}
            """
        let state = try PointerProbe.map(Array(body.utf8), with: mapping)
        #expect(
            state.entitlements == [
                .init(productId: "gold", transactionId: "123", expiresDate: 1_800_000_000_000), .init(productId: "pro"),
            ]
        )
        #expect(state.balances == ["coins": 7])
        #expect(state.refunds == [.init(transactionId: "99", count: 2)])
        #expect(state.grants == nil)
        #expect(throws: ProbeError.self) { try PointerProbe.map(Array("{\"user\": {}}".utf8), with: mapping) }
    }

    @Test func parsesJSONLines() throws {
        let text = """
            {"appAccountToken": "A", "entitlements": [{"productId": "pro"}], "balances": {"coins": 2}}

            {"appAccountToken": "B", "entitlements": [], "grants": [{"transactionId": "1", "count": 1}]}
            """
        let states = try JSONLines.parse(Array(text.utf8))
        #expect(states["A"]?.balances["coins"] == 2)
        #expect(states["B"]?.grants?.first?.count == 1)
        #expect(throws: ProbeError.self) { try JSONLines.parse(Array("{\"entitlements\": []}\n".utf8)) }
    }

    @Test func aBulkAnswerWithoutTheAccountIsAnErrorNotAnEmptyAccount() throws {
        let answer = try JSONLines.parse(Array(#"{"appAccountToken": "a", "balances": {"c": 1}}"#.utf8))
        #expect(try answer.state(of: "A").balances["c"] == 1)
        #expect(throws: ProbeError.missingAccount("Z")) { try answer.state(of: "Z") }
    }
}

extension JSONDecoder {
    static func json5() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.allowsJSON5 = true
        return decoder
    }
}
