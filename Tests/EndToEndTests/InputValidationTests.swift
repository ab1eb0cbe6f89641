import Foundation
import PayStormTestKit
import Testing

/// Bad input to the built binary: the README's exit code at once, and one line that names the problem.
struct InputValidationTests {
    /// A fresh temporary directory, removed by the caller.
    private static func temporary(_ name: String) -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("paystorm-\(name)-\(UUID())")
    }

    /// A copy of a shipped profile with one piece of text replaced.
    private static func profile(_ shipped: String, replacing old: String, with new: String) throws -> URL {
        let source = PayStormBinary.packageRoot.appendingPathComponent("Profiles/\(shipped).json5")
        let text = try String(contentsOf: source, encoding: .utf8)
        #expect(text.contains(old), "\(shipped).json5 no longer holds \(old)")
        let file = temporary(shipped).appendingPathExtension("json5")
        try Data(text.replacingOccurrences(of: old, with: new).utf8).write(to: file)
        return file
    }

    @Test func profileThatIsADirectoryIsExit66() throws {
        let (code, output) = try PayStormRunner.exec(["run", "Profiles", "--check"])
        #expect(code == 66, "\(output)")
        #expect(output.contains("cannot read profile Profiles: it is a directory"))
    }

    @Test func duplicatedKeyIsExit65NamingPathAndLine() throws {
        let file = try Self.profile("smoke", replacing: "seed: 42,", with: "seed: 42,\n  seed: 7,")
        defer { try? FileManager.default.removeItem(at: file) }
        let (code, output) = try PayStormRunner.exec(["run", file.path, "--check"])
        #expect(code == 65, "\(output)")
        #expect(output.contains("\(file.path):"))
        #expect(output.contains(": seed: expected each key once"), "\(output)")
    }

    @Test func syntaxErrorIsExit65WithLineAndColumn() throws {
        let file = try Self.profile("smoke", replacing: "seed: 42,", with: "seed: 42 43,")
        defer { try? FileManager.default.removeItem(at: file) }
        let (code, output) = try PayStormRunner.exec(["run", file.path, "--check"])
        #expect(code == 65, "\(output)")
        let location = try #require(output.firstMatch(of: #/json5:(\d+):(\d+): /#), "\(output)")
        #expect(Int(location.output.1) == 5, "\(output)")
        #expect(Int(location.output.2) == 12, "\(output)")
    }

    @Test(arguments: ["webhok.p99 < 1us", "refund.p99 < 1us"])
    func misspelledThresholdKindIsExit65NamingIt(threshold: String) throws {
        let file = try Self.profile("smoke", replacing: "\"device.errorRate < 1%\"", with: "\"\(threshold)\"")
        defer { try? FileManager.default.removeItem(at: file) }
        let (code, output) = try PayStormRunner.exec(["run", file.path, "--check"])
        #expect(code == 65, "\(output)")
        #expect(output.contains("thresholds[2]"), "\(output)")
        #expect(output.contains("unknown kind"), "\(output)")
        #expect(output.contains("webhook, device, probe, forged, network-fault"), "\(output)")
    }

    @Test func loadThresholdOnAnotherKindIsExit64() throws {
        // `paystorm load` records every request under its one --kind.
        let (code, output) = try PayStormRunner.exec([
            "load", "--url", "http://127.0.0.1:9/", "--rate", "1", "--duration", "1s", "--kind", "webhook",
            "--threshold", "device.p99 < 1s", "--quiet",
        ])
        #expect(code == 64, "\(output)")
        #expect(output.contains("unknown kind 'device' (known kinds: webhook;"), "\(output)")
    }

    @Test(arguments: [["--check"], ["--quiet"]])
    func unknownFlawIsExit64AtOnceListingTheKnownFlaws(mode: [String]) throws {
        let reports = Self.temporary("reports")
        defer { try? FileManager.default.removeItem(at: reports) }
        let (code, output) = try PayStormRunner.exec(
            ["run", "--flaw", "nonexistent", "--reports", reports.path] + mode
        )
        #expect(code == 64, "\(output)")
        #expect(output.contains("unknown flaw 'nonexistent'; known: double-grant,"), "\(output)")
        #expect(!FileManager.default.fileExists(atPath: reports.path), "a run refused at once writes no report")
    }

    @Test func pkiGivenToTheEmbeddedLedgerIsNoticed() throws {
        let (code, output) = try PayStormRunner.exec(["run", "--check", "--pki", "some-pki"])
        #expect(code == 0, "\(output)")
        #expect(output.contains("--pki some-pki is ignored"), "\(output)")
    }

    @Test(arguments: ["0", "0.001", "1001", "-2"])
    func rateScaleOutOfBoundsIsExit64NamingTheBounds(scale: String) throws {
        let (code, output) = try PayStormRunner.exec(["run", "--check", "--rate-scale", scale])
        #expect(code == 64, "\(output)")
        #expect(output.contains("--rate-scale must be from 0.01 to 1000"), "\(output)")
    }

    @Test func corruptPKIGivenToRunIsExit65() throws {
        let pki = Self.temporary("pki")
        let reports = Self.temporary("reports")
        defer {
            try? FileManager.default.removeItem(at: pki)
            try? FileManager.default.removeItem(at: reports)
        }
        #expect(try PayStormRunner.exec(["pki", "init", pki.path]).0 == 0)
        try Data("not a certificate".utf8).write(to: pki.appendingPathComponent("intermediate.pem"))
        let (code, output) = try PayStormRunner.exec([
            "run", "Profiles/nightly-chaos.json5", "--quiet", "--pki", pki.path, "--reports", reports.path,
        ])
        #expect(code == 65, "\(output)")
        #expect(output.contains("intermediate.pem is not a PEM certificate"), "\(output)")
        #expect(try PayStormRunner.exec(["pki", "show", pki.path]).0 == 65)
    }

    @Test func pkiWhoseLeafDoesNotVerifyIsRefusedByShowMintAndRun() throws {
        let pki = Self.temporary("pki")
        let other = Self.temporary("other-pki")
        let reports = Self.temporary("reports")
        defer {
            for url in [pki, other, reports] { try? FileManager.default.removeItem(at: url) }
        }
        #expect(try PayStormRunner.exec(["pki", "init", pki.path]).0 == 0)
        #expect(try PayStormRunner.exec(["pki", "init", other.path]).0 == 0)
        // Another chain's leaf with its own key: key and certificate match, but this intermediate did not sign it.
        for name in ["leaf.pem", "leaf.key"] {
            try FileManager.default.removeItem(at: pki.appendingPathComponent(name))
            try FileManager.default.copyItem(
                at: other.appendingPathComponent(name),
                to: pki.appendingPathComponent(name)
            )
        }
        let commands = [
            ["pki", "show", pki.path],
            ["mint", "--pki", pki.path, "--type", "DID_RENEW"],
            ["run", "Profiles/nightly-chaos.json5", "--quiet", "--pki", pki.path, "--reports", reports.path],
        ]
        for command in commands {
            let (code, output) = try PayStormRunner.exec(command)
            #expect(code == 65, "\(command[0]): \(output)")
            #expect(output.contains("leaf.pem does not verify under intermediate.pem"), "\(command[0]): \(output)")
        }
    }

    @Test func errorLinesDoNotRepeatThemselves() throws {
        let scratch = Self.temporary("scratch")
        defer { try? FileManager.default.removeItem(at: scratch) }
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        let file = scratch.appendingPathComponent("a-file")
        try Data().write(to: file)
        let commands = [
            // A reports folder that cannot be made (its parent is a file).
            ["run", "--quiet", "--reports", file.appendingPathComponent("reports").path],
            // An external target whose PKI directory is missing.
            [
                "run", "Profiles/nightly-chaos.json5", "--quiet", "--pki", scratch.appendingPathComponent("none").path,
                "--reports", scratch.appendingPathComponent("reports").path,
            ],
            ["run", "Profiles", "--check"],
        ]
        // The same words twice in a row, with or without a colon: "cannot write cannot write", "x: x:".
        let repeated = #/\b([A-Za-z]+(?: [A-Za-z]+)+):? \1\b/#
        for command in commands {
            let (code, output) = try PayStormRunner.exec(command)
            #expect(code != 0, "\(command)")
            for line in output.split(separator: "\n") {
                #expect(line.firstMatch(of: repeated) == nil, "\(line)")
            }
        }
    }

    @Test(arguments: ["9464", "127.0.0.1:http", ":9464"])
    func malformedMetricsListenIsExit64NamingTheOption(listen: String) throws {
        let (code, output) = try PayStormRunner.exec(["run", "Profiles/smoke.json5", "--metrics-listen", listen])
        #expect(code == 64, "\(output)")
        #expect(output.contains("--metrics-listen expects HOST:PORT, got '\(listen)'"), "\(output)")
    }

    @Test func metricsListenOffLoopbackWithoutAllowedHostIsExit65() throws {
        let reports = Self.temporary("metrics-reports")
        defer { try? FileManager.default.removeItem(at: reports) }
        let (code, output) = try PayStormRunner.exec([
            "run", "Profiles/smoke.json5", "--metrics-listen", "10.1.2.3:9464", "--reports", reports.path,
        ])
        #expect(code == 65, "\(output)")
        #expect(output.contains("10.1.2.3 is not loopback and not in target.allowedHosts"), "\(output)")
        // Refused before the run starts: no report folder is left behind.
        #expect((try? FileManager.default.contentsOfDirectory(atPath: reports.path))?.isEmpty ?? true)
    }

    @Test func metricsPortAlreadyTakenIsExit69NamingTheAddress() throws {
        // A listening socket of this process holds the port for the length of the run.
        let holder = try SilentServer()
        defer { holder.close() }
        let port = holder.port
        let reports = Self.temporary("metrics-taken")
        defer { try? FileManager.default.removeItem(at: reports) }
        let (code, output) = try PayStormRunner.exec([
            "run", "Profiles/smoke.json5", "--quiet", "--metrics-listen", "127.0.0.1:\(port)", "--reports",
            reports.path,
        ])
        #expect(code == 69, "\(output)")
        #expect(output.contains("--metrics-listen: cannot listen on 127.0.0.1:\(port)"), "\(output)")
    }

    @Test(arguments: ["0", "-5", "lots"])
    func historyCapOutsideItsRangeIsExit64(megabytes: String) throws {
        let (code, output) = try PayStormRunner.exec(["run", "Profiles/smoke.json5", "--history-max-mb", megabytes])
        #expect(code == 64, "\(output)")
        #expect(output.contains("--history-max-mb"), "\(output)")
    }
}
