import Foundation
import Profile
import RunControl
import Simulation
import Testing

@testable import PayStorm

/// Which namespace a run's identities take, and how a replay finds its account in the replayed run's.
struct RunNamespaceTests {
    /// Writes a profile against `target` to a temporary file and returns options for it.
    static func options(target: String) throws -> RunOptions {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("namespace-\(UUID()).json5")
        try Data(ProfileText.minimal.replacingOccurrences(of: "TARGET", with: target).utf8).write(to: url)
        return RunOptions(profilePath: url.path)
    }

    static let external = "{ webhookURL: \"http://127.0.0.1:1/n\" }"
    static let embedded = "{ embeddedLedger: true }"

    @Test func aTargetThatKeepsItsStateGetsAFreshNamespaceEachRun() throws {
        let options = try Self.options(target: Self.external)
        defer { try? FileManager.default.removeItem(atPath: options.profilePath) }
        let first = try PayStormRun.load(options).0.namespace
        let second = try PayStormRun.load(options).0.namespace
        #expect(first != 0 && second != 0 && first != second)
        var pinned = options
        pinned.namespace = 0x5A17
        #expect(try PayStormRun.load(pinned).0.namespace == 0x5A17)
    }

    @Test func theEmbeddedLedgerStartsEmptyAndKeepsTheSeedsOwnIdentities() throws {
        let options = try Self.options(target: Self.embedded)
        defer { try? FileManager.default.removeItem(atPath: options.profilePath) }
        #expect(try PayStormRun.load(options).0.namespace == 0)
        // A replay of an embedded run plays the replayed run's identities exactly.
        var replay = options
        replay.accountNamespace = 0x77
        #expect(try PayStormRun.load(replay).0.namespace == 0x77)
    }

    @Test func aReplayFindsItsAccountInTheReplayedRunsNamespaceAndPlaysItUnderItsOwn() throws {
        var options = try Self.options(target: Self.external)
        defer { try? FileManager.default.removeItem(atPath: options.profilePath) }
        options.account = World.appAccountToken(seed: 4, namespace: 0x77, account: 2)
        options.accountNamespace = 0x77
        let profile = try PayStormRun.load(options).0
        #expect(profile.namespace != 0x77)
        let token = try RunNamespace.account(options, profile: profile)
        #expect(token == World.appAccountToken(seed: 4, namespace: profile.namespace, account: 2))
        // Without the replayed run's namespace the token is none of this run's accounts: said, not sent nowhere.
        options.accountNamespace = nil
        #expect(throws: RunError.self) { try RunNamespace.account(options, profile: profile) }
    }

    /// A witness names an account whose token the backend dictated by that token, which is none of the seed's:
    /// the refusal says which token a replay takes.
    @Test func aReplayOfADictatedTokenSaysToNameTheAccountByTheTokenItWasGiven() throws {
        let options = try Self.options(
            target: #"{ webhookURL: "http://127.0.0.1:1/n", accounts: { provision: ["true"] } }"#
        )
        defer { try? FileManager.default.removeItem(atPath: options.profilePath) }
        var replay = options
        replay.account = "e5c9a1f4-3b2d-5c6e-8f70-1a2b3c4d5e6f"
        let profile = try PayStormRun.load(replay).0
        do {
            _ = try RunNamespace.account(replay, profile: profile)
            Issue.record("took a token none of the seed's accounts has")
        } catch .badInput(let message) {
            #expect(message.contains("named by the token it was given, as the violation's replay line"), "\(message)")
        } catch {
            Issue.record("not bad input: \(error)")
        }
    }

    @Test func namespacesAreWrittenAndReadAsSixteenHexDigits() {
        #expect(RunNamespace.text(0x5A17) == "0000000000005a17")
        #expect(RunNamespace.parse("0000000000005a17") == 0x5A17 && RunNamespace.parse("5A17") == 0x5A17)
        #expect(RunNamespace.parse("0") == nil && RunNamespace.parse("xyz") == nil)
        #expect(RunNamespace.parse("11112222333344445") == nil)
    }
}
