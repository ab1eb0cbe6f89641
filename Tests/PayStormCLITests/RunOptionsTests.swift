import Foundation
import PayStorm
import RunControl
import Testing

@testable import PayStormCLI

/// `paystorm run` and `replay` options that are refused before a profile is read.
struct RunOptionsTests {
    /// A replay's account is an appAccountToken in the canonical form: Foundation on Linux also parses a sign,
    /// a space or "0x" in place of a digit, and such a token would match no account and replay nothing.
    @Test(arguments: [
        "+f1c1a52-0000-4000-8000-000000000001", " f1c1a52-0000-4000-8000-000000000001",
        "0x1c1a52-0000-4000-8000-000000000001", "6f1c1a52000040008000000000000001", "account",
    ])
    func aReplaysAccountMustBeACanonicalUUID(account: String) throws {
        do {
            _ = try replayOptions(account: account)
            Issue.record("accepted --account '\(account)'")
        } catch let error as CLIError {
            #expect(error.exitCode == .usage)
            #expect(error.message == "--account expects an appAccountToken UUID, got '\(account)'")
        }
    }

    @Test func aReplaysAccountIsReadInEitherCase() throws {
        let options = try replayOptions(account: "6f1c1a52-0000-4000-8000-00000000000a")
        #expect(options.account == "6F1C1A52-0000-4000-8000-00000000000A")
        #expect(options.seed == 42)
    }

    @Test(arguments: [
        (["--seed", "9223372036854775808"], "--seed expects an unsigned integer from 0 to 9223372036854775807"),
        (["--seed", "18446744073709551615"], "--seed expects an unsigned integer from 0 to 9223372036854775807"),
        (["--reports", ""], "--reports expects a folder, got an empty value"),
        (["--rate", "0.0001", "--duration", "2s"], "--rate 0.0001 for 2 s starts 0.0002 actions, fewer than one"),
    ])
    func refusesWhatAProfileOrAFolderCannotBe(extra: [String], message: String) throws {
        let profile = FileManager.default.temporaryDirectory.appendingPathComponent("run-options-\(UUID()).json5")
        try Data("{}".utf8).write(to: profile)
        defer { try? FileManager.default.removeItem(at: profile) }
        var arguments = Arguments(extra + [profile.path])
        #expect {
            _ = try Command.runOptions(&arguments, replay: false)
        } throws: { error in
            (error as? CLIError)?.message.hasPrefix(message) == true && (error as? CLIError)?.exitCode == .usage
        }
    }

    @Test func theLargestSeedAProfileTakesIsAccepted() throws {
        let profile = FileManager.default.temporaryDirectory.appendingPathComponent("run-options-\(UUID()).json5")
        try Data("{}".utf8).write(to: profile)
        defer { try? FileManager.default.removeItem(at: profile) }
        var arguments = Arguments(["--seed", "9223372036854775807", profile.path])
        #expect(try Command.runOptions(&arguments, replay: false).seed == UInt64(Int64.max))
    }

    /// `paystorm replay --seed 42 --account ACCOUNT PROFILE`'s options, with an empty profile file.
    private func replayOptions(account: String) throws -> RunOptions {
        let profile = FileManager.default.temporaryDirectory.appendingPathComponent("run-options-\(UUID()).json5")
        try Data("{}".utf8).write(to: profile)
        defer { try? FileManager.default.removeItem(at: profile) }
        var arguments = Arguments(["--seed", "42", "--account", account, profile.path])
        return try Command.runOptions(&arguments, replay: true)
    }
}
