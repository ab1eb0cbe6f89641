import AppStoreModel
import Foundation
import HTTPServer
import PayStormTestKit
import Testing

@testable import Signing

/// Online checks (OCSP) against loopback responders, compared with Python's verifier.
@Suite(.serialized) struct OnlineChecksTests {
    /// One responder behaviour behind an AIA URL, and the status both verifiers must give.
    struct Scenario: Sendable, CustomStringConvertible {
        var name: String
        var responder: Responder
        var signedDateOffsetDays: Int64 = 0
        var expected: String
        var description: String { name }
    }

    enum Responder: Sendable {
        case good, unauthorizedIssuer, status500, garbage200, closedPort, noAIA
    }

    static let scenarios: [Scenario] = [
        Scenario(name: "GOOD from the issuer", responder: .good, expected: "OK"),
        Scenario(
            name: "signedDate before the chain is ignored",
            responder: .good,
            signedDateOffsetDays: -500,
            expected: "OK"
        ),
        Scenario(name: "no AIA extension", responder: .noAIA, expected: "VERIFICATION_FAILURE"),
        Scenario(name: "responder of another PKI", responder: .unauthorizedIssuer, expected: "VERIFICATION_FAILURE"),
        Scenario(name: "HTTP 500", responder: .status500, expected: "RETRYABLE_VERIFICATION_FAILURE"),
        Scenario(name: "garbage with HTTP 200", responder: .garbage200, expected: "VERIFICATION_FAILURE"),
        Scenario(name: "nothing listening", responder: .closedPort, expected: "RETRYABLE_VERIFICATION_FAILURE"),
    ]

    /// Starts the responder, mints a chain whose AIA points at it, and signs a transaction.
    private func prepare(_ scenario: Scenario) throws -> (jws: String, server: HTTPServer?) {
        let holder = PKIHolder()
        let foreign = OCSPResponder(pki: try TestPKI.generate())
        let kind = scenario.responder
        let server = try HTTPServer(threads: 1) { request in
            switch kind {
            case .good: return HTTPResponse(status: 200, body: holder.responder?.respond(to: request.body) ?? [])
            case .unauthorizedIssuer: return HTTPResponse(status: 200, body: foreign.respond(to: request.body))
            case .status500: return HTTPResponse(status: 500)
            case .garbage200: return HTTPResponse(status: 200, body: Array("not ocsp".utf8))
            case .closedPort, .noAIA: return HTTPResponse(status: 404)
            }
        }
        var url: String? = "http://\(server.address)/ocsp"
        if kind == .noAIA { url = nil }
        if kind == .closedPort { server.shutdown() }
        let pki = try sharedPKI.variant(PKIOptions(ocspURL: url))
        holder.responder = OCSPResponder(pki: pki)
        let date = VerifierFixtures.nowMs + scenario.signedDateOffsetDays * VerifierFixtures.day
        let jws = VerifierFixtures.sign(VerifierFixtures.transaction(signedDate: "\(date)"), pki: pki)
        return (jws, kind == .closedPort ? nil : server)
    }

    @Test(arguments: scenarios)
    func swiftAndPythonAgree(_ scenario: Scenario) throws {
        let (jws, server) = try prepare(scenario)
        defer { server?.shutdown() }
        let verifier = try SignedDataVerifier(
            rootCertificates: [sharedPKI.root.der],
            enableOnlineChecks: true,
            environment: .sandbox,
            bundleId: VerifierFixtures.bundle,
            appAppleId: nil
        )
        var answer = "OK"
        if case .failure(let error) = verifier.verifyAndDecodeTransaction(jws) { answer = error.status.rawValue }
        #expect(answer == scenario.expected, "swift on '\(scenario.name)'")

        guard pythonLibraryAvailable, let python = findExecutable("python3") else { return }
        let script = """
            import sys, base64
            from appstoreserverlibrary.signed_data_verifier import SignedDataVerifier, VerificationException
            from appstoreserverlibrary.models.Environment import Environment
            root = base64.b64decode(sys.argv[1])
            v = SignedDataVerifier([root], True, Environment.SANDBOX, sys.argv[2])
            try:
                v.verify_and_decode_signed_transaction(sys.stdin.read().strip()); print('OK')
            except VerificationException as e:
                print(e.status.name)
            """
        let (code, output) = try runProcess(
            python,
            ["-c", script, Data(sharedPKI.root.der).base64EncodedString(), VerifierFixtures.bundle],
            input: jws
        )
        #expect(code == 0, "python failed: \(output)")
        #expect(
            output.trimmingCharacters(in: .whitespacesAndNewlines) == scenario.expected,
            "python on '\(scenario.name)'"
        )
    }
}

/// The responder is made after the server (its URL goes into the certificates).
private final class PKIHolder: @unchecked Sendable {
    // @unchecked: written once before any request can reach the server's handler.
    var responder: OCSPResponder?
}
