import Chaos
import Foundation
import Minting
import Profile
import Signing
import Simulation
import Testing

@testable import PayStorm

/// What the oracle believes a trusting target credits for a forgery is what the minted forgery claims: the
/// example backend with skip-verify at 10× its length credited tampered device transactions ten times over,
/// and the oracle, owing only the signed quantity, filed the excess as a double grant.
struct ForgeryTruthTests {
    static let profile = """
        {
          name: "t", seed: 5,
          target: { webhookURL: "http://127.0.0.1:1/n", deviceURL: "http://127.0.0.1:1/t" },
          catalog: { products: [{ id: "coins", type: "consumable", priceMilli: 990 }] },
          population: { accounts: 3 },
          actionMix: { consumable: 1 },
          schedule: [{ kind: "constant", rate: 5, seconds: 5 }],
          faults: { forgery: { probability: 1, kinds: ["tampered-payload"] } },
        }
        """

    /// The quantity the JWS's payload claims, signature or not.
    static func claimedQuantity(_ jws: String) throws -> Int {
        let part = String(jws.split(separator: ".", omittingEmptySubsequences: false)[1])
        var base64 = part.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        let data = try #require(Data(base64Encoded: base64))
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        if let signed = (object["data"] as? [String: Any])?["signedTransactionInfo"] as? String {
            return try claimedQuantity(signed)
        }
        return try #require(object["quantity"] as? Int)
    }

    @Test(arguments: [true, false])
    func tamperedForgeryTruthOwesWhatItsPayloadClaims(onDevice: Bool) throws {
        let profile = try Profile.decode(Data(Self.profile.utf8), file: "t.json5")
        let endpoints = try DeliveryRequestsTests.endpoints(profile, accounts: AccountDirectory())
        let bodies = DeliveryBodies(minter: Minter(pki: try TestPKI.generate()), endpoints: endpoints)
        let stream = ChaosStream(World(profile: profile, startMillis: 1_800_000_000_000), profile: profile)
        let forged = try #require(
            stream.first {
                guard $0.isForged else { return false }
                if case .device = $0.action.delivery { return onDevice }
                if case .notification = $0.action.delivery { return !onDevice }
                return false
            }
        )
        let body = try #require(try bodies.body(for: forged))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(body)) as? [String: String])
        let jws = try #require(object["signedTransaction"] ?? object["signedPayload"])
        #expect(try Self.claimedQuantity(jws) == forged.action.truth.quantity)
    }
}
