import Foundation
import PayStormTestKit
import Testing

/// Values past every range, through every entry point of the built binary: one line naming the value and the
/// README's exit code, never a trap.
struct HostileInputTests {
    /// A profile file holding `text`, in a fresh directory the caller removes.
    private static func profile(_ text: String) throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("paystorm-hostile-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let file = directory.appendingPathComponent("hostile.json5")
        try Data(text.utf8).write(to: file)
        return file
    }

    /// The smoke profile with `old` replaced by `new`.
    private static func smoke(replacing old: String, with new: String) throws -> URL {
        let text = try String(
            contentsOf: PayStormBinary.packageRoot.appendingPathComponent("Profiles/smoke.json5"),
            encoding: .utf8
        )
        #expect(text.contains(old), "smoke.json5 no longer holds \(old)")
        return try profile(text.replacingOccurrences(of: old, with: new))
    }

    @Test(arguments: [
        ["run", "Profiles/smoke.json5", "--rate", "5", "--duration", "99999999h", "--check"],
        ["run", "Profiles/smoke.json5", "--settle", "99999999999h", "--check"],
        ["load", "--url", "http://127.0.0.1:1/", "--rate", "1", "--duration", "1s", "--timeout", "99999999999h"],
        ["load", "--url", "http://127.0.0.1:1/", "--rate", "1", "--duration", "99999999999h"],
        ["load", "--url", "http://127.0.0.1:1/", "--schedule", "5@99999999999h"],
        ["load", "--url", "http://127.0.0.1:1/", "--users", "1", "--duration", "1s", "--think", "1e300s"],
        ["capacity", "Profiles/capacity.json5", "--slo", "p99 < 99999999999h"],
    ])
    func durationPastAYearIsExit64NotATrap(arguments: [String]) throws {
        let (code, output) = try PayStormRunner.exec(arguments)
        #expect(code == 64, "\(arguments): \(output)")
        #expect(output.contains("is too long: a duration is at most a year"), "\(output)")
        #expect(!output.contains("Fatal error"), "\(output)")
    }

    @Test func thresholdPastAYearInAProfileIsExit65NamingIt() throws {
        let file = try Self.smoke(replacing: "\"p99 < 500ms\"", with: "\"p99 < 99999999999h\"")
        defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
        let (code, output) = try PayStormRunner.exec(["run", file.path, "--check"])
        #expect(code == 65, "\(output)")
        #expect(output.contains("thresholds[0]"), "\(output)")
        #expect(output.contains("is too long"), "\(output)")
    }

    @Test(arguments: ["9223372036854775807", "253402300800000", "-1"])
    func mintRefusesASignedDateOutOfRange(date: String) throws {
        let pki = FileManager.default.temporaryDirectory.appendingPathComponent("paystorm-hostile-pki-\(UUID())")
        defer { try? FileManager.default.removeItem(at: pki) }
        #expect(try PayStormRunner.exec(["pki", "init", pki.path]).0 == 0)
        for shape in [["--type", "DID_RENEW"], ["--transaction"], ["--renewal-info"]] {
            let (code, output) = try PayStormRunner.exec(
                ["mint", "--pki", pki.path, "--signed-date", date] + shape
            )
            #expect(code == 64, "\(shape): \(output)")
            #expect(output.contains("--signed-date must be from"), "\(output)")
        }
    }

    @Test(arguments: ["X-Inj: a\r\nX-Evil: b", "X-Inj: a\nb", "X-Inj: a\u{7F}", "X Inj: a", "X-Inj\r\nX-Evil: b"])
    func loadHeaderWithAControlCharacterIsExit64(header: String) throws {
        let (code, output) = try PayStormRunner.exec([
            "load", "--url", "http://127.0.0.1:1/", "--rate", "1", "--duration", "1s", "--header", header,
        ])
        #expect(code == 64, "\(output)")
        #expect(output.hasPrefix("paystorm load: --header: expected a header"), "\(output)")
        #expect(output.split(separator: "\n").count == 1, "one line: \(output)")
    }

    @Test func profileHeaderWithALineBreakFromSetIsExit65NamingTheHeader() throws {
        let file = try Self.smoke(
            replacing: "requestTimeoutSeconds: 5,",
            with: "requestTimeoutSeconds: 5, headers: { Authorization: \"Bearer ${TOK}\" },"
        )
        defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
        let (code, output) = try PayStormRunner.exec([
            "run", file.path, "--check", "--set", "TOK=abc\r\nX-Evil: smuggled",
        ])
        #expect(code == 65, "\(output)")
        #expect(output.contains("target.headers.Authorization: expected a header value without control"), "\(output)")
        #expect(try PayStormRunner.exec(["run", file.path, "--check", "--set", "TOK=abc"]).0 == 0)
    }

    @Test func checkReadsTheAdmissionsFileARunWouldRead() throws {
        let file = try Self.profile("second,1\n")
        defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
        let garbage = try PayStormRunner.exec(["run", "Profiles/smoke.json5", "--check", "--admissions", file.path])
        #expect(garbage.0 == 65, "\(garbage.1)")
        #expect(garbage.1.contains("--admissions \(file.path): line 1"), "\(garbage.1)")
        let missing = try PayStormRunner.exec([
            "run", "Profiles/smoke.json5", "--check", "--admissions", "/nonexistent/a.csv",
        ])
        #expect(missing.0 == 66, "\(missing.1)")
        #expect(missing.1.contains("/nonexistent/a.csv"), "\(missing.1)")
    }

    @Test(arguments: [
        (
            "probe: { kind: \"command\", command: [\"/nonexistent/probe\", \"{appAccountToken}\"] }",
            "target.probe.command"
        ),
        ("accounts: { provision: [\"paystorm-no-such-provisioner\"] }", "target.accounts.provision"),
    ])
    func aProfilesMissingProgramIsFoundBeforeSending(section: String, path: String) throws {
        var profile = ProfileBuilder(name: "p", seed: 1, target: .init(webhookURL: "http://127.0.0.1:1/n"))
        profile.target.extra = [section]
        profile.accounts = 2
        profile.schedule = [.constant(rate: 1, seconds: 1)]
        let file = try Self.profile(profile.json5)
        defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
        for mode in [["--check"], ["--quiet"]] {
            let (code, output) = try PayStormRunner.exec(["run", file.path] + mode)
            #expect(code == 66, "\(mode): \(output)")
            #expect(output.contains("\(path): cannot run"), "\(output)")
        }
    }

    @Test func detectRefusesZeroSeeds() throws {
        let (code, output) = try PayStormRunner.exec(["detect", "Profiles/detect.json5", "--seeds", "0"])
        #expect(code == 64, "\(output)")
        #expect(output.contains("--seeds must be 1 or more, got 0"), "\(output)")
    }

    @Test func capacityRefusesAStartAboveItsCeiling() throws {
        let (code, output) = try PayStormRunner.exec([
            "capacity", "Profiles/capacity.json5", "--slo", "p99 < 1s", "--start", "50", "--max-rate", "10",
        ])
        #expect(code == 64, "\(output)")
        #expect(output.contains("--start 50 is above --max-rate 10"), "\(output)")
    }

    @Test func ledgerRefusesSomeoneElsesDatabase() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("paystorm-foreign-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let pki = directory.appendingPathComponent("pki")
        #expect(try PayStormRunner.exec(["pki", "init", pki.path]).0 == 0)
        let database = directory.appendingPathComponent("app.db").path
        let sqlite = Process()
        sqlite.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        sqlite.arguments = [
            "python3", "-c",
            "import sqlite3,sys; d=sqlite3.connect(sys.argv[1]); d.execute('CREATE TABLE accounts (id INTEGER)'); d.commit()",
            database,
        ]
        try sqlite.run()
        sqlite.waitUntilExit()
        let (code, output) = try PayStormRunner.exec([
            "ledger", "serve", "--db", database, "--trust", pki.appendingPathComponent("root.der").path,
            "--bundle-id", "com.example.paystorm",
        ])
        #expect(code == 65, "\(output)")
        #expect(output.contains("not a PayStorm ledger database: it holds table accounts"), "\(output)")
    }

    @Test func aFileNamedLatestIsKeptAndTheRunSaysSo() throws {
        let reports = FileManager.default.temporaryDirectory.appendingPathComponent("paystorm-latest-\(UUID())")
        defer { try? FileManager.default.removeItem(at: reports) }
        try FileManager.default.createDirectory(at: reports, withIntermediateDirectories: true)
        let latest = reports.appendingPathComponent("latest")
        try Data("precious\n".utf8).write(to: latest)
        let (code, output) = try PayStormRunner.exec([
            "run", "Profiles/smoke.json5", "--rate", "5", "--duration", "1s", "--settle", "0", "--quiet",
            "--no-history", "--reports", reports.path,
        ])
        #expect(code == 0, "\(output)")
        #expect(output.contains("note: \(latest.path) is a file, not PayStorm's link"), "\(output)")
        #expect(try String(contentsOf: latest, encoding: .utf8) == "precious\n")
    }

    @Test func aPortInUseIsSaidOnceAndPlainly() throws {
        let holder = try SilentServer()
        defer { holder.close() }
        let address = "127.0.0.1:\(holder.port)"
        let pki = FileManager.default.temporaryDirectory.appendingPathComponent("paystorm-port-\(UUID())")
        defer { try? FileManager.default.removeItem(at: pki) }
        #expect(try PayStormRunner.exec(["pki", "init", pki.path]).0 == 0)
        let commands = [
            ["api", "serve", "--pki", pki.path, "--listen", address],
            [
                "ledger", "serve", "--db", pki.appendingPathComponent("l.db").path, "--trust",
                pki.appendingPathComponent("root.der").path, "--bundle-id", "x", "--listen", address,
            ],
            ["run", "Profiles/smoke.json5", "--quiet", "--metrics-listen", address, "--reports", pki.path + "/r"],
        ]
        for command in commands {
            let (code, output) = try PayStormRunner.exec(command)
            #expect(code == 69, "\(command[0]): \(output)")
            #expect(output.contains("cannot listen on \(address): the address is already in use"), "\(output)")
            #expect(output.components(separatedBy: "cannot listen").count == 2, "said once: \(output)")
            #expect(!output.contains("PEM"), "\(output)")
        }
    }

    @Test func aQuietRunStillSaysWhereItsMetricsAre() throws {
        let reports = FileManager.default.temporaryDirectory.appendingPathComponent("paystorm-quiet-\(UUID())")
        defer { try? FileManager.default.removeItem(at: reports) }
        let (code, output) = try PayStormRunner.exec([
            "run", "Profiles/smoke.json5", "--quiet", "--metrics-listen", "127.0.0.1:0", "--metrics-linger", "0",
            "--rate", "2", "--duration", "1s", "--settle", "0", "--no-history", "--reports", reports.path,
        ])
        #expect(code == 0, "\(output)")
        let line = try #require(output.firstMatch(of: #/metrics: http://127\.0\.0\.1:(\d+)/metrics/#), "\(output)")
        #expect(Int(line.output.1).map { $0 > 0 } == true)
    }
}
