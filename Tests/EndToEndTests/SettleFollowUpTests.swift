import Foundation
import Testing

/// Retries and redeliveries near the end of the schedule: the run settles until every one due has been sent and
/// answered, at least `settleSeconds` and at most `settleMaxSeconds`; those due later are not sent, and the report
/// says how many and how long it settled.
@Suite(.serialized)
struct SettleFollowUpTests {
    /// Every answer is lost; its retry comes 3 s later, after the 2 s schedule and the 1 s settle but within the
    /// longest settle of 6 s. Every device crashes before finish() and would relaunch only after 30 s, past it.
    static let profile = """
        { name: "settle-follow-ups", seed: 9,
          target: { embeddedLedger: true, environment: "Sandbox" },
          catalog: { products: [{ id: "pro.unlock", type: "nonConsumable", priceMilli: 4990 }] },
          population: { accounts: 10, devicesPerAccount: 1 },
          actionMix: { nonConsumable: 1 },
          schedule: [{ kind: "constant", rate: 5, seconds: 2 }],
          faults: { lostResponse: { probability: 1, retrySeconds: 3 },
                    crashBeforeFinish: { probability: 1, relaunchSeconds: 30 } },
          settleSeconds: 1, settleMaxSeconds: 6 }
        """

    @Test func followUpsDueWithinTheLongestSettleAreSentAndLaterOnesCounted() throws {
        let run = try PayStormRunner.run(inline: Self.profile, name: "settle")
        let retriesSent = run.events.filter {
            $0["event"] as? String == "send" && $0["copy"] as? String == "retry"
                && ($0["t"] as? Double ?? 0) > 3
        }
        #expect(!retriesSent.isEmpty, "no retry was sent after the least settle: \(run.output)")
        #expect(run.notes.contains { $0.contains("fell after the longest settle") }, "\(run.notes)")
        #expect(run.notes.contains { $0.hasPrefix("settle: not quiet when the longest settle ended") }, "\(run.notes)")
    }

    /// A restart that outlasts the schedule and its settle: 9 s down from t ≈ 2 s of a 6 s schedule with a 3 s
    /// settle (a slow start on a busy machine does the same). Its webhooks' retries wait for the target, and so does
    /// the final probe, which found the target down when the run settled a fixed period.
    static let slowRestart = RestartRetryTests.profile.replacingOccurrences(
        of: "downSeconds: 1",
        with: "downSeconds: 9"
    )

    @Test func aRestartOutlastingTheSettleLengthensTheRunNotItsVerdict() throws {
        let run = try PayStormRunner.run(inline: Self.slowRestart, name: "slow-restart")
        #expect(run.exitCode == 0, "\(run.output)")
        let settle = try #require(run.notes.first { $0.hasPrefix("settle: quiet ") }, "\(run.notes)")
        // Quiet only once the target was back (t ≈ 11 s) and its refused webhooks' retries were answered.
        let quiet = Double(settle.dropFirst("settle: quiet ".count).prefix { $0 != " " }) ?? 0
        #expect(quiet > 2, "\(settle)")
    }

    /// The same restart with no App Store retries: nothing waits for the target in the engine, which goes quiet
    /// at the schedule's end, yet the final probe waits for the restart to end instead of finding the target gone.
    static let slowRestartNothingRetried = slowRestart.replacingOccurrences(
        of: "appStoreRetries: { floorSeconds: 0 }",
        with: "appStoreRetries: { enabled: false }"
    )

    @Test func theFinalProbeWaitsForARestartStillUnderWay() throws {
        #expect(Self.slowRestartNothingRetried.contains("enabled: false"))
        let run = try PayStormRunner.run(inline: Self.slowRestartNothingRetried, name: "slow-restart-no-retry")
        #expect(!run.output.contains("final probes failed"), "\(run.output)")
        #expect(run.notes.contains { $0.hasPrefix("the final probe waited ") }, "\(run.notes)")
    }
}
