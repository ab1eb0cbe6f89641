import AppStoreModel
import Chaos
import Checking
import Profile
import Simulation
import Testing

/// Purchases minted without an `appAccountToken` (`population.withoutAccountTokenFraction`): the oracle books
/// each one to the account whose device or notification carried it, never to the token its payload lacks.
struct TokenlessPurchaseTests {
    static func tokenlessProfile(seed: UInt64 = 5) throws -> Profile {
        var profile = try checkingProfile(faults: "{ forgery: { probability: 0.2 } }", seed: seed)
        profile.population.withoutAccountTokenFraction = 1
        return profile
    }

    @Test(arguments: [5 as UInt64, 6])
    func aCorrectTargetPassesWhenNoPurchaseCarriesAToken(seed: UInt64) throws {
        let profile = try Self.tokenlessProfile(seed: seed)
        let (checker, ideal, planned) = play(profile)
        let grants = planned.filter { $0.action.truth.kind == .grant && !$0.isForged }
        #expect(grants.count > 20)
        #expect(grants.allSatisfy { $0.action.transaction?.payload.appAccountToken == nil })
        let t = profile.durationSeconds + 7
        #expect(checker.knownAccounts().count > 10)
        for token in checker.knownAccounts() {
            let results = checker.check(account: token, state: ideal.state(token, at: t), at: t, final: true)
            #expect(failures(results).isEmpty, "\(results)")
        }
        #expect(checker.verdict(unchecked: []).outcome == .pass)
    }

    @Test func aTokenlessPurchaseLostIsWitnessedOnTheAccountThatBoughtIt() throws {
        let profile = try Self.tokenlessProfile()
        let (checker, ideal, planned) = play(profile)
        let t = profile.durationSeconds + 7
        let token = try #require(
            checker.knownAccounts().first { ideal.state($0, at: t).entitlements.contains { $0.productId == "pro" } }
        )
        var state = ideal.state(token, at: t)
        let lost = try #require(state.entitlements.first { $0.productId == "pro" }?.transactionId)
        let purchase = try #require(planned.first { $0.action.truth.transactionId == lost && !$0.isForged })
        #expect(purchase.action.transaction?.payload.appAccountToken == nil)
        #expect(purchase.action.appAccountToken == token)
        state.entitlements.removeAll { $0.productId == "pro" }
        let results = checker.check(account: token, state: state, at: t, final: true)
        let witness = results.compactMap { result -> Witness? in
            if case .fail(let witness) = result.outcome, result.invariant == .noLostPurchase { witness } else { nil }
        }
        #expect(witness.first?.account == token, "\(results)")
    }

    /// Plays the tokenless profile against a target that acknowledges every notification and refuses every device
    /// post, so no device ever tells it whose a purchase is; returns the checker and the profile's end.
    func playUnclaimed() throws -> (Checker, Double) {
        let profile = try Self.tokenlessProfile()
        let checker = Checker(profile: profile, startMillis: start)
        for delivery in ChaosStream(World(profile: profile, startMillis: start), profile: profile) {
            checker.sent(delivery, at: delivery.at)
            guard delivery.sends else { continue }
            let device = if case .device = delivery.action.delivery { true } else { false }
            let outcome: DeliveryOutcome = device ? .rejected(status: 401) : .acknowledged(status: 200)
            checker.record(delivery, outcome: outcome, at: delivery.at)
        }
        return (checker, profile.durationSeconds + 7)
    }

    @Test func aTokenlessPurchaseOnlyANotificationCarriedIsNotOwedUntilADeviceClaimsIt() throws {
        let (checker, t) = try playUnclaimed()
        #expect(checker.knownAccounts().count > 10)
        for token in checker.knownAccounts() {
            let results = checker.check(account: token, state: IdealTarget().state(token, at: t), at: t, final: true)
            #expect(!failures(results).contains(.noLostPurchase), "\(results)")
        }
    }

    @Test func aTokenlessPurchaseIsOwedAcrossARestartFromItsClaimNotFromItsNotification() throws {
        let profile = try Self.tokenlessProfile()
        let checker = Checker(profile: profile, startMillis: start)
        let planned = Array(ChaosStream(World(profile: profile, startMillis: start), profile: profile))
        let claimedAt = profile.durationSeconds + 100
        for delivery in planned {
            checker.sent(delivery, at: delivery.at)
            if delivery.sends, case .notification = delivery.action.delivery {
                checker.record(delivery, outcome: .acknowledged(status: 200), at: delivery.at)
            }
        }
        // The devices' posts are acknowledged only after the target came back from an outage that began once every
        // notification was acknowledged: nothing was owed before it.
        for delivery in planned where delivery.sends {
            if case .device = delivery.action.delivery {
                checker.record(delivery, outcome: .acknowledged(status: 200), at: claimedAt)
            }
        }
        let down = profile.durationSeconds + 50
        for token in checker.knownAccounts() {
            let results = checker.checkAfterRecovery(
                account: token,
                state: IdealTarget().state(token, at: claimedAt + 1),
                at: claimedAt + 1,
                asked: claimedAt + 1,
                down: down
            )
            #expect(!failures(results).contains(.noLostPurchase), "\(results)")
        }
    }
}
