import Chaos
import Foundation
import Profile
import Simulation
import Testing

/// A device flow that pulls (its body names the transaction by id, no JWS): what a device can forge is the id
/// (issue 13, item 4).
struct PullForgeryTests {
    static func profile(deviceBody: String) throws -> Profile {
        let text = """
            {
              name: "pull", seed: 5,
              target: {
                webhookURL: "http://127.0.0.1:1/notifications",
                deviceDelivery: { url: "http://127.0.0.1:1/pull", body: \(deviceBody) },
              },
              catalog: { products: [
                { id: "coins", type: "consumable", priceMilli: 990 },
                { id: "pro", type: "nonConsumable", priceMilli: 4990 },
              ] },
              population: { accounts: 20, devicesPerAccount: 1 },
              actionMix: { consumable: 2, nonConsumable: 1 },
              schedule: [{ kind: "constant", rate: 10, seconds: 20 }],
              faults: { forgery: { probability: 0.5 } },
            }
            """
        return try Profile.decode(Data(text.utf8), file: "pull.json5")
    }

    static let pulling = #"{ transactionId: "{transactionId}", userId: "{appAccountToken.lower}" }"#

    @Test func pullingDeviceForgeriesAreMadeUpOrOtherAccountsIds() throws {
        let planned = deliveries(try Self.profile(deviceBody: Self.pulling))
        let owners = Dictionary(
            planned.filter { !$0.isForged }.compactMap { delivery in
                delivery.action.transaction.map { ($0.transactionId, delivery.action.appAccountToken) }
            },
            uniquingKeysWith: { first, _ in first }
        )
        let forged = planned.filter {
            guard $0.isForged, case .device = $0.action.delivery else { return false }
            return true
        }
        // A claim without any id (a device report of a "success") still applies to a pulling app.
        #expect(Set(forged.compactMap(\.forgery)) == Set(Faults.pullForgeryKinds + [Faults.bareProductIDForgery]))
        for delivery in forged {
            let id = try #require(delivery.action.transaction?.transactionId)
            #expect(delivery.action.truth.kind == .none)
            #expect(delivery.action.truth.transactionId == id)
            // A pulled id is all the backend gets, so the original id must not lead back to a genuine purchase.
            #expect(delivery.action.transaction?.originalTransactionId != nil)
            switch delivery.forgery {
            case "made-up-transaction-id":
                #expect(owners[id] == nil, "made-up id \(id) belongs to a genuine purchase")
            case Faults.bareProductIDForgery:
                continue
            case "other-account-transaction-id":
                let owner = try #require(owners[id], "\(id) is no genuine purchase")
                #expect(owner != delivery.action.appAccountToken)
            default:
                Issue.record("unexpected forgery \(delivery.forgery ?? "")")
            }
        }
    }

    @Test func signedDeviceFlowKeepsItsJWSForgeries() throws {
        let planned = deliveries(try Self.profile(deviceBody: #"{ jws: "{signedTransaction}" }"#))
        let kinds = Set(planned.filter(\.isForged).compactMap(\.forgery))
        #expect(!kinds.isEmpty)
        #expect(kinds.isDisjoint(with: Faults.pullForgeryKinds))
    }
}
