import Foundation
import Load
import PayStorm
import ReferenceLedger
import Reporting
import RunControl

extension Command {
    /// `paystorm detect`: proves the checker catches every flaw of the reference ledger.
    static let detect = Command(
        name: "detect",
        summary: "print the detection matrix: each ledger flaw caught, by which invariant, how fast",
        help: """
            paystorm detect: the detection matrix

            Usage: paystorm detect [PROFILE] [--seeds N] [--flaw NAME]... [--reports DIR] [--set NAME=VALUE]...

            Runs PROFILE (default Profiles/detect.json5) against the embedded reference ledger once per flaw
            (or only the --flaw ones), then against the correct ledger with N seeds (default 5), and prints
            a Markdown table: flaw, the invariant it should break, the invariants that failed, and the time
            to first detection. Exits 0 when every flaw is caught by its invariant and the correct ledger
            shows no violation, 1 otherwise. --set gives the value of ${NAME} in the profile (repeatable).
            SIGINT, SIGTERM or SIGHUP stop the matrix: the run in progress writes its report, marked
            interrupted, the rows so far are printed, and the exit code is 130, 143 or 129.
            A request hook (target.requestHook) that fails stops the matrix too: its one line, exit 69.

            """
    ) { arguments in
        var arguments = arguments
        let seeds = try arguments.int("--seeds") ?? 5
        let chosen = try arguments.options("--flaw")
        let reports = try arguments.folder("--reports") ?? "Reports"
        let variables = try profileVariables(&arguments)
        let profile = arguments.positional() ?? "Profiles/detect.json5"
        try arguments.finish()
        guard seeds >= 1 else { throw CLIError(.usage, "--seeds must be 1 or more, got \(seeds)") }
        guard FileManager.default.isReadableFile(atPath: profile) else {
            throw CLIError(.noInput, "cannot read profile \(profile)")
        }
        var flaws = LedgerFlaw.allCases
        if !chosen.isEmpty {
            flaws = try chosen.map { name in
                guard let flaw = LedgerFlaw(rawValue: name) else { throw CLIError(.usage, "unknown flaw '\(name)'") }
                return flaw
            }
        }
        var complete = true
        var rows: [String] = []
        let interruption = Interruption()
        let signals = TerminationSignal.interrupting(interruption)
        defer { signals.cancel() }
        func run(_ flaws: [String], seed: UInt64?) throws -> RunOutcome {
            var options = RunOptions(profilePath: profile)
            options.interruption = interruption
            options.flaws = flaws
            options.variables = variables
            options.seed = seed
            options.status = .quiet
            options.reportsDirectory = reports
            options.history = false
            let outcome: RunOutcome
            do {
                outcome = try PayStormRun(options).execute()
            } catch {
                throw CLIError(
                    interruption.signal?.exitCode ?? RunCommandSupport.exitCode(for: error),
                    error.description
                )
            }
            // A request hook that failed stopped the run before the flaw could show: no row can be read from it.
            if let failure = outcome.failure { throw CLIError(.unreachable, failure) }
            return outcome
        }
        print("| flaw | breaks | verdict | invariants that failed | first detection |")
        print("| --- | --- | --- | --- | --- |")
        for flaw in flaws where !interruption.isInterrupted {
            let outcome = try run([flaw.rawValue], seed: nil)
            if let signal = interruption.signal {
                print("| \(flaw.rawValue) | interrupted (\(signal.name)): see \(outcome.folder.path) | | | |")
                break
            }
            let expected = expectedInvariants(flaw)
            let failed = outcome.report.invariants.filter { $0.status == .failed }.map(\.name)
            let caught = failed.contains { expected.contains($0) }
            if !caught { complete = false }
            let first =
                expected.compactMap { outcome.firstDetection[$0] }.min().map { String(format: "%.1f s", $0) } ?? "—"
            let row =
                "| \(flaw.rawValue) | \(expected.joined(separator: " or ")) | \(caught ? "caught" : "MISSED") (\(outcome.report.verdict.rawValue)) | \(failed.isEmpty ? "none" : failed.joined(separator: ", ")) | \(first) |"
            print(row)
            rows.append(row)
        }
        for index in 0..<seeds where !interruption.isInterrupted {
            let outcome = try run([], seed: UInt64(7 + index))
            if let signal = interruption.signal {
                print(
                    "| none (correct, seed \(7 + index)) | interrupted (\(signal.name)): see \(outcome.folder.path) | | | |"
                )
                break
            }
            let failed = outcome.report.invariants.filter { $0.status == .failed }.map(\.name)
            if !failed.isEmpty { complete = false }
            print(
                "| none (correct, seed \(outcome.report.seed)) | — | \(outcome.report.verdict.rawValue) | \(failed.isEmpty ? "none" : failed.joined(separator: ", ")) | — |"
            )
        }
        if let signal = interruption.signal { return signal.exitCode }
        return complete ? .success : .violation
    }

    /// The checker's names of the invariants a flaw shows up as. A stale overwrite is reported through the
    /// state it corrupts: a refund undone (revocation honored) or a reversal undone (no lost purchase), or an
    /// expiry moving back (no stale regression).
    static func expectedInvariants(_ flaw: LedgerFlaw) -> [String] {
        switch flaw {
        case .doubleGrant, .dualPathDoubleGrant: ["no-double-grant"]
        case .trustUnverified, .ignoreBundleEnvironment, .unlockOnPending, .trustClientClaims:
            ["no-unlock-without-verified-purchase"]
        case .ignoreRefund, .resurrectAfterRefund: ["revocation-honored"]
        case .staleOverwrite: ["no-stale-regression", "revocation-honored", "no-lost-purchase"]
        case .ackBeforeCommit: ["no-lost-purchase"]
        // The wrong transaction revoked: the refunded one still counts (a consumable's balance), the one revoked
        // instead is lost, or a subscription's current period ends.
        case .refundByProduct: ["revocation-honored", "no-lost-purchase", "subscription-state"]
        // A member keeps a revoked shared purchase (revocation honored) and its subscription stays on.
        case .ignoreFamilyRevoke: ["revocation-honored", "subscription-state"]
        case .doubleRefund: ["no-double-refund"]
        }
    }
}
