import Foundation
import PayStormTestKit
import Testing

/// The own-accounts examples as shipped, against a ledger started apart: provisioning that dictates each account's
/// token, and a bulk probe reading the run's accounts on stdin, each to a passing verdict on every account.
struct OwnAccountsExampleTests {
    @Test(arguments: ["dictated-tokens", "bulk-probe"])
    func theExamplePassesAgainstALedgerStartedApart(example: String) throws {
        try withTemporaryFolder("own-accounts-\(example)") { folder in
            let work = folder.path
            #expect(try PayStormRunner.exec(["pki", "init", work + "/pki"]).0 == 0)
            let ledger = try LedgerProcess(arguments: [
                "ledger", "serve", "--db", work + "/ledger.db", "--trust", work + "/pki/root.der", "--bundle-id",
                "com.example.paystorm",
            ])
            defer { ledger.terminate() }
            let (code, output) = try PayStormRunner.exec([
                "run", "Profiles/examples/own-accounts/\(example).json5", "--plain", "--no-history", "--pki",
                work + "/pki", "--set", "PORT=\(ledger.port)", "--reports", work + "/reports",
            ])
            #expect(code == 0, "\(output)")
            #expect(output.contains("provisioned 20 of 20 accounts"), "\(output)")
        }
    }
}
