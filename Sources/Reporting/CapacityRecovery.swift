import Foundation

/// How a capacity search let the target recover before one of its steps: it sent a light probe (a few
/// requests a second) until the probes answered at the latency measured while the target was quiet, or
/// until its time ran out, so that no step inherits the backlog an overloaded step left in the target.
public struct CapacityRecovery: Codable, Sendable, Hashable {
    /// Whether the probes answered at the quiet latency before the time ran out.
    public var recovered: Bool
    /// Seconds spent probing before the step began.
    public var waitedSeconds: Double
    /// When the probing began, in seconds since 1970 (to lay beside the target's own logs and metrics).
    public var startedAt: Double
    /// Probes sent.
    public var probes: Int
    /// The median latency of the last probes judged, in microseconds (nil when none of them was answered).
    public var medianMicros: Int64?
    /// The median latency of the probes sent before the first step, while the target was quiet.
    public var quietMicros: Int64
    /// The bound the median had to come under: twice ``quietMicros`` plus a floor.
    public var boundMicros: Int64

    /// Creates a record.
    public init(
        recovered: Bool,
        waitedSeconds: Double,
        startedAt: Double,
        probes: Int,
        medianMicros: Int64?,
        quietMicros: Int64,
        boundMicros: Int64
    ) {
        self.recovered = recovered
        self.waitedSeconds = waitedSeconds
        self.startedAt = startedAt
        self.probes = probes
        self.medianMicros = medianMicros
        self.quietMicros = quietMicros
        self.boundMicros = boundMicros
    }

    /// What the wait found: "the target recovered in 12.4 s (probes' median 41.0 ms, bound 105.0 ms)".
    public var sentence: String {
        let median = medianMicros.map(Self.milliseconds) ?? "no answer"
        let figures = "probes' median \(median), bound \(Self.milliseconds(boundMicros))"
        return recovered
            ? String(format: "the target recovered in %.1f s (", waitedSeconds) + figures + ")"
            : String(format: "the target had not recovered after %.1f s (", waitedSeconds) + figures
                + "); the step ran anyway"
    }

    /// The recoveries of a search's steps in one line, nil when none waited: how many, the longest, and the
    /// steps that ran before the target recovered.
    public static func summary(of steps: [CapacityStep]) -> String? {
        let waits = steps.compactMap { step in step.recovery.map { (step.index, $0) } }
        guard let longest = waits.map(\.1.waitedSeconds).max() else { return nil }
        var line = String(
            format: "recovery: probed before %d of %d steps, at most %.1f s",
            waits.count,
            steps.count,
            longest
        )
        let unrecovered = waits.filter { !$0.1.recovered }.map { "\($0.0)" }
        line +=
            unrecovered.isEmpty
            ? "; the target recovered before each"
            : "; step \(unrecovered.joined(separator: ", ")) ran before the target recovered (--recovery-timeout)"
        return line
    }

    /// Microseconds as the console prints a latency: milliseconds, or seconds from 10 s up.
    public static func milliseconds(_ micros: Int64) -> String {
        micros >= 10_000_000
            ? String(format: "%.1f s", Double(micros) / 1e6) : String(format: "%.1f ms", Double(micros) / 1000)
    }
}
