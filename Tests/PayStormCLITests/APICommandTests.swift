import Foundation
import RunControl
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

    /// Arguments are checked in the order they are read, so a bad `--listen` is named even when `--pki` is
    /// missing too (it used to be reported as a missing `--pki`).
    @Test(arguments: [
        (["serve", "--listen", "nope"], "--listen expects HOST:PORT, got 'nope'"),
        (["serve", "--listen", "10.1.2.3:80"], "refusing to listen on non-loopback 10.1.2.3"),
        (["serve", "--pki", "/nonexistent/pki", "--fault-seed", "-1"], "--fault-seed expects a non-negative integer"),
    ])
    func namesTheFirstBadArgument(arguments: [String], message: String) {
        do {
            _ = try Command.api.run(Arguments(arguments))
            Issue.record("\(arguments) ran")
        } catch let error as CLIError {
            #expect(error.exitCode == .usage)
            #expect(error.message.contains(message), "\(error.message)")
        } catch {
            Issue.record("\(arguments) threw \(error)")
        }
    }
}
