import Foundation
import Profile
import RunControl
import Testing

@testable import TargetProcesses

/// Provisioning that dictates the token the app sets for an account (`dictatedToken`).
struct DictatedTokenProvisioningTests {
    static let given = ["7D1A5C2E-0B7F-4C1E-9A53-2F6D8E4B1C90", "0B8E2F44-91C3-4A6D-B7E2-5D9F1A3C8B21"]

    /// Provisioning whose command prints `lines`, for the two accounts of ``given``.
    static func provision(printing lines: String) throws(RunError) -> AccountDirectory {
        try AccountProvisioning.run(
            ["/bin/sh", "-c", "cat >/dev/null; cat <<'EOF'\n\(lines)\nEOF"],
            tokens: given,
            timeout: 20,
            interruption: Interruption()
        )
    }

    /// Many apps set a name-based UUID of their own user id: the backend dictates it, and the account's fields
    /// are then found under it (as every request and probe of the run names the account by it).
    @Test func aDictatedTokenKeysTheAccountsFields() throws {
        let dictated = "e5c9a1f4-3b2d-5c6e-8f70-1a2b3c4d5e6f"
        let directory = try Self.provision(
            printing: """
                {"appAccountToken": "\(Self.given[0].lowercased())", "id": "7", "dictatedToken": "\(dictated)"}
                {"appAccountToken": "\(Self.given[1])", "id": "8"}
                """
        )
        #expect(directory.dictatedTokens == [Self.given[0]: dictated])
        #expect(directory.fields(of: dictated.uppercased()) == ["id": "7"])
        #expect(directory.fields(of: Self.given[1]) == ["id": "8"])
        #expect(directory.fields(of: Self.given[0]) == ["id": Self.given[0]])
    }

    @Test(arguments: [
        (#""dictatedToken": "user:7""#, #""dictatedToken" is "user:7", expected a UUID"#),
        (#""dictatedToken": "0B8E2F44-91C3-4A6D-B7E2-5D9F1A3C8B21""#, "would both be minted with appAccountToken"),
    ])
    func aDictatedTokenThatIsNoUUIDOrNamesTwoAccountsStopsTheRunWithExit69(field: String, expected: String) {
        do {
            _ = try Self.provision(
                printing: """
                    {"appAccountToken": "\(Self.given[0])", "id": "7", \(field)}
                    {"appAccountToken": "\(Self.given[1])", "id": "8"}
                    """
            )
            Issue.record("took \(field)")
        } catch .unreachable(let message) {
            #expect(message.contains(expected), "\(message)")
            #expect(message.hasPrefix("target.accounts.provision '/bin/sh -c"), "\(message)")
        } catch {
            Issue.record("not exit 69: \(error)")
        }
    }

    /// The world mints with the first token for the whole run: a refresh that dictates another is refused.
    @Test func aRefreshThatDictatesAnotherTokenIsRefused() throws {
        let first = "e5c9a1f4-3b2d-5c6e-8f70-1a2b3c4d5e6f"
        let line = { (token: String) in
            #"{"appAccountToken": "\#(Self.given[0])", "id": "7", "dictatedToken": "\#(token)"}"#
        }
        let directory = try Self.provision(printing: line(first))
        #expect(directory.changedToken(in: try Self.provision(printing: line(first.uppercased()))) == nil)
        let other = try Self.provision(printing: line("a5c9a1f4-3b2d-5c6e-8f70-1a2b3c4d5e6f"))
        #expect(directory.changedToken(in: other)?.contains("which the run mints with \(first)") == true)
        let undictated = try Self.provision(printing: #"{"appAccountToken": "\#(Self.given[0])", "id": "7"}"#)
        #expect(directory.changedToken(in: undictated)?.contains("no longer dictates") == true)
    }
}
