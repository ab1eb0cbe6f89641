import AppStoreModel
import Dispatch
import Foundation
import Load
import PayStorm
import Primitives
import Profile
import ReferenceLedger
import Reporting
import RunControl

#if canImport(Glibc)
import Glibc
#endif

extension Command {
    /// `paystorm run`: one profile to a verdict.
    static let runProfile = Command(
        name: "run",
        summary: "run a profile against a target and check its invariants (default: the smoke profile)",
        help: runHelp(replay: false)
    ) { arguments in
        var arguments = arguments
        let checkOnly = arguments.flag("--check")
        let options = try runOptions(&arguments, replay: false)
        if checkOnly {
            do throws(RunError) {
                print(try PayStormRun.check(options))
            } catch {
                throw CLIError(RunCommandSupport.exitCode(for: error), error.description)
            }
            return .success
        }
        return try execute(options)
    }

    /// `paystorm replay`: the same run again from its seed, optionally for one account.
    static let replay = Command(
        name: "replay",
        summary: "replay a run from its seed, optionally for one account (the witness's replay line)",
        help: runHelp(replay: true)
    ) { arguments in
        var arguments = arguments
        let options = try runOptions(&arguments, replay: true)
        return try execute(options)
    }

    static func runHelp(replay: Bool) -> String {
        let usage =
            replay
            ? "Usage: paystorm replay PROFILE --seed N [--account TOKEN] [OPTIONS]"
            : "Usage: paystorm run [PROFILE] [OPTIONS]"
        let lead =
            replay
            ? "Replays a run: the same seed gives the same world, faults and deliveries. With --account, only\nthat account's deliveries are sent and checked."
            : "Runs PROFILE (default Profiles/smoke.json5) against its target: the embedded reference ledger on an\nephemeral loopback port, or the URLs the profile names. Prints live progress and the verdict, and\nwrites a report folder under Reports/."
        return """
            paystorm \(replay ? "replay" : "run"): \(replay ? "replay a run from its seed" : "play the App Store against a purchase backend")

            \(usage)

            \(lead)

            Options:
              --seed N            replace the profile's seed\(replay ? " (required)" : "")
              --set NAME=VALUE    the value of ${NAME} in the profile; repeatable, wins over the environment
              --account TOKEN     send and check only this appAccountToken
              --namespace HEX     \(replay ? "the namespace of the replayed run's identities (its replay line names it);\n                      against a target that keeps its state the account plays under a fresh one" : "the namespace of the run's identities (account tokens, transaction IDs); default\n                      a fresh one against a target that keeps its state, none for the embedded ledger")
              --shard I/N         run shard I (0 to N-1) of N: only its accounts, report folder ...-shardIofN
                                  (combine the shards with 'paystorm merge'); I may be $JOB_COMPLETION_INDEX
              --flaw NAME         switch on a flaw of the embedded ledger; repeatable (see 'paystorm ledger --help')
              --pki DIR           the test PKI an external target trusts (from 'paystorm pki init DIR')
              --reports DIR       where report folders go (default Reports)
              --rate R --duration D
                                  a constant R actions/s for D (90, 30s, 2m, 1h) in place of the profile's schedule
              --settle D          the least wait between the last action and the final probes (the profile's settleSeconds)
              --rate-scale X      multiply every rate of the schedule by X (0.01 to 1000)
              --admissions FILE   play back the admissions.csv of a run that dropped arrivals at the source
                                  (it could not keep up), so its world is generated again exactly
              --metrics-listen HOST:PORT
                                  serve live metrics at GET /metrics, OpenMetrics or Prometheus text as
                                  Accept asks (loopback unless target.allowedHosts names the host; the
                                  output shows the port)
              --metrics-linger D  keep serving the final values (verdict, violations) for D after the report
                                  (default 15s; 0: close at once)
              --history-max-mb N  keep the history's gzip chunks under N MiB, dropping the oldest (default 512)
              --no-history        do not write the history (history-NNNNNN.jsonl.gz)\(replay ? "" : "\n  --check             validate the profile and its thresholds, then exit")
              --quiet             no progress output, only the verdict
              --plain             periodic progress lines even on a terminal

            Exit codes: 0 pass, 1 violation, 2 unknown, 3 threshold breached, 64 usage, 65 bad profile,
            66 missing input, 69 target unreachable, 70 internal error, 73 cannot write, 129, 130 or 143 stopped by
            SIGHUP, SIGINT or SIGTERM (the report is still written, marked interrupted).

            """
    }

    /// The `--rate-scale` factors a run accepts: above 1000 a profile's rates are beyond what one machine sends
    /// or what its timeouts can describe; below 0.01 a schedule sends next to nothing.
    static let rateScaleBounds = 0.01...1000.0

    /// The `--metrics-linger` a run accepts: from none to an hour (past any scrape interval).
    static let metricsLingerBounds = 0.0...3600.0

    private static func format(_ number: Double) -> String { String(format: "%g", number) }

    static func runOptions(_ arguments: inout Arguments, replay: Bool) throws -> RunOptions {
        var status: StatusMode = isatty(STDERR_FILENO) == 1 ? .live : .plain(every: 5)
        if arguments.flag("--quiet") { status = .quiet }
        if arguments.flag("--plain") { status = .plain(every: 5) }
        let noHistory = arguments.flag("--no-history")
        let historyMax = try arguments.int("--history-max-mb")
        let metricsListen = try arguments.option("--metrics-listen")
        let metricsLinger = try arguments.option("--metrics-linger").map { try seconds($0, flag: "--metrics-linger") }
        let seed = try arguments.seed()
        let account = try arguments.option("--account")
        let namespaceText = try arguments.option("--namespace")
        let shardText = try arguments.option("--shard")
        // Checked here, before the profile is read, so a misspelled flaw is a usage error at once (also with
        // --check) instead of an embedded ledger that fails to start.
        let flaws = try LedgerFlaw.parse(try arguments.options("--flaw")).map(\.rawValue)
        let pki = try arguments.option("--pki")
        let reports = try arguments.folder("--reports")
        let scale = try arguments.double("--rate-scale")
        let rate = try arguments.double("--rate")
        let duration = try arguments.option("--duration").map { try seconds($0, flag: "--duration") }
        let settle = try arguments.option("--settle").map { try seconds($0, flag: "--settle") }
        let admissions = try arguments.option("--admissions")
        let variables = try profileVariables(&arguments)
        let profile = arguments.positional() ?? (replay ? nil : "Profiles/smoke.json5")
        try arguments.finish()
        guard let profile else { throw CLIError(.usage, "missing PROFILE") }
        guard FileManager.default.isReadableFile(atPath: profile) else {
            throw CLIError(.noInput, "cannot read profile \(profile)")
        }
        var options = RunOptions(profilePath: profile)
        try applyIdentity(
            to: &options,
            seed: seed,
            account: account,
            namespace: namespaceText,
            shard: shardText,
            replay: replay
        )
        options.admissionsPath = admissions
        options.flaws = flaws
        options.variables = variables
        options.pkiDirectory = pki
        if let reports { options.reportsDirectory = reports }
        options.status = status
        options.announce = { PayStormCLI.printError($0) }
        options.history = !noHistory
        try applyBounded(
            to: &options,
            rateScale: scale,
            rate: rate,
            duration: duration,
            settle: settle,
            historyMax: historyMax,
            metrics: (metricsListen, metricsLinger)
        )
        return options
    }

    /// Sets which run, or which part of one, these options play: the seed, a replay's account and namespace,
    /// the shard.
    private static func applyIdentity(
        to options: inout RunOptions,
        seed: UInt64?,
        account: String?,
        namespace namespaceText: String?,
        shard shardText: String?,
        replay: Bool
    ) throws {
        if let seed {
            options.seed = seed
        } else if replay {
            throw CLIError(.usage, "replay needs --seed N (the seed printed in the report)")
        }
        if let account {
            guard AppStoreJSON.isValidUUID(account) else {
                throw CLIError(.usage, "--account expects an appAccountToken UUID, got '\(account)'")
            }
            options.account = account.uppercased()
        }
        if let namespaceText {
            guard let namespace = RunNamespace.parse(namespaceText) else {
                throw CLIError(
                    .usage,
                    "--namespace expects 1 to 16 hex digits, not all 0 (as the report prints it), got '\(namespaceText)'"
                )
            }
            // A replay names the namespace of the run it replays: its account is found there, and plays under a
            // fresh namespace when the target keeps its state (it still holds that run's purchases).
            if replay { options.accountNamespace = namespace } else { options.namespace = namespace }
        }
        if let shardText {
            guard let shard = Shard(shardText) else {
                throw CLIError(
                    .usage,
                    "--shard expects INDEX/COUNT with 0 <= INDEX < COUNT (0-based, like JOB_COMPLETION_INDEX), got '\(shardText)'"
                )
            }
            options.shard = shard
        }
    }

    /// Sets the options whose values have bounds (and `--rate` with `--duration`, a constant schedule), each
    /// checked with a message naming its flag, in the order a usage error reports them.
    private static func applyBounded(
        to options: inout RunOptions,
        rateScale scale: Double?,
        rate: Double?,
        duration: Double?,
        settle: Double?,
        historyMax: Int?,
        metrics: (listen: String?, linger: Double?)
    ) throws {
        if let scale {
            guard rateScaleBounds.contains(scale) else {
                throw CLIError(
                    .usage,
                    "--rate-scale must be from \(format(rateScaleBounds.lowerBound)) to \(format(rateScaleBounds.upperBound)), got \(format(scale))"
                )
            }
            options.rateScale = scale
        }
        options.schedule = try constantSchedule(rate: rate, duration: duration)
        if let settle {
            guard Profile.settleBounds.contains(settle) else {
                throw CLIError(
                    .usage,
                    "--settle must be from 0 to \(Int(Profile.settleBounds.upperBound)) seconds (a day), got \(format(settle))"
                )
            }
            options.settleSeconds = settle
        }
        if let historyMax {
            // 0 would keep nothing (that is --no-history); 1 TiB is past any disk a soak writes to.
            guard historyMax >= 1 && historyMax <= 1 << 20 else {
                throw CLIError(.usage, "--history-max-mb must be from 1 to \(1 << 20), got \(historyMax)")
            }
            options.historyMaxMegabytes = historyMax
        }
        if let linger = metrics.linger {
            guard metricsLingerBounds.contains(linger) else {
                throw CLIError(.usage, "--metrics-linger must be from 0 to 1h, got \(format(linger)) s")
            }
            options.metricsLingerSeconds = linger
        }
        if let metricsListen = metrics.listen {
            let (host, port) = try ListenAddress.parse(metricsListen, flag: "--metrics-listen")
            // A host off loopback is checked against the profile's allowedHosts once the profile is read.
            options.metricsListen = MetricsListen(host: host, port: port, loopback: ListenAddress.isLoopback(host))
        }
    }

    /// Seconds from a duration's text as `paystorm load` reads it (`90`, `30s`, `2m`, `1h`).
    private static func seconds(_ text: String, flag: String) throws -> Double {
        do {
            let duration = try parseDuration(text)
            return Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
        } catch {
            throw CLIError(.usage, "\(flag): \(error)")
        }
    }

    /// The schedule `--rate R --duration S` puts in place of the profile's: R actions/s for S seconds (nil when
    /// neither is given).
    /// - Throws: `CLIError` with `.usage` when only one is given or either is out of the bounds a profile has.
    static func constantSchedule(rate: Double?, duration: Double?) throws -> [RateSegment]? {
        switch (rate, duration) {
        case (nil, nil):
            return nil
        case (let rate?, let duration?):
            guard rate > 0 && RateSegment.rateBounds.contains(rate) else {
                throw CLIError(
                    .usage,
                    "--rate must be above 0 and at most \(Int(RateSegment.rateBounds.upperBound)) actions/s, got \(format(rate))"
                )
            }
            guard RateSegment.secondsBounds.contains(duration) else {
                throw CLIError(
                    .usage,
                    "--duration must be from 1ms to \(Int(RateSegment.secondsBounds.upperBound)) seconds (a year), got \(format(duration))"
                )
            }
            guard rate * duration >= 1 else {
                throw CLIError(
                    .usage,
                    "--rate \(format(rate)) for \(format(duration)) s starts \(String(format: "%g", rate * duration)) actions, "
                        + "fewer than one: raise --rate or --duration"
                )
            }
            return [RateSegment(.constant(rate: rate), seconds: duration)]
        default:
            throw CLIError(
                .usage,
                "--rate and --duration go together: R actions/s for S seconds, in place of the profile's schedule"
            )
        }
    }

    /// Removes every `--set NAME=VALUE` (the values of the profile's `${NAME}` variables); a later one for the
    /// same name wins.
    /// - Throws: `CLIError` with `.usage` naming a malformed assignment.
    static func profileVariables(_ arguments: inout Arguments) throws -> [String: String] {
        var variables: [String: String] = [:]
        for text in try arguments.options("--set") {
            guard let (name, value) = ProfileVariables.assignment(text) else {
                throw CLIError(
                    .usage,
                    "--set expects NAME=VALUE with a NAME of letters, digits and _ (not starting with a digit), got '\(text)'"
                )
            }
            variables[name] = value
        }
        return variables
    }

    /// Runs with signal handling and prints the verdict. A signal stops the run, which still writes its report,
    /// and the command exits with the signal's code (129, 130, 143); one in the metrics linger only ends it.
    static func execute(_ options: RunOptions) throws -> ExitCode {
        let quiet = options.status == .quiet
        let run = PayStormRun(options) { line in
            if !quiet { PayStormCLI.printError(line) }
        }
        let signals = TerminationSignal.interrupting(run)
        defer { signals.cancel() }
        let outcome: RunOutcome
        do {
            outcome = try run.execute()
        } catch {
            throw CLIError(run.signal?.exitCode ?? RunCommandSupport.exitCode(for: error), error.description)
        }
        print(verdictText(outcome), terminator: "")
        if let failure = outcome.failure { PayStormCLI.printError("paystorm: \(failure)") }
        return ExitCode(rawValue: outcome.report.exitCode) ?? .internalError
    }

    /// The verdict block printed at the end of a run.
    static func verdictText(_ outcome: RunOutcome) -> String {
        let report = outcome.report
        var text = "\nverdict: \(report.verdict.rawValue.uppercased())"
        if report.violationCount > 0 {
            text += " (\(report.violationCount) violation\(report.violationCount == 1 ? "" : "s"))"
        }
        text += ", seed \(report.seed)\(report.namespace.map { ", namespace \($0)" } ?? ""), exit \(report.exitCode)\n"
        for reason in report.reasons { text += "  because: \(reason)\n" }
        if report.invariantVerdict != report.verdict {
            text += "  invariants alone: \(report.invariantVerdict.rawValue.uppercased())\n"
        }
        let width = report.invariants.map(\.name.count).max() ?? 0
        for invariant in report.invariants {
            let pad = String(repeating: " ", count: width - invariant.name.count)
            var line = "  \(invariant.name)\(pad)  \(invariant.status.rawValue)"
            if invariant.violations > 0 { line += " (\(invariant.violations))" }
            if let reason = invariant.reason { line += "  \(reason)" }
            text += line + "\n"
        }
        for threshold in report.thresholds {
            text +=
                "  threshold \(threshold.expression): \(threshold.status) (\(threshold.observed))\n"
        }
        if let limit = report.harnessLimited { text += "  \(limit.sentence)\n" }
        if let first = report.violations.first {
            text += "\nfirst violation, \(first.invariant), \(first.concerns):\n  \(first.summary)\n"
            for line in first.witness { text += "  - \(line)\n" }
            text += "  replay: \(first.replay)\n"
        }
        let sent = report.requests.counts
        // Resends are rare and matter only when they happen, so a run without any keeps its line as it was.
        let resent =
            (sent.resent > 0 ? ", \(sent.resent) resent" : "")
            + (sent.unsent > 0 ? ", \(sent.unsent) unsent (timed out waiting for a connection)" : "")
        // The classes that occurred, in the report's order: a reader sees at once what kind of errors they were.
        let classes = report.requests.errorsByClass.filter { $0.count > 0 }.map { "\($0.count) \($0.name)" }
        let errors = classes.isEmpty ? "" : " (" + classes.joined(separator: ", ") + ")"
        text +=
            "\nsent \(sent.sent) of \(sent.scheduled) intended, \(sent.ok) ok, \(report.requests.errorCount) errors"
            + "\(errors), \(sent.missed) missed\(resent)\n"
        text += "report: \(outcome.folder.path)/report.html\n"
        if let latest = outcome.latestNote { text += "note: \(latest)\n" }
        return text
    }
}

/// What `run`, `replay` and `detect` share.
enum RunCommandSupport {
    /// The exit code of a run that could not start.
    static func exitCode(for error: RunError) -> ExitCode {
        switch error {
        case .badProfile, .badInput: .badInput
        case .noInput: .noInput
        case .unreachable: .unreachable
        case .cannotWrite: .cannotWrite
        case .internalError: .internalError
        }
    }
}
