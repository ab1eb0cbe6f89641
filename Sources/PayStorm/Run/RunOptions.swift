public import Foundation
public import Load
public import Primitives
public import Reporting
public import RunControl

/// What `paystorm run` was asked to do.
public struct RunOptions: Sendable {
    /// The JSON5 profile to run.
    public var profilePath: String
    /// A seed that replaces the profile's.
    public var seed: UInt64?
    /// Flaws to switch on in the embedded reference ledger.
    public var flaws: [String] = []
    /// Where report folders go.
    public var reportsDirectory: String = "Reports"
    /// The live status mode.
    public var status: StatusMode = .plain(every: 5)
    /// Replay only this account: the world is generated whole (so the seed plays the same), but only
    /// this account's deliveries are sent and checked.
    public var account: String?
    /// The namespace of the run's identities (`Profile.namespace`): nil draws a fresh one for a target that keeps
    /// its state (any but the embedded ledger, which starts empty each run and keeps the seed's own, 0).
    public var namespace: UInt64?
    /// The namespace `account` was named in (a replay's `--namespace`: the replayed run's), when it is not the
    /// run's own: the account is then found by its index there and plays under the run's namespace, so a replay
    /// against a target that kept the replayed run's state does not meet it.
    public var accountNamespace: UInt64?
    /// The test PKI the target trusts (external targets); the embedded ledger gets a fresh one.
    public var pkiDirectory: String?
    /// Whether to stream the history (`history-NNNNNN.jsonl.gz` chunks).
    public var history = true
    /// The most the history's chunks may take on disk together, in MiB; the oldest chunks go first.
    public var historyMaxMegabytes = 512
    /// Where to serve live metrics at `GET /metrics` during the run and its linger (nil: nowhere).
    public var metricsListen: MetricsListen?
    /// How long the metrics endpoint keeps serving the final values once the report is written, in seconds
    /// (`--metrics-linger`): at least a scrape interval, so the last scrape sees the verdict.
    public var metricsLingerSeconds: Double = 15
    /// Where the lines go that a user needs even from a quiet run: the `--metrics-listen` address, whose port
    /// is chosen when the run starts when it was given as 0.
    public var announce: @Sendable (String) -> Void = { _ in }
    /// The `paystorm` binary, for starting the embedded ledger (default: this process's executable).
    public var executablePath: String?
    /// Multiplies every segment of the rate schedule (capacity planning without editing the profile).
    public var rateScale: Double = 1
    /// Values of the profile's `${NAME}` variables given with `--set NAME=value`; they win over the
    /// environment.
    public var variables: [String: String] = [:]
    /// The shard of a run split across processes (`--shard INDEX/COUNT`): only its accounts are sent and
    /// checked, and the report records it for `paystorm merge`.
    public var shard: Shard?
    /// A schedule that replaces the profile's (`--rate R --duration D`, a capacity step's constant rate), applied
    /// before ``RunOptions/rateScale``: one constant segment, the shape a replay line can name.
    public var schedule: [RateSegment]?
    /// A settle period that replaces the profile's, in seconds (a capacity step keeps it short).
    public var settleSeconds: Double?
    /// A longest settle that replaces the profile's `settleMaxSeconds`, in seconds (a capacity step waits for no
    /// follow-up past its short settle).
    public var settleMaxSeconds: Double?
    /// The `admissions.csv` of a thinned run to play back (`--admissions FILE`), so its world is generated again
    /// exactly; nil thins the schedule anew whenever minting falls behind.
    public var admissionsPath: String?
    /// Stops the run early (the command line interrupts it on a signal): it then writes its report, marked
    /// interrupted, with what it decided until then. Copies of these options share it, so one interruption stops
    /// every run made from them (the steps of a capacity search).
    public var interruption = Interruption()

    /// Creates options for a profile.
    public init(profilePath: String) {
        self.profilePath = profilePath
    }
}

/// What a run found, and where it wrote it.
public struct RunOutcome: Sendable {
    /// The full report (also in `summary.json`).
    public var report: RunReport
    /// The run's report folder.
    public var folder: URL
    /// Seconds into the run at which each invariant first failed (the detection matrix).
    public var firstDetection: [String: Double]
    /// Why `latest` beside the folder does not name it (someone's file or folder of that name), for the
    /// console even when it is quiet; nil when it does.
    public var latestNote: String? = nil
    /// What stopped the run before its end (a request hook that failed), one line; nil when nothing did. Its
    /// report is written and its exit code says so (69).
    public var failure: String? = nil

    /// An outcome of a run, or of a merge of shards' runs.
    package init(report: RunReport, folder: URL, firstDetection: [String: Double], latestNote: String? = nil) {
        self.report = report
        self.folder = folder
        self.firstDetection = firstDetection
        self.latestNote = latestNote
    }
}
