/// Process exit codes, one per outcome, documented in the README table.
///
/// Verdict codes follow Jepsen (0 valid, 1 invalid, 2 unknown); input and
/// environment failures follow BSD `sysexits.h`, so CI can tell a broken
/// backend from a broken profile. Defined here, once: a run's report carries one
/// (`RunReport.exitCode`) and the `paystorm` command line ends with one.
public enum ExitCode: Int32, Sendable, CaseIterable {
    /// The run passed: no violation, every threshold held.
    case success = 0
    /// At least one invariant was violated.
    case violation = 1
    /// No violation was found, but some check could not decide.
    case unknown = 2
    /// A threshold from the profile was breached.
    case thresholdBreached = 3
    /// `paystorm capacity` reached PayStorm's own ceiling (a harness-limited step) before the target broke an
    /// objective, so the target's capacity is above what this machine can send.
    case harnessLimited = 4
    /// A command-line flag or argument is wrong.
    case usage = 64
    /// An input (profile, payload, PKI file) is malformed.
    case badInput = 65
    /// An input file or directory does not exist or cannot be read.
    case noInput = 66
    /// The target could not be reached.
    case unreachable = 69
    /// PayStorm itself failed; this is a bug.
    case internalError = 70
    /// An output file or directory cannot be written.
    case cannotWrite = 73
    /// The command was stopped by SIGHUP (128 + 1); a run still wrote its partial report.
    case hangUp = 129
    /// The command was stopped by SIGINT (128 + 2); a run still wrote its partial report.
    case interrupted = 130
    /// The command was stopped by SIGTERM (128 + 15); a run still wrote its partial report.
    case terminated = 143
}
