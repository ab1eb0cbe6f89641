import Foundation
import PayStormTestKit
import Testing

/// A target that keeps its state between runs (a staging backend; here a reference ledger started apart): the
/// same seed run again must not meet the purchases of the run before, or a correct backend fails the second
/// night of a nightly job.
struct RepeatedRunTests {
    struct Summary: Decodable {
        struct Violation: Decodable {
            var invariant: String
            var replay: String
        }
        var verdict: String
        var exitCode: Int32
        var namespace: String?
        var violations: [Violation]
    }

    /// Runs the sharded test's profile against `port` with `extra` arguments; returns its summary.
    static func run(_ work: URL, port: UInt16, pki: String, name: String, _ extra: [String] = []) throws -> Summary {
        let profile = work.appendingPathComponent("repeated.json5")
        if !FileManager.default.fileExists(atPath: profile.path) {
            // Probed every half second: a probe early in a run that met the earlier run's purchases shows what that
            // run bought later, a grant of nothing this run has sent yet.
            var builder = ShardedRunTests.profile
            builder.target.probeIntervalSeconds = 0.5
            try builder.write(into: work.path, fileName: "repeated.json5")
        }
        let reports = work.appendingPathComponent(name)
        let (code, output) = try PayStormRunner.exec(
            ["run", profile.path, "--pki", pki, "--set", "PORT=\(port)", "--reports", reports.path, "--quiet"]
                + extra
        )
        let folder = reports.appendingPathComponent("latest")
        let data = try #require(
            try? Data(contentsOf: folder.appendingPathComponent("summary.json")),
            "run \(name): exit \(code), no summary\n\(output)"
        )
        let summary = try JSONDecoder().decode(Summary.self, from: data)
        #expect(summary.exitCode == code, "\(output)")
        return summary
    }

    /// A scratch folder with a test PKI in `pki/`, and a reference ledger started apart on a database in it
    /// (`ledger serve`, trusting that PKI, with `flaws`): a target that keeps its state between runs.
    static func ledgerApart(
        _ name: String,
        flaws: [String] = []
    ) throws -> (work: URL, pki: String, ledger: LedgerProcess) {
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("\(name)-\(UUID())")
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        let pki = work.appendingPathComponent("pki").path
        #expect(try PayStormRunner.exec(["pki", "init", pki]).0 == 0)
        let ledger = try LedgerProcess(
            arguments: [
                "ledger", "serve", "--db", work.appendingPathComponent("kept.db").path, "--trust", pki + "/root.der",
                "--bundle-id", ShardedRunTests.bundleId,
            ] + flaws.flatMap { ["--flaw", $0] }
        )
        return (work, pki, ledger)
    }

    @Test func theSameSeedTwiceAgainstATargetThatKeepsItsStatePassesBothTimes() throws {
        let (work, pki, ledger) = try Self.ledgerApart("repeated")
        defer { try? FileManager.default.removeItem(at: work) }
        defer { ledger.terminate() }

        // The first night ran the profile at twice its rate: the same seed then gives another world, whose
        // transaction IDs name other accounts' purchases.
        let first = try Self.run(work, port: ledger.port, pki: pki, name: "first", ["--rate-scale", "2"])
        let second = try Self.run(work, port: ledger.port, pki: pki, name: "second")
        #expect(first.verdict == "pass" && second.verdict == "pass", "\(second.violations.map(\.replay))")
        let (a, b) = (try #require(first.namespace), try #require(second.namespace))
        #expect(a != b)

        // What the namespace prevents: the second run's identities pinned to the first's meet its purchases.
        let pinned = try Self.run(work, port: ledger.port, pki: pki, name: "pinned", ["--namespace", a])
        #expect(pinned.namespace == a)
        #expect(pinned.verdict == "fail")

        // A replay finds an account of the first run in its namespace, and plays it under a fresh one.
        let token = try #require(ShardedRunTests.history(work.appendingPathComponent("first/latest")).accounts.first)
        let replay = ["replay", work.appendingPathComponent("repeated.json5").path, "--seed", "4242"]
        let arguments = [
            "--pki", pki, "--set", "PORT=\(ledger.port)", "--quiet", "--account", token, "--rate-scale", "2",
        ]
        let reports = ["--reports", work.appendingPathComponent("replay").path]
        let (code, output) = try PayStormRunner.exec(replay + arguments + reports + ["--namespace", a])
        #expect(code == 0, "\(output)")
        let replayed = try ShardedRunTests.history(work.appendingPathComponent("replay/latest")).accounts
        #expect(replayed.count == 1 && !replayed.contains(token))
        let (unnamed, said) = try PayStormRunner.exec(replay + arguments + reports)
        #expect(unnamed == 65 && said.contains("is not one of the 24 accounts of seed 4242"), "\(said)")
    }

    /// A violation's replay line, run as the report prints it (through the shell), against a target started apart
    /// that trusts a PKI given with `--pki`: the line must carry everything the replay needs, and the account
    /// must break the same invariant again.
    @Test func aViolationsReplayLineRunAsPrintedReproducesItAgainstATargetStartedApart() throws {
        // A ledger that grants every redelivery again: the profile's duplicates make double grants.
        let (work, pki, ledger) = try Self.ledgerApart("replay-line", flaws: ["double-grant"])
        defer { try? FileManager.default.removeItem(at: work) }
        defer { ledger.terminate() }
        let run = try Self.run(work, port: ledger.port, pki: pki, name: "run")
        let violation = try #require(run.violations.first, "the flawed ledger passed")
        #expect(violation.replay.contains(" --pki \(pki)"), "\(violation.replay)")

        let replayed = work.appendingPathComponent("replayed")
        let (code, output) = try PayStormRunner.shell(violation.replay, ["--reports", replayed.path, "--quiet"])
        let summary = try JSONDecoder().decode(
            Summary.self,
            from: try Data(contentsOf: replayed.appendingPathComponent("latest/summary.json"))
        )
        #expect(code == 1 && summary.verdict == "fail", "\(output)")
        #expect(summary.violations.contains { $0.invariant == violation.invariant }, "\(output)")
    }
}
