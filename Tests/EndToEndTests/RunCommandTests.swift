import Foundation
import PayStormTestKit
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `paystorm run` on bad input or a signal: one clear line and the documented exit code, never a crash.
struct RunCommandTests {
    @Test func missingProfileIsExit66() throws {
        let (code, output) = try PayStormRunner.exec(["run", "Profiles/no-such-profile.json5"])
        #expect(code == 66)
        #expect(output.contains("cannot read profile Profiles/no-such-profile.json5"))
    }

    @Test func brokenProfileNamesFileAndPathWithExit65() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("broken-\(UUID()).json5")
        defer { try? FileManager.default.removeItem(at: file) }
        let text = """
            { name: "broken", seed: 1, target: { embeddedLedger: true },
              catalog: { products: [{ id: "c", type: "consumable", priceMilli: -5 }] },
              population: { accounts: 10 }, schedule: [{ kind: "constant", rate: 1, seconds: 1 }] }
            """
        try Data(text.utf8).write(to: file)
        let (code, output) = try PayStormRunner.exec(["run", file.path, "--quiet"])
        #expect(code == 65, "\(output)")
        #expect(output.contains(file.path))
        #expect(output.contains("catalog.products[0].priceMilli"))
    }

    @Test func unreachableTargetIsExit69() throws {
        let pki = FileManager.default.temporaryDirectory.appendingPathComponent("pki-\(UUID())")
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("unreachable-\(UUID()).json5")
        defer {
            try? FileManager.default.removeItem(at: pki)
            try? FileManager.default.removeItem(at: file)
        }
        #expect(try PayStormRunner.exec(["pki", "init", pki.path]).0 == 0)
        // Port 9 (discard) on loopback: nothing listens there on a test machine.
        var profile = ProfileBuilder(
            name: "unreachable",
            seed: 1,
            target: .init(webhookURL: "http://127.0.0.1:9/notifications")
        )
        profile.schedule = [.constant(rate: 1, seconds: 1)]
        try Data(profile.json5.utf8).write(to: file)
        let reports = FileManager.default.temporaryDirectory.appendingPathComponent("reports-\(UUID())")
        defer { try? FileManager.default.removeItem(at: reports) }
        // A previous run's folder and `latest` link: the failed run must leave both as they were.
        try FileManager.default.createDirectory(
            at: reports.appendingPathComponent("previous-run"),
            withIntermediateDirectories: true
        )
        try FileManager.default.createSymbolicLink(
            atPath: reports.appendingPathComponent("latest").path,
            withDestinationPath: "previous-run"
        )
        let (code, output) = try PayStormRunner.exec([
            "run", file.path, "--quiet", "--pki", pki.path, "--reports", reports.path,
        ])
        #expect(code == 69, "\(output)")
        #expect(output.contains("unreachable"))
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: reports.path).sorted() == ["latest", "previous-run"]
        )
        #expect(
            try FileManager.default.destinationOfSymbolicLink(atPath: reports.appendingPathComponent("latest").path)
                == "previous-run"
        )
    }

    @Test func externalTargetWithoutPKIIsExit66() throws {
        // A temporary reports folder: a run writes there before it finds the PKI missing, and a test must
        // not leave folders (or a moved Reports/latest) in the repository.
        let reports = FileManager.default.temporaryDirectory.appendingPathComponent("reports-\(UUID())")
        defer { try? FileManager.default.removeItem(at: reports) }
        let (code, output) = try PayStormRunner.exec([
            "run", "Profiles/nightly-chaos.json5", "--quiet", "--reports", reports.path,
        ])
        #expect(code == 66, "\(output)")
        #expect(output.contains("--pki"))
    }

    @Test func interruptedRunExits130AndStillWritesItsReport() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("interrupted-\(UUID()).json5")
        let reports = FileManager.default.temporaryDirectory.appendingPathComponent("reports-\(UUID())")
        defer {
            try? FileManager.default.removeItem(at: file)
            try? FileManager.default.removeItem(at: reports)
        }
        // Two minutes of schedule: only the signal can end it within the test's bounds.
        var profile = ProfileBuilder(name: "interrupted", seed: 1, target: .embeddedLedger)
        profile.schedule = [.constant(rate: 2, seconds: 120)]
        try Data(profile.json5.utf8).write(to: file)
        let process = Process()
        process.executableURL = try PayStormBinary.url()
        process.arguments = ["run", file.path, "--quiet", "--no-history", "--reports", reports.path]
        process.currentDirectoryURL = PayStormBinary.packageRoot
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        // SIGKILL: a run whose signal handling is broken may ignore SIGTERM too, and must not outlive the test.
        defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }

        // The report folder appears once the run has started, after the signal handlers are in place.
        let started = Date()
        while process.isRunning, Date().timeIntervalSince(started) < 30,
            ((try? FileManager.default.contentsOfDirectory(atPath: reports.path)) ?? []).isEmpty
        {
            usleep(100_000)
        }
        try #require(process.isRunning)
        usleep(500_000)
        process.interrupt()
        let interrupted = Date()
        while process.isRunning, Date().timeIntervalSince(interrupted) < 60 { usleep(100_000) }
        try #require(!process.isRunning, "the run did not stop within 60 seconds of SIGINT")

        #expect(process.terminationStatus == 130)
        let data = try Data(contentsOf: reports.appendingPathComponent("latest/summary.json"))
        let summary = try JSONDecoder().decode(PayStormRunner.Summary.self, from: data)
        #expect(summary.exitCode == 130)
    }

    @Test func replayNeedsASeed() throws {
        let (code, output) = try PayStormRunner.exec(["replay", "Profiles/detect.json5"])
        #expect(code == 64)
        #expect(output.contains("--seed"))
    }
}

/// Every shipped profile loads and its thresholds parse.
struct ShippedProfileTests {
    static var profiles: [String] {
        let directory = PayStormBinary.packageRoot.appendingPathComponent("Profiles")
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return names.filter { $0.hasSuffix(".json5") }.sorted().map { "Profiles/" + $0 }
    }

    @Test func thereAreShippedProfiles() {
        #expect(Self.profiles.contains("Profiles/smoke.json5"))
    }

    @Test(arguments: profiles)
    func shippedProfileIsValid(path: String) throws {
        let (code, output) = try PayStormRunner.exec(["run", path, "--check"])
        #expect(code == 0, "\(output)")
        #expect(output.contains("profile"))
    }
}
