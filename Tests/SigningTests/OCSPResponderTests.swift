import Foundation
import PayStormTestKit
import Testing

@testable import Signing

@Suite struct OCSPResponderTests {
    @Test(arguments: [("leaf", "intermediate", "-sha256"), ("intermediate", "root", "-sha1")])
    func answersGoodSignedByTheIssuer(_ subject: String, _ issuer: String, _ hash: String) throws {
        let openssl = try #require(findExecutable("openssl"))
        let directory = try makeTemporaryFolder("paystorm-signing").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try sharedPKI.write(to: directory)
        let (made, madeOutput) = try runProcess(
            openssl,
            [
                "ocsp", hash, "-issuer", "\(directory)/\(issuer).pem", "-cert", "\(directory)/\(subject).pem",
                "-reqout", "\(directory)/request.der",
            ]
        )
        #expect(made == 0, "\(madeOutput)")
        let request = try #require(FileManager.default.contents(atPath: "\(directory)/request.der"))
        let response = OCSPResponder(pki: sharedPKI).respond(to: Array(request))
        try Data(response).write(to: URL(fileURLWithPath: "\(directory)/response.der"))
        let (checked, output) = try runProcess(
            openssl,
            [
                // -no_nonce: with -cert, openssl builds a fresh request whose nonce cannot match.
                "ocsp", "-no_nonce", hash, "-respin", "\(directory)/response.der",
                "-issuer", "\(directory)/\(issuer).pem", "-cert", "\(directory)/\(subject).pem",
                "-VAfile", "\(directory)/\(issuer).pem",
            ]
        )
        #expect(checked == 0, "\(output)")
        #expect(output.contains("Response verify OK"), "\(output)")
        #expect(output.contains("\(subject).pem: good"), "\(output)")
        #expect(output.contains("Next Update"), "\(output)")
    }

    @Test(arguments: [[UInt8](), [0x30, 0x00], Array("GET / HTTP/1.1".utf8)])
    func answersMalformedRequestToGarbage(_ bytes: [UInt8]) {
        // OCSPResponse { responseStatus ENUMERATED malformedRequest(1) }
        #expect(OCSPResponder(pki: sharedPKI).respond(to: bytes) == [0x30, 0x03, 0x0A, 0x01, 0x01])
    }

    @Test func answersUnauthorizedForAForeignIssuer() throws {
        let openssl = try #require(findExecutable("openssl"))
        let directory = try makeTemporaryFolder("paystorm-signing").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let foreign = try TestPKI.generate()
        try foreign.write(to: directory)
        let (made, _) = try runProcess(
            openssl,
            [
                "ocsp", "-issuer", "\(directory)/intermediate.pem", "-cert", "\(directory)/leaf.pem",
                "-reqout", "\(directory)/request.der",
            ]
        )
        #expect(made == 0)
        let request = try #require(FileManager.default.contents(atPath: "\(directory)/request.der"))
        #expect(OCSPResponder(pki: sharedPKI).respond(to: Array(request)) == [0x30, 0x03, 0x0A, 0x01, 0x06])
    }
}
