import Checking
import Foundation
import Profile
import RunControl
import Synchronization
import Testing

@testable import PayStorm
@testable import TargetProcesses

/// A profile against an external target whose probe is `probe` (JSON5).
func probeProfile(_ probe: String) throws -> Profile {
    let text = """
        {
          name: "probes", seed: 1,
          target: { webhookURL: "http://127.0.0.1:9/n", probe: \(probe) },
          catalog: { products: [{ id: "pro", type: "nonConsumable", priceMilli: 990 }] },
          population: { accounts: 4 },
          actionMix: { nonConsumable: 1 },
          schedule: [{ kind: "constant", rate: 1, seconds: 2 }],
        }
        """
    return try Profile.decode(Data(text.utf8), file: "probes.json5")
}

/// A temporary directory holding one executable script, removed by the caller.
func scriptDirectory(_ name: String, _ body: String) throws -> URL {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("paystorm-probe-\(UUID())")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    let script = directory.appendingPathComponent(name)
    try Data(body.utf8).write(to: script)
    try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: script.path)
    return directory
}

/// Probe commands run by PayStorm: transforms, per-account commands and bulk commands.
struct ProbeCommandTests {
    @Test func transformTurnsAnyJSONIntoTheContract() throws {
        // The wallet of the issue's example backend: plain strings and a state field.
        let directory = try scriptDirectory(
            "wallet.py",
            """
            import json, sys
            wallet = json.load(sys.stdin)
            entitled = wallet["owned"] + [s["sku"] for s in wallet["subscriptions"] if s["state"] == "ACTIVE"]
            print(json.dumps({"entitlements": [{"productId": p} for p in entitled], "balances": wallet["coins"]}))
            """
        )
        defer { try? FileManager.default.removeItem(at: directory) }
        let config = try #require(
            try probeProfile(
                #"{ kind: "http", url: "http://127.0.0.1:9/w/{appAccountToken.lower}", transform: ["python3", "\#(directory.path)/wallet.py"] }"#
            ).target.probe
        )
        let wallet = #"""
            {"owned": ["pro"], "subscriptions": [{"sku": "gold", "state": "ACTIVE"}, {"sku": "silver", "state": "EXPIRED"}],
             "coins": {"coins": 3}}
            """#
        let state = try ProcessProbe(config: config, interruption: Interruption()).transform(Array(wallet.utf8)).get()
        #expect(state.entitlements.map(\.productId) == ["pro", "gold"])
        #expect(state.balances == ["coins": 3])
    }

    @Test func failingTransformIsAProbeErrorNamingTheCommand() throws {
        let config = try #require(
            try probeProfile(
                #"{ kind: "http", url: "http://127.0.0.1:9/{appAccountToken}", transform: ["/bin/sh", "-c", "echo 'no such key' >&2; exit 3"] }"#
            ).target.probe
        )
        let answer = ProcessProbe(config: config, interruption: Interruption()).transform(Array("{}".utf8))
        guard case .failure(.transport(let detail)) = answer else {
            Issue.record("expected a transport failure, got \(answer)")
            return
        }
        #expect(detail.contains("exited 3: no such key"), "\(detail)")
        // Output that is not the contract is a probe error too, not an empty state.
        let cat = try #require(
            try probeProfile(
                #"{ kind: "http", url: "http://127.0.0.1:9/{appAccountToken}", transform: ["/bin/sh", "-c", "cat"] }"#
            ).target.probe
        )
        #expect(throws: ProbeError.self) {
            try ProcessProbe(config: cat, interruption: Interruption()).transform(Array("[1]".utf8)).get()
        }
        #expect(
            try ProcessProbe(config: cat, interruption: Interruption()).transform(
                Array(#"{"balances": {"c": 2}}"#.utf8)
            ).get().balances == ["c": 2]
        )
    }

    @Test func transformThatHangsTimesOut() throws {
        let config = try #require(
            try probeProfile(
                #"{ kind: "http", url: "http://127.0.0.1:9/{appAccountToken}", transform: ["/bin/sh", "-c", "sleep 30 & sleep 30"], timeoutSeconds: 0.3 }"#
            ).target.probe
        )
        let answer = ProcessProbe(config: config, interruption: Interruption()).transform([])
        guard case .failure(.transport(let detail)) = answer else {
            Issue.record("expected a timeout, got \(answer)")
            return
        }
        #expect(detail.contains("timed out after 0.3 s"), "\(detail)")
    }

    @Test func bulkProbeMatchesTokensInAnyCaseAndMissingAccountsAreUnknown() throws {
        let a = "6F1C0E9A-3B7D-4E21-9A55-0C2B8D4F7E10"
        let b = "0B8E2F44-91C3-4A6D-B7E2-5D9F1A3C8B21"
        let missing = "D2A7C915-6E48-4F3B-8C1D-7A0E9B5F2C63"
        let lines = """
            {"appAccountToken": "\(a.lowercased())", "entitlements": [{"productId": "pro"}]}
            {"appAccountToken": "\(b)", "balances": {"coins": 2}}
            """
        let directory = try scriptDirectory("bulk.sh", "#!/bin/sh\ncat <<'EOF'\n\(lines)\nEOF\n")
        defer { try? FileManager.default.removeItem(at: directory) }
        let config = try #require(
            try probeProfile(#"{ kind: "bulk", command: ["\#(directory.path)/bulk.sh"] }"#).target.probe
        )
        let answers = ProcessProbe(config: config, interruption: Interruption()).read([a, b, missing])
        #expect(answers.map(\.account) == [a, b, missing])
        #expect(try answers[0].state.get().entitlements.map(\.productId) == ["pro"])
        #expect(try answers[1].state.get().balances == ["coins": 2])
        #expect(throws: ProbeError.missingAccount(missing)) { try answers[2].state.get() }
    }

    /// A bulk command is told the accounts to print, with their provisioned fields, on its standard input: it
    /// answers for each without a file of tokens of its own (this one keys each balance by the account's id).
    @Test func bulkProbeGetsEachAccountWithItsFieldsOnStandardInput() throws {
        let a = "6F1C0E9A-3B7D-4E21-9A55-0C2B8D4F7E10"
        let b = "0B8E2F44-91C3-4A6D-B7E2-5D9F1A3C8B21"
        let script = #"""
            #!/bin/sh
            sed 's/^{"appAccountToken":"\([^"]*\)","id":"\([^"]*\)".*$/{"appAccountToken":"\1","balances":{"\2":1}}/'
            """#
        let directory = try scriptDirectory("bulk.sh", script + "\n")
        defer { try? FileManager.default.removeItem(at: directory) }
        let config = try #require(
            try probeProfile(#"{ kind: "bulk", command: ["\#(directory.path)/bulk.sh"] }"#).target.probe
        )
        let accounts = AccountDirectory([a.lowercased(): ["id": "user-7", "token": "t\"7"]])
        let lines = String(decoding: ProcessProbe.accountLines([a, b], directory: accounts), as: UTF8.self)
        #expect(
            lines == """
                {"appAccountToken":"\(a)","id":"user-7","token":"t\\"7"}
                {"appAccountToken":"\(b)","id":"\(b)"}

                """
        )
        let answers = ProcessProbe(config: config, accounts: accounts, interruption: Interruption()).read([a, b])
        #expect(try answers[0].state.get().balances == ["user-7": 1])
        #expect(try answers[1].state.get().balances == [b: 1])
    }

    @Test func commandProbeSubstitutesTheAccountInTheCaseAsked() throws {
        let config = try #require(
            try probeProfile(
                #"{ kind: "command", command: ["/bin/sh", "-c", "printf '{\"balances\": {\"%s\": 1}}' \"$0\"", "{appAccountToken.lower}"] }"#
            ).target.probe
        )
        let answers = ProcessProbe(config: config, interruption: Interruption()).read(["ABC-DEF"])
        #expect(try answers[0].state.get().balances == ["abc-def": 1])
    }

    @Test func transformOnlyAppliesToHTTPProbes() throws {
        #expect(throws: (any Error).self) {
            try probeProfile(#"{ kind: "bulk", command: ["true"], transform: ["cat"] }"#)
        }
    }
}

/// A clock the test moves by hand.
final class ManualClock: Sendable {
    private let now = Mutex(0.0)
    func set(_ seconds: Double) { now.withLock { $0 = seconds } }
    func read() -> Double { now.withLock { $0 } }
}

/// The safety rounds of command and bulk probes during a run: batched, rate capped, never overlapping.
struct SafetyProbesTests {
    @Test func roundsAreBatchedRateCappedAndNeverOverlap() throws {
        let clock = ManualClock()
        let batches = Mutex<[[String]]>([])
        let gate = DispatchSemaphore(value: 0)
        let checker = Checker(profile: try probeProfile(#"{ kind: "bulk", command: ["true"] }"#), startMillis: 0)
        let probes = SafetyProbes(
            interval: 2,
            batchLimit: .max,
            clock: { clock.read() },
            checker: checker,
            read: { accounts in
                let first = batches.withLock { batches in
                    batches.append(accounts)
                    return batches.count == 1
                }
                if first { gate.wait() }  // the first round runs until the test lets it finish
                return accounts.map { ($0, .success(AccountState())) }
            },
            transform: { _ in .success(AccountState()) }
        )
        probes.offer(["A", "B", "A"])  // t = 0: the first round reads both accounts, once each
        clock.set(5)
        probes.offer(["C"])  // due, but the first round still runs: C and D wait
        probes.offer(["D"])
        #expect(probes.rounds == 1)
        gate.signal()
        probes.waitForRound()
        probes.offer([])  // t = 5: one round for both
        probes.waitForRound()
        #expect(probes.rounds == 2)
        clock.set(6)
        probes.offer(["E"])  // 1 s after the second round started: rate capped
        #expect(probes.rounds == 2)
        clock.set(7)
        probes.offer([])
        probes.finish()
        probes.offer(["F"])  // finished: no more rounds
        #expect(batches.withLock { $0 } == [["A", "B"], ["C", "D"], ["E"]])
        #expect(probes.rounds == 3)
    }

    @Test func perAccountCommandRoundsReadAtMostTheBatchLimit() throws {
        let clock = ManualClock()
        let batches = Mutex<[[String]]>([])
        let checker = Checker(profile: try probeProfile(#"{ kind: "bulk", command: ["true"] }"#), startMillis: 0)
        let probes = SafetyProbes(
            interval: 1,
            batchLimit: 2,
            clock: { clock.read() },
            checker: checker,
            read: { accounts in
                batches.withLock { $0.append(accounts) }
                return accounts.map { ($0, .failure(.missingAccount($0))) }
            },
            transform: { _ in .success(AccountState()) }
        )
        probes.offer(["A", "B", "C"])
        probes.waitForRound()
        clock.set(1)
        probes.offer([])
        probes.finish()
        #expect(batches.withLock { $0 } == [["A", "B"], ["C"]])
        // Failed safety probes are unknown checks, and the report says why.
        #expect(
            probes.notes == ["3 of 3 safety probes failed (checks unknown): bulk probe printed no line for account A"]
        )
    }
}
