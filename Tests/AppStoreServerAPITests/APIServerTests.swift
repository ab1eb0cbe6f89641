import AppStoreServerAPI
import Foundation
import HTTPServer
import Signing
import Testing

/// The API over HTTPS on loopback, checked with the `curl` tool trusting only the test root.
struct APIServerTests {
    private static let curl = "/usr/bin/curl"

    /// `curl` with the test root as its only CA; returns the exit status and the body.
    private func fetch(_ url: String, extra: [String]) throws -> (status: Int32, body: String) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("api-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let ca = directory.appendingPathComponent("root.pem")
        try Data(APIFixture.pki.root.pem().utf8).write(to: ca)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Self.curl)
        process.arguments = ["-sS", "--max-time", "10", "--cacert", ca.path] + extra + [url]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let body = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: body, as: UTF8.self))
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: curl)))
    func servesHTTPSUnderApplesHostNameWithACertificateFromTheTestRoot() throws {
        let fixture = try APIFixture()
        fixture.store.insert(APIFixture.facts(id: "81"), customer: 0, at: APIFixture.start)
        let certificate = try TLSServerCertificate.issue(
            by: APIFixture.pki,
            hostNames: TLSServerCertificate.appStoreHostNames
        )
        let server = try APIServer(
            api: fixture.api,
            tls: HTTPServerTLS(keyPEM: try certificate.keyPEM(), certificateChainPEM: certificate.certificatePEM)
        )
        defer { server.shutdown() }
        #expect(server.baseURL.hasPrefix("https://127.0.0.1:"))
        let host = "api.storekit-sandbox.itunes.apple.com"
        let mapped = try fetch(
            "https://\(host):\(server.server.port)/paystorm/transactions",
            extra: ["--resolve", "\(host):\(server.server.port):127.0.0.1"]
        )
        #expect(mapped.status == 0)
        #expect(mapped.body.contains("\"transactionId\":\"81\""))
        let byAddress = try fetch(server.baseURL + "/paystorm/transactions", extra: [])
        #expect(byAddress.status == 0)
        // A name the certificate does not carry fails verification (curl exit 60).
        let other = "api.example.com"
        let unnamed = try fetch(
            "https://\(other):\(server.server.port)/paystorm/transactions",
            extra: ["--resolve", "\(other):\(server.server.port):127.0.0.1"]
        )
        #expect(unnamed.status == 60)
    }

    @Test func refusesToStartHTTPSWithAKeyThatIsNoKey() {
        #expect(throws: HTTPServerError.self) {
            try HTTPServer(tls: HTTPServerTLS(keyPEM: "not a key", certificateChainPEM: "not a certificate")) { _ in
                HTTPResponse(status: 200)
            }
        }
    }
}
