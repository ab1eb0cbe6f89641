import AppStoreModel
import Foundation
import PayStormTestKit
import Testing

@testable import Signing

@Suite struct SignedDataVerifierTests {
    @Test(arguments: VerifierFixtures.cases)
    func givesPythonsStatus(_ scenario: VerifierCase) throws {
        let verifier = try SignedDataVerifier(
            rootCertificates: scenario.root.isEmpty ? [] : [scenario.root],
            enableOnlineChecks: false,
            environment: scenario.environment,
            bundleId: VerifierFixtures.bundle,
            appAppleId: scenario.appAppleId
        )
        // Twice: the second call goes through the chain cache and must answer the same.
        for _ in 0..<2 {
            #expect(status(verifier, scenario) == scenario.swift, "\(scenario.name)")
        }
    }

    @Test func pythonAgreesOnEveryCase() throws {
        guard pythonLibraryAvailable, let python = findExecutable("python3") else { return }
        let cases = VerifierFixtures.cases
        let input = cases.map { scenario -> String in
            let fields: [String: Any] = [
                "method": scenario.method.rawValue, "jws": scenario.jws, "env": scenario.environment.rawValue,
                "appAppleId": scenario.appAppleId.map { NSNumber(value: $0) } ?? NSNull(),
                "root": Data(scenario.root).base64EncodedString(), "bundle": VerifierFixtures.bundle,
            ]
            let data = try! JSONSerialization.data(withJSONObject: fields)
            return String(decoding: data, as: UTF8.self)
        }
        .joined(separator: "\n")
        let script = """
            import sys, json, base64
            from appstoreserverlibrary.signed_data_verifier import SignedDataVerifier, VerificationException
            from appstoreserverlibrary.models.Environment import Environment
            for line in sys.stdin:
                c = json.loads(line)
                root = base64.b64decode(c['root'])
                v = SignedDataVerifier([root] if root else [], False, Environment(c['env']), c['bundle'], c['appAppleId'])
                method = {'notification': v.verify_and_decode_notification,
                          'transaction': v.verify_and_decode_signed_transaction,
                          'renewal': v.verify_and_decode_renewal_info,
                          'appTransaction': v.verify_and_decode_app_transaction}[c['method']]
                try:
                    method(c['jws']); print('OK')
                except VerificationException as e:
                    print(e.status.name)
                except Exception as e:
                    print('EXCEPTION')
            """
        let (code, output) = try runProcess(python, ["-c", script], input: input + "\n")
        #expect(code == 0, "python failed: \(output)")
        let answers = output.split(separator: "\n").map(String.init)
        #expect(answers.count == cases.count)
        for (scenario, answer) in zip(cases, answers) {
            #expect(answer == scenario.python, "python on '\(scenario.name)'")
        }
    }

    @Test func productionWithoutAppAppleIdIsRefused() {
        #expect(throws: VerifierConfigurationError.self) {
            try SignedDataVerifier(
                rootCertificates: [sharedPKI.root.der],
                enableOnlineChecks: false,
                environment: .production,
                bundleId: "b",
                appAppleId: nil
            )
        }
    }

    @Test func localTestingSkipsTheSignature() throws {
        let verifier = try SignedDataVerifier(
            rootCertificates: [],
            enableOnlineChecks: false,
            environment: .localTesting,
            bundleId: VerifierFixtures.bundle,
            appAppleId: nil
        )
        let jws = VerifierFixtures.sign(
            VerifierFixtures.transaction(environment: "LocalTesting"),
            header: JWSHeader(alg: "none"),
            key: try SigningKey.generate(.p256)
        )
        #expect(try verifier.verifyAndDecodeTransaction(jws).get().transactionId == "2000000001")
    }

    @Test func decodesTheModel() throws {
        let verifier = try SignedDataVerifier(
            rootCertificates: [sharedPKI.root.der],
            enableOnlineChecks: false,
            environment: .sandbox,
            bundleId: VerifierFixtures.bundle,
            appAppleId: nil
        )
        let transaction = try verifier.verifyAndDecodeTransaction(
            VerifierFixtures.sign(VerifierFixtures.transaction())
        ).get()
        #expect(transaction.price == 990)
        #expect(transaction.type == .consumable)
        let notification = try verifier.verifyAndDecodeNotification(
            VerifierFixtures.sign(VerifierFixtures.notification(body: VerifierFixtures.data()))
        ).get()
        #expect(notification.notificationType == .subscribed)
        #expect(notification.data?.status == .active)
    }

    @Test func cacheRechecksTheDateWindow() throws {
        let verifier = try SignedDataVerifier(
            rootCertificates: [sharedPKI.root.der],
            enableOnlineChecks: false,
            environment: .sandbox,
            bundleId: VerifierFixtures.bundle,
            appAppleId: nil
        )
        let inside = VerifierFixtures.sign(VerifierFixtures.transaction())
        let before = VerifierFixtures.sign(
            VerifierFixtures.transaction(signedDate: "\(VerifierFixtures.nowMs - 500 * VerifierFixtures.day)")
        )
        #expect((try? verifier.verifyAndDecodeTransaction(inside).get()) != nil)
        // Same header (so a cache hit), date outside the window: must still fail.
        if case .failure(let error) = verifier.verifyAndDecodeTransaction(before) {
            #expect(error.status == .verificationFailure)
        } else {
            Issue.record("a signedDate before the chain was accepted from the cache")
        }
    }

    /// The chain cache answers for the certificates, never for the signature: a JWS with the cached
    /// header (the same `x5c`) signed by another key is rejected after a genuine one was accepted.
    @Test func cachedChainStillRejectsAnotherLeafKey() throws {
        let verifier = try sandboxVerifier(trusting: sharedPKI.root.der)
        #expect(
            (try? verifier.verifyAndDecodeTransaction(VerifierFixtures.sign(VerifierFixtures.transaction()))
                .get()) != nil
        )
        let foreign = VerifierFixtures.sign(VerifierFixtures.transaction(), key: try SigningKey.generate(.p256))
        #expect(verifier.verifyAndDecodeTransaction(foreign).failure?.status == .verificationFailure)
        #expect(verifier.verifyAndDecodeTransaction(foreign).failure?.detail.contains("leaf key") == true)
    }

    /// A cached chain is valid only inside its window: a JWS with the cached header signed after the
    /// chain expired is rejected.
    @Test func cachedChainStillRejectsADateAfterItExpired() throws {
        let verifier = try sandboxVerifier(trusting: sharedPKI.root.der)
        #expect(
            (try? verifier.verifyAndDecodeTransaction(VerifierFixtures.sign(VerifierFixtures.transaction()))
                .get()) != nil
        )
        let expired = VerifierFixtures.sign(
            VerifierFixtures.transaction(signedDate: "\(VerifierFixtures.nowMs + 3 * 365 * VerifierFixtures.day)")
        )
        #expect(verifier.verifyAndDecodeTransaction(expired).failure?.status == .verificationFailure)
        #expect(verifier.verifyAndDecodeTransaction(expired).failure?.detail.contains("expired") == true)
    }

    /// The cache belongs to one verifier and its roots: a chain cached by a verifier that trusts its root
    /// is still rejected by a verifier that trusts another root, and a chain to an untrusted root is
    /// rejected by the verifier that cached a genuine one.
    @Test func cachedChainStillRejectsAWrongRoot() throws {
        let genuine = VerifierFixtures.sign(VerifierFixtures.transaction())
        let trusting = try sandboxVerifier(trusting: sharedPKI.root.der)
        #expect((try? trusting.verifyAndDecodeTransaction(genuine).get()) != nil)
        let other = try TestPKI.generate()
        let elsewhere = try sandboxVerifier(trusting: other.root.der)
        for _ in 0..<2 {
            #expect(elsewhere.verifyAndDecodeTransaction(genuine).failure?.status == .verificationFailure)
        }
        let untrusted = VerifierFixtures.sign(VerifierFixtures.transaction(), pki: other)
        #expect(trusting.verifyAndDecodeTransaction(untrusted).failure?.status == .verificationFailure)
        #expect((try? trusting.verifyAndDecodeTransaction(genuine).get()) != nil)
    }

    private func sandboxVerifier(trusting root: [UInt8]) throws -> SignedDataVerifier {
        try SignedDataVerifier(
            rootCertificates: [root],
            enableOnlineChecks: false,
            environment: .sandbox,
            bundleId: VerifierFixtures.bundle,
            appAppleId: nil
        )
    }
}

private func status(_ verifier: SignedDataVerifier, _ scenario: VerifierCase) -> String {
    let error: VerificationError?
    switch scenario.method {
    case .notification: error = verifier.verifyAndDecodeNotification(scenario.jws).failure
    case .transaction: error = verifier.verifyAndDecodeTransaction(scenario.jws).failure
    case .renewal: error = verifier.verifyAndDecodeRenewalInfo(scenario.jws).failure
    case .appTransaction: error = verifier.verifyAndDecodeAppTransaction(scenario.jws).failure
    }
    return error?.status.rawValue ?? "OK"
}

extension Result {
    fileprivate var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
