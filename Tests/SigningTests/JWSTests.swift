import Foundation
import PayStormTestKit
import Testing

@testable import Signing

@Suite struct JWSTests {
    @Test(arguments: [
        ("", ""), ("f", "Zg"), ("fo", "Zm8"), ("foo", "Zm9v"), ("foob", "Zm9vYg"), ("fooba", "Zm9vYmE"),
        ("foobar", "Zm9vYmFy"), ("\u{FB}\u{FF}", "w7vDvw"),
    ])
    func base64URLMatchesRFC4648(_ plain: String, _ encoded: String) {
        #expect(JWS.base64URL(Array(plain.utf8)) == encoded)
        #expect(JWS.base64URLDecode(encoded) == Array(plain.utf8))
    }

    @Test(arguments: ["a+b", "a/b=", "Zg=x", "A", "a b", "Zg==="])
    func base64URLDecodeRejectsNonAlphabet(_ text: String) {
        #expect(JWS.base64URLDecode(text) == nil)
    }

    @Test func base64URLDecodeMatchesFoundationOnEveryLength() {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        for length in 0..<200 {
            let bytes: [UInt8] = (0..<length).map { _ in
                state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                return UInt8(truncatingIfNeeded: state >> 56)
            }
            let standard = Data(bytes).base64EncodedString()
            let url = standard.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            #expect(JWS.base64URLDecode(url) == bytes)
            #expect(JWS.base64URLDecode(url.replacingOccurrences(of: "=", with: "")) == bytes)
            #expect(JWS.base64URL(bytes) == url.replacingOccurrences(of: "=", with: ""))
            if length >= 3 {
                // One character outside the alphabet anywhere in the full groups is refused.
                var broken = Array(url.utf8)
                broken[Int(state % UInt64(length / 3 * 4))] = UInt8(ascii: "+")
                #expect(JWS.base64URLDecode(String(decoding: broken, as: UTF8.self)) == nil)
            }
        }
    }

    @Test func signProducesCompactES256WithRawSignature() throws {
        let header = JWSHeader(alg: "ES256", x5c: JWS.x5c(sharedPKI.chain))
        let payload = Array(#"{"signedDate":1700000000000}"#.utf8)
        let jws = try JWS.sign(payload: payload, header: header, key: sharedPKI.leafKey)
        let parts = jws.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        #expect(parts.count == 3)
        let headerJSON = try #require(JWS.base64URLDecode(parts[0]))
        let decoded = try JSONDecoder().decode(JWSHeader.self, from: Data(headerJSON))
        #expect(decoded == header)
        #expect(decoded.x5c?[0] == Data(sharedPKI.leaf.der).base64EncodedString())
        #expect(JWS.base64URLDecode(parts[1]) == payload)
        let signature = try #require(JWS.base64URLDecode(parts[2]))
        #expect(signature.count == 64)
        #expect(verify(jws, key: sharedPKI.leafKey))
    }

    @Test func signerMatchesTheGeneralPathAndVerifies() throws {
        let signer = ES256Signer(pki: sharedPKI)
        let payload = Array(#"{"a":1}"#.utf8)
        let fast = try signer.sign(payload: payload)
        let slow = try JWS.sign(
            payload: payload,
            header: JWSHeader(alg: "ES256", x5c: JWS.x5c(sharedPKI.chain)),
            key: sharedPKI.leafKey
        )
        // ECDSA is randomized: same header and payload segments, different signatures.
        #expect(fast.split(separator: ".").prefix(2) == slow.split(separator: ".").prefix(2))
        #expect(fast != slow)
        #expect(verify(fast, key: sharedPKI.leafKey))
    }

    @Test func signerIsSafeAcrossThreads() async throws {
        let signer = ES256Signer(pki: sharedPKI)
        let results = try await withThrowingTaskGroup(of: Bool.self) { group in
            for index in 0..<8 {
                group.addTask {
                    var ok = true
                    for round in 0..<25 {
                        let jws = try signer.sign(payload: Array("{\"i\":\(index),\"r\":\(round)}".utf8))
                        ok = ok && verify(jws, key: sharedPKI.leafKey)
                    }
                    return ok
                }
            }
            return try await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        #expect(results == Array(repeating: true, count: 8))
    }

    @Test func rawAndDERSignaturesConvertBothWays() throws {
        let context = try PKeyContext(key: sharedPKI.leafKey.pointer, mode: .sign)
        let digest = sha256(Array("x".utf8))
        let der = try context.signDER(digest: digest)
        let raw = try rawSignature(fromDER: der, width: 32)
        #expect(raw.count == 64)
        #expect(derSignature(fromRaw: raw) == der)
    }

    /// Raw signatures at the edges of DER's minimal INTEGER encoding: zero, leading zeros, top bits set.
    static let edgeSignatures: [[UInt8]] = {
        let zeros = [UInt8](repeating: 0, count: 64)
        let ones = [UInt8](repeating: 0xFF, count: 64)
        let smallR: [UInt8] = [UInt8](repeating: 0, count: 31) + [1] + [UInt8](repeating: 0x80, count: 32)
        let highR: [UInt8] = [0x80] + [UInt8](repeating: 0, count: 62) + [0x7F]
        var mixed: [UInt8] = [0, 0, 0x7F] + [UInt8](repeating: 0x11, count: 29)
        mixed += [0, 0x80] + [UInt8](repeating: 0x22, count: 30)
        let ramp: [UInt8] = (0..<64).map { UInt8(truncatingIfNeeded: $0 * 37) }
        return [zeros, ones, smallR, highR, mixed, ramp]
    }()

    @Test(arguments: edgeSignatures)
    func fastDERSignatureMatchesOpenSSL(_ raw: [UInt8]) {
        #expect(p256DERSignature(fromRaw: raw) == derSignature(fromRaw: raw))
    }

    @Test func fastDERSignatureMatchesOpenSSLOnRealSignatures() throws {
        let context = try PKeyContext(key: sharedPKI.leafKey.pointer, mode: .sign)
        for index in 0..<64 {
            let raw = try context.signRaw(digest: sha256(Array("message \(index)".utf8)))
            #expect(p256DERSignature(fromRaw: raw) == derSignature(fromRaw: raw))
        }
        #expect(p256DERSignature(fromRaw: [UInt8](repeating: 1, count: 63)) == nil)
    }

    /// A payload that embeds a JWS of the same signer (a notification's nested transaction) is signed with
    /// the repeated part's text and digest state kept from the first call: the JWS stays byte for byte
    /// the general path's apart from the randomized signature, and it verifies.
    @Test func signerKeepsTheRepeatedPrefixOfNestedPayloadsAndStaysExact() throws {
        let signer = ES256Signer(pki: sharedPKI)
        let header = JWSHeader(alg: "ES256", x5c: JWS.x5c(sharedPKI.chain))
        for round in 0..<4 {
            let nested = try signer.sign(payload: Array("{\"round\":\(round)}".utf8))
            // Every round shares the text up to the first nested header, then differs; the padding puts the
            // second nested header at each of the three alignments of base64's 3-byte groups.
            let padding = String(repeating: "x", count: round)
            let outer = Array(
                "{\"data\":{\"a\":\"\(nested)\",\"p\":\"\(padding)\",\"b\":\"\(nested)\"},\"r\":\(round)}".utf8
            )
            let fast = try signer.sign(payload: outer)
            let slow = try JWS.sign(payload: outer, header: header, key: sharedPKI.leafKey)
            #expect(fast.split(separator: ".").prefix(2) == slow.split(separator: ".").prefix(2))
            #expect(verify(fast, key: sharedPKI.leafKey))
        }
        #expect(signer.keptPrefixCount == 1)
        // Payloads without a nested JWS of this signer keep nothing.
        _ = try ES256Signer(pki: sharedPKI).sign(payload: Array("{}".utf8))
    }

    @Test func signerAppendsTheSameJWSItReturns() throws {
        let signer = ES256Signer(pki: sharedPKI)
        var buffer = Array("prefix:".utf8)
        try signer.append(payload: Array(#"{"a":1}"#.utf8), to: &buffer)
        let jws = String(decoding: buffer.dropFirst(7), as: UTF8.self)
        #expect(jws.split(separator: ".").count == 3)
        #expect(verify(jws, key: sharedPKI.leafKey))
    }

    @Test(arguments: edgeSignatures)
    func fastRawSignatureMatchesOpenSSL(_ raw: [UInt8]) throws {
        guard let der = derSignature(fromRaw: raw) else { return }
        let fast = der.withUnsafeBufferPointer { p256RawSignature(fromDER: $0) }
        #expect(fast == (try rawSignature(fromDER: der, width: 32)))
    }

    @Test func fastRawSignatureRefusesWhatIsNotAP256Signature() {
        let good = derSignature(fromRaw: [UInt8](repeating: 0x11, count: 64))!
        var badTag = good
        badTag[0] = 0x31
        var badLength = good
        badLength[1] += 1
        var signPadNotZero = derSignature(fromRaw: [0x80] + [UInt8](repeating: 1, count: 63))!
        signPadNotZero[4] = 1
        let trailing = good + [0]
        for der in [badTag, badLength, signPadNotZero, trailing, [], [0x30, 0]] {
            #expect(der.withUnsafeBufferPointer { p256RawSignature(fromDER: $0) } == nil)
        }
    }

    @Test func pythonLibraryAcceptsASignedTransaction() throws {
        guard pythonLibraryAvailable, let python = findExecutable("python3") else { return }
        let directory = try makeTemporaryFolder("paystorm-signing").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try sharedPKI.write(to: directory)
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        let payload = """
            {"bundleId":"com.example.app","environment":"Sandbox","signedDate":\(now),"transactionId":"1",\
            "originalTransactionId":"1","productId":"p","type":"Consumable","quantity":1,"price":990}
            """
        let jws = try ES256Signer(pki: sharedPKI).sign(payload: Array(payload.utf8))
        let script = """
            import sys
            from appstoreserverlibrary.signed_data_verifier import SignedDataVerifier
            from appstoreserverlibrary.models.Environment import Environment
            root = open(sys.argv[1], 'rb').read()
            v = SignedDataVerifier([root], False, Environment.SANDBOX, 'com.example.app')
            t = v.verify_and_decode_signed_transaction(sys.stdin.read().strip())
            print(t.transactionId)
            """
        let (status, output) = try runProcess(python, ["-c", script, "\(directory)/root.der"], input: jws)
        #expect(status == 0, "python said: \(output)")
        #expect(output.trimmingCharacters(in: .whitespacesAndNewlines) == "1")
    }
}

/// Verifies a compact ES256 JWS with a key's public half (test helper, independent of the verifier).
func verify(_ jws: String, key: SigningKey) -> Bool {
    let parts = jws.split(separator: ".", omittingEmptySubsequences: false)
    guard parts.count == 3, let raw = JWS.base64URLDecode(String(parts[2])), let der = derSignature(fromRaw: raw),
        let context = try? PKeyContext(key: key.pointer, mode: .verify)
    else { return false }
    let digest = sha256(Array("\(parts[0]).\(parts[1])".utf8))
    return context.verifyDER(signature: der, digest: digest)
}
