import Foundation
import Minting
import PayStormTestKit
import ReferenceLedger
import Signing
import Testing

/// The shared `withLedger` fixture: the ledger answers during the body, and nothing of it outlives the body.
struct WithLedgerTests {
    struct Expected: Error {}

    static func configuration(_ path: String) -> LedgerConfiguration {
        LedgerConfiguration(
            databasePath: path,
            trustedRoots: [MintedLedgerTests.pki.root.der],
            bundleId: MintedLedgerTests.minter.app.bundleId
        )
    }

    @Test func removesTheDatabaseAfterTheBodyEvenWhenItThrows() throws {
        var database = ""
        let configuration = { (path: String) in
            database = path
            return Self.configuration(path)
        }
        #expect(throws: Expected.self) {
            try withLedger(configuration: configuration) { port in
                #expect(try RawHTTPClient.exchange(port: port, "GET", "/health").status == 200)
                #expect(FileManager.default.fileExists(atPath: database))
                throw Expected()
            }
        }
        #expect(!database.isEmpty)
        #expect(!FileManager.default.fileExists(atPath: database))
    }
}
