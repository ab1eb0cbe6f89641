import AppStoreModel
import Foundation
import Profile
import Simulation
import Testing

/// Family Sharing of non-consumables: the partner's own copy follows the purchaser's refund and its reversal.
struct FamilyCopyTests {
    /// A run of family-shared non-consumables, refunds and reversals (every account shares with its partner),
    /// with its notifications.
    func notifications(seed: UInt64) throws -> [(action: Action, note: NotificationFacts)] {
        let text = """
            {
              name: "family-copies", seed: \(seed),
              target: { embeddedLedger: true, bundleId: "com.example.test" },
              catalog: { products: [
                { id: "pro", type: "nonConsumable", priceMilli: 4990, familyShareable: true },
                { id: "maps", type: "nonConsumable", priceMilli: 990, familyShareable: true },
              ] },
              population: { accounts: 20, devicesPerAccount: 1, familySharingFraction: 1 },
              actionMix: { nonConsumable: 2, refund: 2, refundReversal: 2 },
              schedule: [{ kind: "constant", rate: 10, seconds: 60 }],
            }
            """
        let profile = try Profile.decode(Data(text.utf8), file: "family-copies.json5")
        return run(profile).compactMap { action in
            guard case .notification(let note) = action.delivery else { return nil }
            return (action, note)
        }
    }

    /// A refund reversed restores what the refund took: the purchaser's purchase and the partner's copy, which
    /// gets its own `REFUND_REVERSED`, for its own transaction, with no revocation left on it.
    @Test(arguments: [3, 8, 11] as [UInt64])
    func aReversedRefundReinstatesThePartnersRevokedCopy(seed: UInt64) throws {
        let notes = try notifications(seed: seed)
        func purchased(_ note: NotificationFacts) -> Bool {
            note.transaction?.payload.inAppOwnershipType == "PURCHASED"
        }
        let refunds = notes.filter { $0.note.notificationType == "REFUND" && purchased($0.note) }
        let reversals = notes.filter { $0.note.notificationType == "REFUND_REVERSED" && purchased($0.note) }
        var checked = 0
        for (revoke, revokeNote) in notes where revoke.lifecycle == .familyRevoke {
            // The purchaser's refund that revoked this copy: the partner's, in the same instant.
            guard
                let refund = refunds.first(where: {
                    $0.action.account == revoke.account ^ 1 && $0.action.at == revoke.at
                        && $0.note.transaction?.productId == revokeNote.transaction?.productId
                }),
                let reversal = reversals.first(where: {
                    $0.action.at > refund.action.at
                        && $0.note.transaction?.transactionId == refund.note.transaction?.transactionId
                })
            else { continue }
            let copy = try #require(revokeNote.transaction?.transactionId)
            let reinstated = notes.first {
                $0.action.at > revoke.at && $0.action.account == revoke.account
                    && $0.note.notificationType == "REFUND_REVERSED" && $0.note.transaction?.transactionId == copy
            }
            let (action, note) = try #require(reinstated, "copy \(copy) stays revoked after its purchaser's reversal")
            #expect(action.at == reversal.action.at && action.truth.kind == .reinstate)
            #expect(action.truth.transactionId == copy && action.appAccountToken == revoke.appAccountToken)
            #expect(note.transaction?.payload.inAppOwnershipType == "FAMILY_SHARED")
            #expect(note.transaction?.payload.revocationDate == nil && note.transaction?.payload.price == 0)
            checked += 1
        }
        #expect(checked > 0, "no shared copy of seed \(seed) was revoked and then reinstated")
    }
}
