import Foundation
import PayStorm
import ReferenceLedger
import RunControl
import TargetCheck

extension Command {
    /// `paystorm target check`: proves a profile's mapping of its target before a long run.
    static let target = Command(
        name: "target",
        summary: "check a profile's mapping of its target in seconds, before a soak",
        help: """
            paystorm target: check how a profile drives its target

            Usage: paystorm target check PROFILE [--pki DIR] [--set NAME=VALUE]... [--flaw NAME]...

            Buys one product of each type the catalog sells, each through every configured role (the device
            delivery, then the webhook), sends one webhook again with the same bytes, one forged notification
            and one pending device report (each on a fresh account), then probes the accounts, and prints a
            table: role, request, status, how the answer was classified, what the probe saw, and a hint where
            the mapping looks wrong. It provisions only the accounts it uses. Against the embedded ledger
            (target.embeddedLedger) it starts the ledger as 'run' does.

            Options:
              --pki DIR           the test PKI an external target trusts (from 'paystorm pki init DIR')
              --set NAME=VALUE    the value of ${NAME} in the profile; repeatable, wins over the environment
              --flaw NAME         switch on a flaw of the embedded ledger; repeatable

            Exit codes: 0 the mapping works (every purchase acknowledged and visible in the probe, the
            duplicate not granted twice, the forgery and the pending report not granted), 1 otherwise,
            64 usage, 65 bad profile or PKI, 66 missing input, 69 target unreachable, 70 internal error,
            129, 130 or 143 stopped by SIGHUP, SIGINT or SIGTERM (the table so far is printed).

            """
    ) { arguments in
        var arguments = arguments
        guard let verb = arguments.positional() else {
            throw CLIError(.usage, "missing subcommand (check); run 'paystorm target --help'")
        }
        guard verb == "check" else { throw CLIError(.usage, "unknown target subcommand '\(verb)' (check)") }
        let flaws = try LedgerFlaw.parse(try arguments.options("--flaw")).map(\.rawValue)
        let pki = try arguments.option("--pki")
        let variables = try profileVariables(&arguments)
        let profile = try arguments.requiredPositional("PROFILE")
        try arguments.finish()
        guard FileManager.default.isReadableFile(atPath: profile) else {
            throw CLIError(.noInput, "cannot read profile \(profile)")
        }
        var options = RunOptions(profilePath: profile)
        options.flaws = flaws
        options.pkiDirectory = pki
        options.variables = variables
        let signals = TerminationSignal.interrupting(options.interruption)
        defer { signals.cancel() }
        let outcome: TargetCheckOutcome
        do throws(RunError) {
            outcome = try TargetCheck.execute(options) { PayStormCLI.printError($0) }
        } catch {
            throw CLIError(
                options.interruption.signal?.exitCode ?? RunCommandSupport.exitCode(for: error),
                error.description
            )
        }
        print(outcome.text, terminator: "")
        if let signal = outcome.interruptedBy ?? options.interruption.signal { return signal.exitCode }
        return outcome.passed ? .success : .violation
    }
}
