import AppStoreModel
import Minting
import Signing
import Testing

@testable import PayStormCLI

/// The floor `paystorm bench mint` measures: the SHA-256 input of each JWS a notification is made of, whole and
/// after what repeats from one notification to the next.
struct MintFloorTests {
    @Test func theFloorHashesEverySigningInputWholeAndOnlyThem() throws {
        let minter = Minter(pki: try TestPKI.generate())
        let kind = NotificationKind(.subscribed, .initialBuy, .subscription)
        let minted = try minter.notification(kind)
        let floor = try MintFloor(minted.signedPayload, others: [try minter.notification(kind).signedPayload])
        let jws =
            [minted.payload.data?.signedTransactionInfo, minted.payload.data?.signedRenewalInfo]
            .compactMap { $0 } + [minted.signedPayload]
        #expect(jws.count == 3)
        // A signing input is a JWS's header and payload segments and the dot between them.
        let lengths = jws.map { text in
            let segments = text.split(separator: ".", omittingEmptySubsequences: false)
            return segments[0].utf8.count + 1 + segments[1].utf8.count
        }
        #expect(floor.signingInputs.map(\.count) == lengths)
        #expect(floor.hashedBytes == lengths.reduce(0, +))
        #expect(floor.signingInputs == jws.map { Array($0.utf8.prefix($0.utf8.count - 1 - 86)) })
    }

    @Test func whatRepeatsIsLeftOutOfTheKeptFloor() throws {
        let minter = Minter(pki: try TestPKI.generate())
        let kind = NotificationKind(.didRenew, nil, .subscription)
        let notification = try minter.notification(kind).signedPayload
        let floor = try MintFloor(notification, others: [try minter.notification(kind).signedPayload])
        // Every JWS starts with the signer's header segment and a dot; the rest is at most what follows them.
        let header = notification.utf8.firstIndex(of: UInt8(ascii: "."))!
        let headerLength = notification.utf8.distance(from: notification.utf8.startIndex, to: header) + 1
        for (input, part) in zip(floor.signingInputs, floor.varyingParts) {
            #expect(input.suffix(part.count).elementsEqual(part))
            #expect(part.count <= input.count - headerLength)
        }
        #expect(floor.varyingBytes < floor.hashedBytes)
    }
}
