import Chaos
import Checking
import Foundation
import Profile
import Simulation
import Testing

/// A backend that pulls and grants a forged id (issue 13, item 4): filed as an unlock without a verified purchase,
/// with a witness that names what the App Store Server API answers for that id.
struct PulledForgeryWitnessTests {
    /// The profile over `seconds` of its schedule, selling one product of `type`.
    static func pullingProfile(seconds: Int = 20, type: String = "nonConsumable") throws -> Profile {
        let text = """
            {
              name: "pull-check", seed: 6,
              target: {
                webhookURL: "http://127.0.0.1:1/notifications",
                deviceDelivery: { url: "http://127.0.0.1:1/pull", body: { id: "{transactionId}" } },
              },
              catalog: { products: [{ id: "pro", type: "\(type)", priceMilli: 4990 }] },
              population: { accounts: 20, devicesPerAccount: 1 },
              actionMix: { \(type): 1 },
              schedule: [{ kind: "constant", rate: 10, seconds: \(seconds) }],
              faults: { forgery: { probability: 0.6 } },
            }
            """
        return try Profile.decode(Data(text.utf8), file: "pull-check.json5")
    }

    @Test(arguments: [
        ("made-up-transaction-id", "answers with 404 TransactionIdNotFoundError (4040010)"),
        ("other-account-transaction-id", "carries that account's appAccountToken"),
    ])
    func grantOfAPulledForgeryNamesTheAPIsAnswer(forgery: String, answer: String) throws {
        let profile = try Self.pullingProfile()
        let (checker, ideal, planned) = play(profile)
        let forged = try #require(planned.first { $0.forgery == forgery })
        let token = forged.action.appAccountToken
        let id = try #require(forged.action.truth.transactionId)
        let t = profile.durationSeconds + 7
        var state = ideal.state(token, at: t)
        state.grants = (state.grants ?? []) + [.init(transactionId: id, count: 1)]
        let results = checker.check(account: token, state: state, at: t, final: true)
        #expect(failures(results) == [.noUnlockWithoutVerifiedPurchase], "\(results)")
        let witness = checker.verdict(unchecked: []).violations.first { $0.account == token }
        let sentences = witness?.entries.map(\.sentence) ?? []
        #expect(sentences.contains { $0.contains("transaction \(id)") && $0.contains(answer) }, "\(sentences)")
    }
}
