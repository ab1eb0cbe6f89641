import AppStoreModel
import Foundation
import Minting
import RunControl
import Signing

/// The work the JWS format sets for one notification, whoever signs it: one raw ES256 signature per JWS (the
/// outer one and each nested one) and the SHA-256 of each JWS's signing input, `base64url(header) "."
/// base64url(payload)`.
///
/// Two floors: every signing input hashed whole, and with the digest state of what repeats from one notification
/// to the next kept, so that only the bytes after each input's repeated prefix are hashed (the signer's header
/// and what follows it unchanged; a signer can keep that state once, as `ES256Signer` does).
struct MintFloor: Sendable {
    /// Each JWS's signing input: the nested ones in their field order, then the outer one.
    let signingInputs: [[UInt8]]
    /// Of each signing input, the bytes after the prefix it shares with the same JWS of every other sample.
    let varyingParts: [[UInt8]]

    /// The floor of `notification` (an outer JWS), with `others` (notifications of the same kind, other
    /// contents) showing which prefixes repeat.
    init(_ notification: String, others: [String]) throws {
        signingInputs = try Self.jwsTree(notification).map(Self.signingInput)
        let samples = try others.map { try Self.jwsTree($0).map(Self.signingInput) }
        varyingParts = signingInputs.enumerated().map { index, input in
            let repeated = samples.reduce(input.count) { shortest, sample in
                guard index < sample.count else { return 0 }
                return min(shortest, commonPrefixLength(input, sample[index]))
            }
            return Array(input[repeated...])
        }
    }

    /// How many bytes hashing every signing input whole takes.
    var hashedBytes: Int { signingInputs.reduce(0) { $0 + $1.count } }
    /// How many bytes the varying parts hold.
    var varyingBytes: Int { varyingParts.reduce(0) { $0 + $1.count } }

    /// A measuring step for one notification at the floor: SHA-256 of each of `parts` and as many raw signs
    /// (over a precomputed digest), on its own OpenSSL context.
    static func step(key: SigningKey, parts: [[UInt8]]) -> @Sendable () throws -> () throws -> Int {
        {
            let raw = try RawES256(key: key)
            return {
                for part in parts { try part.withUnsafeBufferPointer { try raw.hash($0) } }
                try raw.sign(times: parts.count)
                return 1
            }
        }
    }

    /// The JWS a notification is made of: its nested JWS (transaction, renewal info, app transaction, as
    /// present), then the notification itself.
    static func jwsTree(_ notification: String) throws -> [String] {
        let segments = notification.split(separator: ".", omittingEmptySubsequences: false)
        guard segments.count == 3, let json = JWS.base64URLDecode(String(segments[1])) else {
            throw CLIError(.internalError, "a minted notification is not a compact JWS")
        }
        let payload = try AppStoreJSON.decoder().decode(ResponseBodyV2DecodedPayload.self, from: Data(json))
        let nested = [
            payload.data?.signedTransactionInfo, payload.data?.signedRenewalInfo,
            payload.appData?.signedAppTransactionInfo,
        ]
        return nested.compactMap { $0 } + [notification]
    }

    /// A JWS's signing input: its text up to the dot before the signature.
    static func signingInput(_ jws: String) throws -> [UInt8] {
        let bytes = Array(jws.utf8)
        guard let dot = bytes.lastIndex(of: UInt8(ascii: ".")) else {
            throw CLIError(.internalError, "a minted JWS has no signature segment")
        }
        return Array(bytes[..<dot])
    }
}

/// How many bytes `a` and `b` start with in common.
private func commonPrefixLength(_ a: [UInt8], _ b: [UInt8]) -> Int {
    var length = 0
    while length < a.count, length < b.count, a[length] == b[length] { length += 1 }
    return length
}
