import Foundation
import PayStormTestKit
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `paystorm ledger serve` refuses at startup what would make it look healthy while it cannot work, and
/// leaves a database that is complete on its own when stopped.
@Suite(.serialized)
struct LedgerStartupTests {
    static let bundleId = "com.paystorm.startup"

    /// A scratch folder with a test PKI; removed by the caller.
    static func scratch() throws -> String {
        let directory = NSTemporaryDirectory() + "ledger-startup-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        #expect(try PayStormRunner.exec(["pki", "init", directory + "/pki"]).0 == 0)
        return directory
    }

    static func serveArguments(db: String, trust: String) -> [String] {
        ["ledger", "serve", "--db", db, "--trust", trust, "--bundle-id", bundleId]
    }

    /// Runs the binary; a ledger that starts when it should have been refused is stopped after 15 s and
    /// reported as exit -1, so a regression fails instead of hanging.
    static func execBounded(_ arguments: [String]) throws -> (code: Int32, output: String) {
        let process = Process()
        process.executableURL = try PayStormBinary.url()
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        let exited = DispatchSemaphore(value: 0)
        process.terminationHandler = { _ in exited.signal() }
        try process.run()
        var timedOut = false
        if exited.wait(timeout: .now() + 15) == .timedOut {
            timedOut = true
            process.terminate()
            exited.wait()
        }
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        return (timedOut ? -1 : process.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    @Test func refusesATrustFileThatIsNotACertificateWithExit65() throws {
        let directory = try Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let notACertificate = directory + "/pki/root.key.txt"
        try Data("this is not a certificate\n".utf8).write(to: URL(fileURLWithPath: notACertificate))
        let result = try Self.execBounded(Self.serveArguments(db: directory + "/l.db", trust: notACertificate))
        #expect(result.code == 65, "\(result.output)")
        #expect(result.output.contains("trust root \(notACertificate) is not an X.509 certificate"))
    }

    @Test(arguments: ["", ":memory:"])
    func refusesADatabasePathThatKeepsNothingWithExit64(path: String) throws {
        let directory = try Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let result = try Self.execBounded(Self.serveArguments(db: path, trust: directory + "/pki/root.der"))
        #expect(result.code == 64, "\(result.output)")
        #expect(result.output.contains("temporary database that keeps nothing"))
    }

    @Test func refusesADatabaseAnotherLedgerHoldsWithExit73() throws {
        let directory = try Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let arguments = Self.serveArguments(db: directory + "/l.db", trust: directory + "/pki/root.der")
        let first = try LedgerProcess(arguments: arguments)
        defer { first.terminate() }
        let second = try Self.execBounded(arguments)
        #expect(second.code == 73, "\(second.output)")
        #expect(second.output.contains("database \(directory)/l.db is in use by another ledger"))
        // The first one is unharmed.
        #expect(try first.get("/health").count > 0)
    }

    @Test func refusesAReadOnlyDatabaseWithExit73() throws {
        let directory = try Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let database = directory + "/l.db"
        let arguments = Self.serveArguments(db: database, trust: directory + "/pki/root.der")
        try LedgerProcess(arguments: arguments).terminate()
        // Permissions do not stop root, so as root the file is made immutable instead.
        let protected: Bool
        if getuid() == 0 {
            protected = try Self.shell(["chattr", "+i", database]) == 0
        } else {
            protected = chmod(database, 0o444) == 0
        }
        defer { if getuid() == 0 { _ = try? Self.shell(["chattr", "-i", database]) } }
        let probe = open(database, O_RDWR)
        if probe >= 0 { close(probe) }
        try #require(protected && probe < 0, "this file system cannot make \(database) read-only")
        let result = try Self.execBounded(arguments)
        #expect(result.code == 73, "\(result.output)")
        #expect(result.output.contains("database \(database) cannot be opened for writing"))
    }

    @Test func leavesADatabaseCompleteOnItsOwnAfterSIGTERM() throws {
        let directory = try Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let database = directory + "/l.db"
        let token = UUID().uuidString.lowercased()
        // unlock-on-pending grants on a device report, so one plain POST leaves a visible grant.
        let arguments =
            Self.serveArguments(db: database, trust: directory + "/pki/root.der") + ["--flaw", "unlock-on-pending"]
        let ledger = try LedgerProcess(arguments: arguments)
        let report = #"{"purchaseResult":"pending","productId":"pro","appAccountToken":"\#(token)"}"#
        #expect(try ledger.post("/transactions", Array(report.utf8)) == 202)
        ledger.terminate()
        #expect(!FileManager.default.fileExists(atPath: database + "-wal"))
        #expect(!FileManager.default.fileExists(atPath: database + "-shm"))

        // The file alone, copied where no WAL could follow it, still holds the grant.
        let copy = directory + "/copy"
        try FileManager.default.createDirectory(atPath: copy, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: database, toPath: copy + "/l.db")
        let reopened = try LedgerProcess(
            arguments: Self.serveArguments(db: copy + "/l.db", trust: directory + "/pki/root.der")
        )
        defer { reopened.terminate() }
        let account = String(decoding: try reopened.get("/accounts/\(token)"), as: UTF8.self)
        #expect(account.contains(#""productId":"pro""#), "\(account)")
    }

    static func shell(_ arguments: [String]) throws -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        return process.terminationStatus
    }
}
