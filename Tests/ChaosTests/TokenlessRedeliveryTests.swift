import Chaos
import Foundation
import Profile
import Simulation
import Testing

/// A device post the target refused is left to the webhook, which names the account by `appAccountToken`; a
/// purchase minted without one is posted again at the device's next launch, since only its post names the account.
struct TokenlessRedeliveryTests {
    func profile(withoutTokenFraction share: Double) throws -> Profile {
        let text = """
            {
              name: "tokenless", seed: 3,
              target: {
                webhook: { url: "http://127.0.0.1:9/n", body: { signedPayload: "{signedPayload}" } },
                deviceDelivery: { url: "http://127.0.0.1:9/d", body: { jws: "{signedTransaction}" } },
              },
              catalog: { products: [{ id: "coins", type: "consumable", priceMilli: 990 }] },
              population: { accounts: 5, withoutAccountTokenFraction: \(share) },
              actionMix: { consumable: 1 },
              schedule: [{ kind: "constant", rate: 10, seconds: 2 }],
              faults: { crashBeforeFinish: { probability: 0, relaunchSeconds: 1.5 } },
            }
            """
        return try Profile.decode(Data(text.utf8), file: "tokenless.json5")
    }

    /// The follow-ups of the profile's first device post when the target refused its connection.
    func afterRefusal(_ profile: Profile, harnessLimited: Bool = false, attempt: Int = 0) throws -> [PlannedDelivery] {
        let planned = deliveries(profile).first { if case .device = $0.action.delivery { true } else { false } }
        var delivery = try #require(planned)
        delivery.network = nil
        delivery.afterSuccessDelays = []
        delivery.attempt = attempt
        let outcome = DeliveryOutcome.notSent(reason: "refused", harnessLimited: harnessLimited)
        return ChaosPolicy(profile: profile).followUps(after: delivery, outcome: outcome, at: 10)
    }

    @Test func refusedDevicePostOfATokenlessPurchaseIsRedeliveredAtNextLaunch() throws {
        let next = try afterRefusal(profile(withoutTokenFraction: 1))
        #expect(next.map(\.copy) == [.redelivery])
        #expect(next.first?.at == 11.5)
        if case .device(let device) = next.first?.action.delivery { #expect(device.source == .unfinished) }
        // Each launch sweeps the unfinished transactions, however long the target stays down.
        let late = try afterRefusal(profile(withoutTokenFraction: 1), attempt: 9)
        #expect(late.map(\.copy) == [.redelivery])
    }

    @Test func refusedDevicePostWithATokenAndAMissedSlotAreNotRedelivered() throws {
        #expect(try afterRefusal(profile(withoutTokenFraction: 0)).isEmpty)
        #expect(try afterRefusal(profile(withoutTokenFraction: 1), harnessLimited: true).isEmpty)
    }
}
