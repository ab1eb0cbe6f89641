import Foundation
import PayStormTestKit
import Testing

/// Three `paystorm run --shard I/3` processes against one separately started reference ledger, merged with
/// `paystorm merge`, against one unsharded run of the same profile and seed on a fresh ledger: every account
/// in exactly one shard, and the same planned deliveries in all.
struct ShardedRunTests {
    static let bundleId = "com.example.paystorm"

    /// A tiny profile aimed at `127.0.0.1:${PORT}`, with duplicates so that chaos draws from the seed too.
    static let profile: ProfileBuilder = {
        var target = ProfileBuilder.Target(
            webhookURL: "http://127.0.0.1:${PORT}/notifications",
            deviceURL: "http://127.0.0.1:${PORT}/transactions",
            probeURL: "http://127.0.0.1:${PORT}/accounts/{appAccountToken}",
            bundleId: bundleId,
            requestTimeoutSeconds: 5
        )
        target.probeIntervalSeconds = 0
        target.environment = "Sandbox"
        var profile = ProfileBuilder(name: "sharded", seed: 4242, target: target)
        profile.products = [
            .init("coins", "consumable", priceMilli: 990), .init("pro", "nonConsumable", priceMilli: 4990),
        ]
        profile.accounts = 24
        profile.devicesPerAccount = 1
        profile.actionMix = ["consumable": 2, "nonConsumable": 1]
        profile.schedule = [.constant(rate: 8, seconds: 4)]
        profile.faults = ["duplicate": "{ probability: 0.2 }"]
        profile.settleSeconds = 2
        profile.thresholds = ["errorRate < 50%"]
        return profile
    }()

    struct Summary: Decodable {
        struct Requests: Decodable {
            var intended: Int
            var sent: Int
        }
        struct Shard: Decodable {
            var index: Int
            var count: Int
        }
        var verdict: String
        var exitCode: Int32
        var requests: Requests
        var shard: Shard?
    }

    /// The accounts a report folder's history names, and the deliveries it dispatched at their first attempt
    /// (the plan; retries depend on the answers).
    static func history(_ folder: URL) throws -> (accounts: Set<String>, planned: [Int]) {
        let text = try PayStormRunner.history(in: folder)
        var accounts: Set<String> = []
        var planned: [Int] = []
        for line in text.split(separator: "\n") {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            if let account = object["account"] as? String { accounts.insert(account) }
            if object["event"] as? String == "dispatch", object["attempt"] as? Int == 1,
                let delivery = object["delivery"] as? Int
            {
                planned.append(delivery)
            }
        }
        return (accounts, planned)
    }

    static func summary(_ folder: URL) throws -> Summary {
        try JSONDecoder().decode(Summary.self, from: Data(contentsOf: folder.appendingPathComponent("summary.json")))
    }

    /// Starts `paystorm` with `arguments` in the package root; its output goes to `log`.
    static func start(_ arguments: [String], log: URL) throws -> Process {
        let process = Process()
        process.executableURL = try PayStormBinary.url()
        process.arguments = arguments
        process.currentDirectoryURL = PayStormBinary.packageRoot
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        let handle = try FileHandle(forWritingTo: log)
        process.standardOutput = handle
        process.standardError = handle
        try process.run()
        return process
    }

    @Test func threeShardsMergedCoverEveryAccountOnceAndMatchAnUnshardedRun() throws {
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("sharded-\(UUID())")
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: work) }
        let pki = work.appendingPathComponent("pki").path
        #expect(try PayStormRunner.exec(["pki", "init", pki]).0 == 0)
        let profile = URL(fileURLWithPath: try Self.profile.write(into: work.path, fileName: "sharded.json5"))
        func ledger(_ name: String) throws -> LedgerProcess {
            try LedgerProcess(arguments: [
                "ledger", "serve", "--db", work.appendingPathComponent(name).path, "--trust", pki + "/root.der",
                "--bundle-id", Self.bundleId,
            ])
        }
        func runArguments(port: UInt16, reports: URL) -> [String] {
            // One namespace for every run: the shards of one run together, and the unsharded run, play the same
            // accounts (each on its own ledger or part of the accounts), so their tokens compare.
            [
                "run", profile.path, "--pki", pki, "--set", "PORT=\(port)", "--reports", reports.path, "--quiet",
                "--namespace", "5a17",
            ]
        }

        // Three shards at once, as three pods would, against one ledger.
        let shared = try ledger("shared.db")
        defer { shared.terminate() }
        let shardReports = work.appendingPathComponent("shards")
        let shards = try (0..<3).map { index in
            try Self.start(
                runArguments(port: shared.port, reports: shardReports) + ["--shard", "\(index)/3"],
                log: work.appendingPathComponent("shard\(index).log")
            )
        }
        for shard in shards { shard.waitUntilExit() }
        for (index, shard) in shards.enumerated() {
            let log = (try? String(contentsOf: work.appendingPathComponent("shard\(index).log"), encoding: .utf8)) ?? ""
            #expect(
                [0, 2].contains(shard.terminationStatus),
                "shard \(index): exit \(shard.terminationStatus)\n\(log)"
            )
        }
        // No `latest` among them: shards leave it alone.
        let folders = try FileManager.default.contentsOfDirectory(at: shardReports, includingPropertiesForKeys: nil)
            .sorted { $0.lastPathComponent < $1.lastPathComponent }
        #expect(
            folders.map { String($0.lastPathComponent.suffix(10)) }.sorted()
                == ["shard0of3", "shard1of3", "shard2of3"].map { "-" + $0 }
        )
        let shardSummaries = try folders.map(Self.summary)
        #expect(Set(shardSummaries.compactMap { $0.shard.map { "\($0.index)/\($0.count)" } }) == ["0/3", "1/3", "2/3"])

        // Merged.
        let merged = work.appendingPathComponent("merged")
        let (code, output) = try PayStormRunner.exec(["merge"] + folders.map(\.path) + ["--out", merged.path])
        let mergedSummary = try Self.summary(merged)
        #expect(code == mergedSummary.exitCode, "\(output)")
        #expect(mergedSummary.shard == nil)
        #expect(mergedSummary.requests.intended == shardSummaries.map(\.requests.intended).reduce(0, +))
        #expect(mergedSummary.requests.sent == shardSummaries.map(\.requests.sent).reduce(0, +))
        for name in ["report.html", "junit.xml", "summary.csv"] {
            #expect(FileManager.default.fileExists(atPath: merged.appendingPathComponent(name).path))
        }

        // Unsharded, same profile and seed, on a fresh ledger.
        let fresh = try ledger("fresh.db")
        defer { fresh.terminate() }
        let wholeReports = work.appendingPathComponent("whole")
        let whole = try Self.start(
            runArguments(port: fresh.port, reports: wholeReports),
            log: work.appendingPathComponent("whole.log")
        )
        whole.waitUntilExit()
        let wholeFolder = wholeReports.appendingPathComponent("latest")
        let wholeHistory = try Self.history(wholeFolder)

        let parts = try folders.map(Self.history)
        #expect(wholeHistory.accounts.count > 10)
        // Every account in exactly one shard, and together the accounts of the unsharded run.
        for i in 0..<3 {
            for j in (i + 1)..<3 {
                #expect(parts[i].accounts.isDisjoint(with: parts[j].accounts), "shards \(i) and \(j) share accounts")
            }
        }
        #expect(parts.reduce(Set()) { $0.union($1.accounts) } == wholeHistory.accounts)
        // The same planned deliveries, each sent by exactly one shard.
        let shardPlanned = parts.flatMap(\.planned)
        #expect(shardPlanned.count == Set(shardPlanned).count)
        #expect(shardPlanned.sorted() == wholeHistory.planned.sorted())
    }

    @Test func badShardOrMergeArgumentsAreOneLineWithTheirExitCode() throws {
        let (shardCode, shardOutput) = try PayStormRunner.exec(["run", "--check", "--shard", "3/3"])
        #expect(shardCode == 64, "\(shardOutput)")
        #expect(shardOutput.contains("--shard expects INDEX/COUNT with 0 <= INDEX < COUNT"), "\(shardOutput)")
        let (noOut, noOutOutput) = try PayStormRunner.exec(["merge", "Reports"])
        #expect(noOut == 64, "\(noOutOutput)")
        #expect(noOutOutput.contains("merge needs --out DIR"))
        let missing = FileManager.default.temporaryDirectory.appendingPathComponent("no-shard-\(UUID())")
        let (missingCode, missingOutput) = try PayStormRunner.exec([
            "merge", missing.path, "--out", missing.appendingPathComponent("merged").path,
        ])
        #expect(missingCode == 66, "\(missingOutput)")
        #expect(missingOutput.contains("cannot read \(missing.path)/summary.json"), "\(missingOutput)")
        #expect(!FileManager.default.fileExists(atPath: missing.path), "a refused merge writes nothing")
    }

    /// Shards of the same profile name and seed that ran another schedule (`--duration`) are not one run: merge
    /// refuses them, exit 65, naming the shard, its folder and both schedules, and writes nothing.
    @Test func shardsThatRanAnotherScheduleDoNotMerge() throws {
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("sharded-apart-\(UUID())")
        defer { try? FileManager.default.removeItem(at: work) }
        for (index, duration) in [(0, "2"), (1, "3")] {
            let (code, output) = try PayStormRunner.exec([
                "run", "Profiles/smoke.json5", "--shard", "\(index)/2", "--rate", "4", "--duration", duration,
                "--settle", "0", "--quiet", "--reports", work.appendingPathComponent("shard\(index)").path,
            ])
            #expect([0, 1, 2].contains(code), "shard \(index): \(output)")
        }
        // A shard leaves `latest` alone (shards sharing a reports folder would race on it): found by its name.
        let folders = try (0..<2).map { index in
            let reports = work.appendingPathComponent("shard\(index)")
            let names = try FileManager.default.contentsOfDirectory(atPath: reports.path)
            #expect(!names.contains("latest"), "shard \(index) linked latest: \(names)")
            let name = try #require(names.first { $0.hasSuffix("-shard\(index)of2") }, "\(names)")
            return reports.appendingPathComponent(name).path
        }
        let merged = work.appendingPathComponent("merged")
        let (code, output) = try PayStormRunner.exec(["merge"] + folders + ["--out", merged.path])
        #expect(code == 65, "\(output)")
        #expect(
            output.contains(
                "shard 1 (\(folders[1])) ran another schedule: constant 4/s for 3 s vs constant 4/s for 2 s in shard 0"
            ),
            "\(output)"
        )
        #expect(!FileManager.default.fileExists(atPath: merged.appendingPathComponent("summary.json").path))
    }
}
