import Foundation
import PayStormTestKit
import Testing

/// A backend that dictates each account's `appAccountToken` (a name-based UUID of its own user id, as many apps
/// set it), driven through provisioning alone: the world mints with those tokens, the checks and witnesses
/// name them, and a replay names the account by the token its provisioning is given.
struct DictatedTokenTests {
    /// Creates a user for each account it reads (the same one each time it is given the same account) and
    /// prints the token the app would set for it (and keeps a list of them, for the test alone, in the file its
    /// argument names).
    static let provision = #"""
        import json, sys, uuid
        with open(sys.argv[1], "a") as tokens:
            for line in sys.stdin.read().splitlines():
                given = json.loads(line)["appAccountToken"]
                user = given[:8].lower()
                token = str(uuid.uuid5(uuid.NAMESPACE_URL, "user:" + user))
                tokens.write(token + "\n")
                print(json.dumps({"appAccountToken": given, "id": user, "dictatedToken": token}))
        """#

    struct Line: Decodable {
        struct Violation: Decodable {
            var account: String
            var replay: String
        }
        var violation: Violation
    }

    static func violations(_ folder: String) throws -> [Line.Violation] {
        let text = try String(contentsOfFile: folder + "/latest/violations.jsonl", encoding: .utf8)
        return try text.split(separator: "\n").map {
            try JSONDecoder().decode(Line.self, from: Data($0.utf8)).violation
        }
    }

    static func profile(in work: String) throws -> String {
        try Self.provision.write(toFile: work + "/provision.py", atomically: true, encoding: .utf8)
        var target = ProfileBuilder.Target.embeddedLedger
        target.extra = [
            #"accounts: { provision: ["python3", "\#(work)/provision.py", "\#(work)/dictated.txt"] }"#
        ]
        var profile = ProfileBuilder(name: "dictated", seed: 11, target: target)
        profile.accounts = 6
        profile.schedule = [.constant(rate: 6, seconds: 2)]
        profile.settleSeconds = 0.5
        return try profile.write(into: work)
    }

    @Test func theWorldMintsWithTheTokensTheBackendDictates() throws {
        try withTemporaryFolder("dictated") { folder in
            let work = folder.path
            let profile = try Self.profile(in: work)
            let correct = try PayStormBinary.run([
                "run", profile, "--plain", "--no-history", "--reports", work + "/correct",
            ])
            #expect(correct.output.contains("provisioned 6 of 6 accounts"), "\(correct.output)")
            // Every purchase reached the ledger under its dictated token, or the probes would find them lost.
            #expect(correct.status == 0, "\(correct.output)")

            // The ledger grants each purchase once per path: the witnesses name the dictated tokens.
            let flawed = try PayStormBinary.run([
                "run", profile, "--plain", "--no-history", "--flaw", "dual-path-double-grant", "--reports",
                work + "/flawed",
            ])
            #expect(flawed.status == 1, "\(flawed.output)")
            let violations = try Self.violations(work + "/flawed")
            let expected = Set(
                try String(contentsOfFile: work + "/dictated.txt", encoding: .utf8).split(separator: "\n").map(
                    String.init
                )
            )
            #expect(!violations.isEmpty)
            for violation in violations {
                #expect(expected.contains(violation.account.lowercased()), "\(violation.account)")
                #expect(!violation.replay.lowercased().contains(violation.account.lowercased()), "\(violation.replay)")
            }

            // The replay provisions the account by its minted token and plays it under the dictated one again.
            let first = try #require(violations.first)
            var replay = first.replay.split(separator: " ").map(String.init).dropFirst()
            replay.append(contentsOf: ["--plain", "--no-history", "--reports", work + "/replay"])
            let replayed = try PayStormBinary.run(Array(replay))
            #expect(replayed.status == 1, "\(replayed.output)")
            #expect(try Self.violations(work + "/replay").contains { $0.account == first.account })
        }
    }

    /// `target check` proves the mapping with the accounts as the run plays them: under their dictated tokens.
    @Test func targetCheckBuysWithTheDictatedTokens() throws {
        try withTemporaryFolder("dictated-check") { folder in
            let work = folder.path
            let check = try PayStormBinary.run(["target", "check", try Self.profile(in: work)])
            #expect(check.status == 0, "\(check.output)")
            let dictated = try String(contentsOfFile: work + "/dictated.txt", encoding: .utf8).split(separator: "\n")
            let accounts = try #require(
                check.output.split(separator: "\n").first { $0.contains("accounts: purchase ") }
            )
            #expect(dictated.contains { accounts.contains("purchase \($0),") }, "\(accounts)")
        }
    }
}
