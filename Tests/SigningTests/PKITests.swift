import Foundation
import PayStormTestKit
import Testing

@testable import Signing

@Suite struct PKITests {
    @Test func generatesTheAppleLikeProfile() throws {
        let pki = sharedPKI
        #expect(pki.rootKey.curve == .p384)
        #expect(pki.intermediateKey.curve == .p384)
        #expect(pki.leafKey.curve == .p256)
        #expect(pki.intermediate.extensionCriticality(oid: AppleOID.intermediate) == false)
        #expect(pki.leaf.extensionCriticality(oid: AppleOID.leaf) == false)
        #expect(pki.leaf.extensionCriticality(oid: AppleOID.intermediate) == nil)
        for cert in pki.chain {
            #expect(cert.extensionCriticality(oid: "2.5.29.19") == true)  // basicConstraints
            #expect(cert.extensionCriticality(oid: "2.5.29.15") == true)  // keyUsage
            #expect(cert.extensionCriticality(oid: "2.5.29.14") == false)  // SKI
        }
        #expect(pki.root.extensionCriticality(oid: "2.5.29.35") == nil)  // no AKI on the self-signed root
        #expect(pki.intermediate.extensionCriticality(oid: "2.5.29.35") == false)
        #expect(pki.leaf.extensionCriticality(oid: "2.5.29.35") == false)
        #expect(pki.root.subject == pki.intermediate.issuer)
        #expect(pki.intermediate.subject == pki.leaf.issuer)
        #expect(pki.leaf.notBefore < Date() - 399 * 86_400)
        #expect(pki.leaf.ocspURL == nil)
    }

    @Test func appleOIDValueIsASN1Null() throws {
        // The extension's DER ends with OCTET STRING { NULL }: 04 02 05 00.
        let der = sharedPKI.leaf.der
        let oid: [UInt8] = [0x06, 0x0A, 0x2A, 0x86, 0x48, 0x86, 0xF7, 0x63, 0x64, 0x06, 0x0B, 0x01]
        let index = try #require(firstIndex(of: oid, in: der))
        #expect(Array(der[(index + oid.count)..<(index + oid.count + 4)]) == [0x04, 0x02, 0x05, 0x00])
    }

    @Test func opensslStrictVerifyAcceptsTheChain() throws {
        let openssl = try #require(findExecutable("openssl"))
        let directory = try makeTemporaryFolder("paystorm-signing").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try sharedPKI.write(to: directory)
        let (status, output) = try runProcess(
            openssl,
            [
                "verify", "-x509_strict", "-CAfile", "\(directory)/root.pem", "-untrusted",
                "\(directory)/intermediate.pem", "\(directory)/leaf.pem",
            ]
        )
        #expect(status == 0, "openssl verify said: \(output)")
    }

    @Test func writeThenLoadRoundTrips() throws {
        let directory = try makeTemporaryFolder("paystorm-signing").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try sharedPKI.write(to: directory)
        let loaded = try TestPKI.load(from: directory)
        #expect(loaded.root.der == sharedPKI.root.der)
        #expect(loaded.intermediate.der == sharedPKI.intermediate.der)
        #expect(loaded.leaf.der == sharedPKI.leaf.der)
        #expect(try loaded.leafKey.pem() == sharedPKI.leafKey.pem())
        let rootDER = try #require(FileManager.default.contents(atPath: "\(directory)/root.der"))
        #expect(Array(rootDER) == sharedPKI.root.der)
        for name in ["root.key", "intermediate.key", "leaf.key"] {
            let attributes = try FileManager.default.attributesOfItem(atPath: "\(directory)/\(name)")
            #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600, "\(name)")
        }
    }

    @Test(arguments: [
        ("missing-dir", PKIError.Kind.missing),
        ("missing-file", .missing),
        ("garbage-cert", .malformed),
        ("garbage-key", .malformed),
        ("mismatched-key", .malformed),
    ])
    func loadRejectsBrokenDirectories(_ damage: String, _ kind: PKIError.Kind) throws {
        let directory = try makeTemporaryFolder("paystorm-signing").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try sharedPKI.write(to: directory)
        switch damage {
        case "missing-dir": try FileManager.default.removeItem(atPath: directory)
        case "missing-file": try FileManager.default.removeItem(atPath: "\(directory)/leaf.pem")
        case "garbage-cert":
            try Data("not a cert".utf8).write(to: URL(fileURLWithPath: "\(directory)/intermediate.pem"))
        case "garbage-key": try Data("nope".utf8).write(to: URL(fileURLWithPath: "\(directory)/leaf.key"))
        default:
            try Data(try sharedPKI.intermediateKey.pem().utf8).write(to: URL(fileURLWithPath: "\(directory)/leaf.key"))
        }
        let error = #expect(throws: PKIError.self) { try TestPKI.load(from: directory) }
        #expect(error?.kind == kind)
    }

    @Test(arguments: [("leaf", "intermediate"), ("intermediate", "root")])
    func loadRefusesACertificateItsIssuerDidNotSign(_ name: String, _ issuer: String) throws {
        let directory = try makeTemporaryFolder("paystorm-signing").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try sharedPKI.write(to: directory)
        // Another chain's certificate with its own key: the two match, but the issuer here did not sign it.
        let other = try TestPKI.generate()
        let (certificate, key) =
            name == "leaf" ? (other.leaf, other.leafKey) : (other.intermediate, other.intermediateKey)
        try Data(certificate.pem().utf8).write(to: URL(fileURLWithPath: "\(directory)/\(name).pem"))
        try Data(try key.pem().utf8).write(to: URL(fileURLWithPath: "\(directory)/\(name).key"))
        let error = #expect(throws: PKIError.self) { try TestPKI.load(from: directory) }
        #expect(error?.kind == .malformed)
        #expect(
            error?.message.contains("\(name).pem does not verify under \(issuer).pem") == true,
            "\(String(describing: error))"
        )
    }

    @Test func variantKeepsTheRoot() throws {
        let variant = try sharedPKI.variant(
            PKIOptions(ocspURL: "http://127.0.0.1:9/ocsp", leafAppleOID: false, appleOIDsCritical: true)
        )
        #expect(variant.root.der == sharedPKI.root.der)
        #expect(variant.leaf.der != sharedPKI.leaf.der)
        #expect(variant.leaf.extensionCriticality(oid: AppleOID.leaf) == nil)
        #expect(variant.intermediate.extensionCriticality(oid: AppleOID.intermediate) == true)
        #expect(variant.leaf.ocspURL == "http://127.0.0.1:9/ocsp")
        #expect(variant.intermediate.ocspURL == "http://127.0.0.1:9/ocsp")
    }

    @Test func keyPEMRoundTrips() throws {
        let key = try SigningKey.generate(.p256)
        let pem = try key.pem()
        #expect(pem.hasPrefix("-----BEGIN PRIVATE KEY-----"))
        #expect(try SigningKey(pem: pem).publicKeyDER() == key.publicKeyDER())
        #expect(throws: SigningError.self) { try SigningKey(pem: "garbage") }
        #expect(throws: SigningError.self) { try Certificate(der: [1, 2, 3]) }
    }
}

private func firstIndex(of needle: [UInt8], in haystack: [UInt8]) -> Int? {
    guard needle.count <= haystack.count else { return nil }
    for start in 0...(haystack.count - needle.count) where Array(haystack[start..<(start + needle.count)]) == needle {
        return start
    }
    return nil
}
