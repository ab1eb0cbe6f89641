import Foundation
import RunControl
import Testing

@testable import PayStormCLI

/// `paystorm pki init`'s checks of its options and of the folder, each one line with its README exit code.
struct PKICommandTests {
    static func directory() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("pki-\(UUID().uuidString)").path
    }

    @Test(
        arguments: [
            (["--ocsp-url", "https://127.0.0.1/"], "--ocsp-url must be an http:// URL, got 'https://127.0.0.1/'"),
            (["--ocsp-url", "http://"], "--ocsp-url must be an http:// URL, got 'http://'"),
            (["--valid-from", "yesterday"], "--valid-from expects an ISO 8601 date"),
            (["--valid-days", "0"], "--valid-days must be 1…36500"),
            (["--valid-days", "36501"], "--valid-days must be 1…36500"),
            (["--valid-from", "2999-01-01T00:00:00Z"], "the validity ends before it starts"),
            (["--force", "--extra"], "unknown argument '--extra'"),
        ] as [([String], String)]
    )
    func badOptionsAreUsageErrorsNamingTheOption(options: [String], message: String) {
        let directory = Self.directory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        do {
            _ = try Command.pki.run(Arguments(["init"] + options + [directory]))
            Issue.record("\(options) made a PKI")
        } catch let error as CLIError {
            #expect(error.exitCode == .usage, "\(error.message)")
            #expect(error.message.contains(message), "\(error.message)")
            #expect(!FileManager.default.fileExists(atPath: directory))
        } catch {
            Issue.record("\(options) threw \(error), not a CLIError")
        }
    }

    @Test func writesAPKIOnceAndReplacesItOnlyWithForce() throws {
        let directory = Self.directory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        #expect(try Command.pki.run(Arguments(["init", "--valid-days", "30", directory])) == .success)
        let root = try Data(contentsOf: URL(fileURLWithPath: directory).appendingPathComponent("root.der"))
        #expect {
            _ = try Command.pki.run(Arguments(["init", directory]))
        } throws: { error in
            guard let error = error as? CLIError else { return false }
            return error.exitCode == .cannotWrite && error.message.contains("already holds a PKI (")
                && error.message.hasSuffix("); pass --force to replace it")
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: directory).appendingPathComponent("root.der")) == root)
        #expect(try Command.pki.run(Arguments(["init", "--force", directory])) == .success)
        #expect(try Data(contentsOf: URL(fileURLWithPath: directory).appendingPathComponent("root.der")) != root)
    }
}
