import AppStoreModel
import HTTPServer
import Minting
import Profile
import Signing
import Synchronization
import Testing

/// Which forgeries a target that verifies with online checks on accepts, measured with PayStorm's own
/// verifier run both ways, against the table the run uses to leave them out
/// (`Faults.forgeriesAcceptedWithOnlineChecks`).
struct OnlineChecksForgeryTests {
    /// Whether everything a backend verifies in what a forgery produces passes: the notification and its
    /// nested transaction, or the bare transaction a device posts.
    private func accepted(_ forgery: Forgery, by verifier: SignedDataVerifier, minter: Minter) throws -> Bool {
        func ok<T>(_ result: Result<T, VerificationError>) -> Bool {
            if case .success = result { true } else { false }
        }
        let minted = try minter.notification(NotificationKind(.didRenew, nil, .subscription), forgery: forgery)
        let inner = try #require(minted.payload.data?.signedTransactionInfo)
        if ok(verifier.verifyAndDecodeNotification(minted.signedPayload))
            && ok(verifier.verifyAndDecodeTransaction(inner))
        {
            return true
        }
        guard forgery != .forgedInnerTransaction else { return false }
        return ok(verifier.verifyAndDecodeTransaction(try minter.transaction(forgery: forgery).jws))
    }

    @Test func tableOfForgeriesAcceptedWithOnlineChecksMatchesTheVerifier() throws {
        // The chain names a loopback OCSP responder (AIA), as a PKI made for online checks does.
        let responder = Mutex<OCSPResponder?>(nil)
        let server = try HTTPServer(threads: 2) { request in
            HTTPResponse(status: 200, body: responder.withLock { $0 }?.respond(to: request.body) ?? [])
        }
        defer { server.shutdown() }
        let pki = try TestPKI.generate(PKIOptions(ocspURL: "http://\(server.address)/ocsp"))
        responder.withLock { $0 = OCSPResponder(pki: pki) }
        let minter = Minter(pki: pki)
        var acceptedBy: [Bool: Set<String>] = [:]
        for online in [false, true] {
            let verifier = try SignedDataVerifier(
                rootCertificates: [pki.root.der],
                enableOnlineChecks: online,
                environment: .sandbox,
                bundleId: minter.app.bundleId,
                appAppleId: minter.app.appAppleId
            )
            let genuine = try minter.notification(NotificationKind(.didRenew, nil, .subscription))
            #expect(
                (try? verifier.verifyAndDecodeNotification(genuine.signedPayload).get()) != nil,
                "genuine data must verify (online: \(online)), or the comparison below means nothing"
            )
            acceptedBy[online] = Set(
                try Forgery.allCases.filter { try accepted($0, by: verifier, minter: minter) }.map(\.rawValue)
            )
        }
        #expect(acceptedBy[false] == [])
        #expect(acceptedBy[true] == Faults.forgeriesAcceptedWithOnlineChecks)
        #expect(Faults.forgeriesAcceptedWithOnlineChecks.isSubset(of: Faults.forgeryKinds))
    }
}
