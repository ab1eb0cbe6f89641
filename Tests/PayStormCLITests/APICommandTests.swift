import Foundation
import PayStorm
import Testing

@testable import PayStormCLI

/// `paystorm api serve` refuses what it cannot serve with one line and the README's exit code, before it listens.
struct APICommandTests {
    @Test(arguments: [
        (["api"], ExitCode.usage), (["api", "listen"], .usage), (["api", "serve"], .usage),
        (["api", "serve", "--pki", "/nonexistent/pki"], .noInput),
        (["api", "serve", "--pki", "/nonexistent/pki", "--key-id", "K1"], .usage),
        (["api", "serve", "--pki", "/nonexistent/pki", "--rate-limit", "1.5"], .usage),
        (["api", "serve", "--pki", "/nonexistent/pki", "--listen", "10.1.2.3:80"], .usage),
        (["api", "serve", "--pki", "/nonexistent/pki", "--environment", "Xcode"], .usage),
        (
            ["api", "serve", "--pki", "/nonexistent/pki", "--key-id", "K1", "--public-key", "/nonexistent/key.pem"],
            .noInput
        ),
    ])
    func refusesBadArgumentsWithTheirExitCode(arguments: [String], code: ExitCode) {
        #expect(PayStormCLI.run(arguments) == code)
    }
}
