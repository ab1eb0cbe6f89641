import Foundation
import Testing

@testable import Signing

/// `ES256Signer.sign(_:in:)`: a payload that nests JWS of its signer, signed from its parts, is the JWS the
/// general path gives for the assembled payload, byte for byte apart from the randomized signatures.
struct NestingSignerTests {
    let signer = ES256Signer(pki: sharedPKI)
    let header = JWSHeader(alg: "ES256", x5c: JWS.x5c(sharedPKI.chain))

    /// The JSON pieces and nested payloads of one round, in one buffer, and their layout.
    private func parts(_ pieces: [String], _ nested: [String]) -> ([UInt8], NestingPayload) {
        var json: [UInt8] = []
        var nestedRanges: [Range<Int>] = []
        for payload in nested {
            let start = json.count
            json += Array(payload.utf8)
            nestedRanges.append(start..<json.count)
        }
        var pieceRanges: [Range<Int>] = []
        for piece in pieces {
            let start = json.count
            json += Array(piece.utf8)
            pieceRanges.append(start..<json.count)
        }
        return (json, NestingPayload(pieces: pieceRanges, nested: nestedRanges))
    }

    /// The first two segments (header and payload) of a JWS.
    private func signingInput(_ jws: String) -> [Substring] {
        Array(jws.split(separator: ".", omittingEmptySubsequences: false).prefix(2))
    }

    /// Every alignment of the opening and of the text between the nested JWS (lengths 0...5 cover each
    /// remainder modulo 3 twice), with one, two or no nested payloads, through both output forms.
    @Test(arguments: 0..<6, 0..<6)
    func signsFromPartsWhatTheAssembledPayloadSigns(openingExtra: Int, middleExtra: Int) throws {
        let opening = "{\"a\":\"" + String(repeating: "o", count: openingExtra)
        let middle = "\",\"p\":\"" + String(repeating: "m", count: middleExtra) + "\",\"b\":\""
        for nested in [["{\"n\":1}", "{\"second\":22}"], ["{\"only\":\(middleExtra)}"], []] {
            let pieces = [opening] + (nested.count == 2 ? [middle] : []) + (nested.isEmpty ? [] : ["\"}"])
            let (json, layout) = parts(nested.isEmpty ? [opening + "\"}"] : pieces, nested)
            var nestedJWS: [Int: String] = [:]
            let jws = try json.withUnsafeBufferPointer { try signer.sign(layout, in: $0) { nestedJWS[$0] = $1 } }
            #expect(nestedJWS.count == nested.count)
            var assembled = ""
            for (index, piece) in (nested.isEmpty ? [opening + "\"}"] : pieces).enumerated() {
                assembled += piece
                if index < nested.count { assembled += try #require(nestedJWS[index]) }
            }
            let general = try JWS.sign(payload: Array(assembled.utf8), header: header, key: sharedPKI.leafKey)
            #expect(signingInput(jws) == signingInput(general))
            #expect(verify(jws, key: sharedPKI.leafKey))
            for (index, payload) in nested.enumerated() {
                let jws = try #require(nestedJWS[index])
                let general = try JWS.sign(payload: Array(payload.utf8), header: header, key: sharedPKI.leafKey)
                #expect(signingInput(jws) == signingInput(general))
                #expect(verify(jws, key: sharedPKI.leafKey))
            }
            let body = try json.withUnsafeBufferPointer {
                try signer.sign(layout, in: $0, between: Array("<".utf8), and: Array(">".utf8))
            }
            let bodyJWS = String(decoding: body.dropFirst().dropLast(), as: UTF8.self)
            #expect(body.first == UInt8(ascii: "<") && body.last == UInt8(ascii: ">"))
            #expect(bodyJWS.utf8.count == jws.utf8.count)
            #expect(verify(bodyJWS, key: sharedPKI.leafKey))
        }
    }

    /// The opening up to the first nested header is kept once per distinct opening and reused after: the
    /// second call with the same opening gives the same signing input from the kept text and digest state.
    @Test func keepsEachOpeningOnceAndStaysExact() throws {
        let signer = ES256Signer(pki: sharedPKI)
        for round in 0..<6 {
            let opening = round % 2 == 0 ? "{\"data\":\"" : "{\"data\":{\"x\":1},\"n\":\""
            let (json, layout) = parts([opening, "\",\"r\":\(round)}"], ["{\"round\":\(round)}"])
            var nested = ""
            let jws = try json.withUnsafeBufferPointer { try signer.sign(layout, in: $0) { nested = $1 } }
            let assembled = Array((opening + nested + "\",\"r\":\(round)}").utf8)
            let general = try JWS.sign(payload: assembled, header: header, key: sharedPKI.leafKey)
            #expect(signingInput(jws) == signingInput(general), "round \(round)")
            #expect(verify(jws, key: sharedPKI.leafKey))
            // The general path reuses what the nesting path kept: the same bytes up to the header's groups.
            let again = try signer.sign(payload: assembled)
            #expect(signingInput(again) == signingInput(general))
        }
        #expect(signer.keptPrefixCount == 2)
    }
}
