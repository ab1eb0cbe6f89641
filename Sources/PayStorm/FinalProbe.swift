import Checking
import Dispatch
import Foundation
import Load
import Profile

/// Reads the final state of every account after the settle time, with whichever probe the target has:
/// HTTP (the contract or a pointer mapping) through the load engine, a per-account command, or one bulk
/// command printing JSON lines.
final class FinalProbe {
    private let endpoints: Endpoints
    private let config: ProbeConfig?
    private let engine: LoadEngine
    /// What the reader should know about the probe phase.
    private(set) var notes: [String] = []
    /// Sees each account's state as the probe read it, before it is checked (`paystorm target check` shows it).
    var onState: (String, AccountState) -> Void = { _, _ in }

    init(endpoints: Endpoints, config: ProbeConfig?, engine: LoadEngine) {
        self.endpoints = endpoints
        self.config = config
        self.engine = engine
    }

    /// Probes `accounts` and feeds the checker (`final: true`).
    /// - Returns: whether any answer carried `grants`.
    func run(
        accounts: [String],
        checker: Checker,
        startMillis: Int64,
        onResults: ([CheckResult], Double) -> Void
    ) -> Bool {
        func now() -> Double { Date().timeIntervalSince1970 - Double(startMillis) / 1000 }
        var sawGrants = false
        func check(_ account: String, _ state: AccountState) {
            if state.grants != nil { sawGrants = true }
            onState(account, state)
            let t = now()
            onResults(checker.check(account: account, state: state, at: t, final: true), t)
        }
        if endpoints.probe != nil {
            var failed = 0
            _ = engine.run(.closed(users: 16, thinkTime: .zero, duration: .seconds(24 * 3600))) { index, _ in
                guard index < accounts.count, let url = endpoints.probeURL(for: accounts[index]) else { return nil }
                return LoadRequest(id: index, kind: "probe", method: "GET", url: url, headers: endpoints.headers)
            } sink: { result in
                let account = accounts[result.id]
                guard result.isSuccess else {
                    failed += 1
                    let reason = result.error.map { "\($0) \(result.detail)" } ?? "HTTP \(result.status)"
                    checker.probeFailed(account: account, error: ProbeFailure(reason), at: now(), final: true)
                    return
                }
                do {
                    check(account, try decodeProbe(result.body, mapping: endpoints.probeMapping))
                } catch {
                    failed += 1
                    checker.probeFailed(account: account, error: error, at: now(), final: true)
                }
            }
            if failed > 0 {
                notes.append("\(failed) of \(accounts.count) final probes failed; their checks are unknown")
            }
            return sawGrants
        }
        guard let config, let command = config.command else {
            notes.append("no probe: state invariants are unchecked")
            return false
        }
        switch config.kind {
        case .bulk:
            do {
                let states = try JSONLines.parse(try Self.run(command))
                for account in accounts { check(account, states[account] ?? AccountState()) }
            } catch {
                for account in accounts { checker.probeFailed(account: account, error: error, at: now(), final: true) }
                notes.append("the bulk probe command failed: \(error)")
            }
        default:
            for account in accounts {
                let argv = command.map { $0.replacingOccurrences(of: "{appAccountToken}", with: account) }
                do {
                    check(account, try AccountState.decode(contractJSON: try Self.run(argv)))
                } catch {
                    checker.probeFailed(account: account, error: error, at: now(), final: true)
                }
            }
        }
        return sawGrants
    }

    /// Runs an argument vector (no shell) and returns its standard output.
    static func run(_ argv: [String]) throws -> [UInt8] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: argv[0].hasPrefix("/") ? argv[0] : "/usr/bin/env")
        process.arguments = argv[0].hasPrefix("/") ? Array(argv.dropFirst()) : argv
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw ProbeFailure("'\(argv.joined(separator: " "))' exited \(process.terminationStatus)")
        }
        return Array(data)
    }
}
