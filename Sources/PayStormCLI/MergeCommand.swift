import PayStorm
import Reporting
import RunControl
import ShardMerge

extension Command {
    /// `paystorm merge`: the shards of a split run combined into one report.
    static let merge = Command(
        name: "merge",
        summary: "merge the reports of a run's shards (run --shard I/N) into one report and verdict",
        help: """
            paystorm merge: combine the shards of a split run

            Usage: paystorm merge DIR... --out DIR

            Reads the summary.json of each shard's report folder (from 'paystorm run --shard I/N') and
            writes one report into --out: request counts summed, latency HDR histograms added (exact
            percentiles), invariant checks summed, violations united, the profile's thresholds judged on
            the merged figures, and the verdict and exit code of a run. Every shard 0 to N-1 must be given
            once, all of one run: the same profile (its content with its variables, as each summary's
            digest records it), seed, --rate-scale and schedule (--rate, --duration).

            Options:
              --out DIR           where the merged report goes (created when missing)

            Exit codes: 0 pass, 1 violation, 2 unknown, 3 threshold breached, 64 usage, 65 a folder is not a
            shard, the shards are of different runs (what differs is named) or repeated or written by an
            older PayStorm, or --out is one of them, 66 a summary is missing or a shard is missing, 73 cannot
            write.

            """
    ) { arguments in
        var arguments = arguments
        guard let out = try arguments.folder("--out") else { throw CLIError(.usage, "merge needs --out DIR") }
        var directories: [String] = []
        while let directory = arguments.positional() { directories.append(directory) }
        try arguments.finish()
        guard !directories.isEmpty else { throw CLIError(.usage, "merge needs the shards' report folders") }
        let outcome: RunOutcome
        do throws(RunError) {
            outcome = try PayStormMerge.execute(directories: directories, out: out)
        } catch {
            throw CLIError(RunCommandSupport.exitCode(for: error), error.description)
        }
        print(verdictText(outcome), terminator: "")
        return ExitCode(rawValue: outcome.report.exitCode) ?? .internalError
    }
}
