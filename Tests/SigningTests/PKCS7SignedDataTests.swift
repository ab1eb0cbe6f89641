import Testing

@testable import Signing

struct PKCS7SignedDataTests {
    @Test func signedContentVerifiesUnderTheRootAndReadsBack() throws {
        let content = DER.set([DER.integer(1), DER.utf8String("receipt")]) + [0x0D, 0x0A, 0x00]
        let signed = try PKCS7SignedData.sign(content, with: sharedPKI)
        #expect(try PKCS7SignedData.verifiedContent(signed, trusting: sharedPKI.root) == content)
    }

    @Test func carriesTheWholeChain() throws {
        let signed = try PKCS7SignedData.sign([0x31, 0x00], with: sharedPKI)
        for certificate in sharedPKI.chain {
            #expect(contains(signed, certificate.der), "the SignedData should carry \(certificate.subject)")
        }
    }

    @Test func refusesAnotherRootOrTamperedBytes() throws {
        let signed = try PKCS7SignedData.sign(DER.utf8String("receipt"), with: sharedPKI)
        let otherRoot = try TestPKI.generate().root
        #expect(throws: SigningError.self) { try PKCS7SignedData.verifiedContent(signed, trusting: otherRoot) }
        var tampered = signed
        let index = try #require(firstIndex(of: Array("receipt".utf8), in: tampered))
        tampered[index] ^= 0x20
        #expect(throws: SigningError.self) { try PKCS7SignedData.verifiedContent(tampered, trusting: sharedPKI.root) }
        #expect(throws: SigningError.self) {
            try PKCS7SignedData.verifiedContent([0x30, 0x00], trusting: sharedPKI.root)
        }
    }

    @Test func hashesWithSHA1() {
        let hex = sha1(Array("abc".utf8)).map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
        #expect(hex == "a9993e364706816aba3e25717850c26c9cd0d89d")
    }

    private func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        firstIndex(of: needle, in: haystack) != nil
    }

    private func firstIndex(of needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard needle.count <= haystack.count else { return nil }
        return (0...(haystack.count - needle.count)).first { Array(haystack[$0..<$0 + needle.count]) == needle }
    }
}
