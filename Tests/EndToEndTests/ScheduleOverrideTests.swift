import Foundation
import Testing

/// `--rate R --duration D` and `--settle D` in place of the profile's schedule and settle (as each step of
/// `paystorm capacity` runs): another schedule is another world, so the replay lines must name them.
struct ScheduleOverrideTests {
    @Test(arguments: [
        (["--rate", "5"], "--rate and --duration go together"),
        (["--duration", "2s"], "--rate and --duration go together"),
        (["--rate", "0", "--duration", "2s"], "--rate must be above 0"),
        (["--rate", "5", "--duration", "soon"], "--duration: 'soon' is not a duration"),
        (["--rate", "5", "--duration", "2y"], "--duration: '2y' is not a duration"),
        (["--settle", "2d"], "--settle: '2d' is not a duration"),
        (["--settle", "25h"], "--settle must be from 0 to 86400 seconds"),
    ])
    func outOfBoundsOrHalfGivenIsExit64NamingTheOption(arguments: [String], said: String) throws {
        let (code, output) = try PayStormRunner.exec(["run", "--check"] + arguments)
        #expect(code == 64, "\(output)")
        #expect(output.contains(said), "\(output)")
    }

    /// The detection profile (20 s at 25 actions/s) for 4 s with a short settle, against a ledger that grants
    /// every redelivery again: its witnesses' replay lines name the schedule and settle, and one, run as
    /// printed, breaks the same invariant again.
    @Test func aRunsReplayLinesNameItsScheduleAndReproduceItsViolation() throws {
        let reports = FileManager.default.temporaryDirectory.appendingPathComponent("override-\(UUID())")
        defer { try? FileManager.default.removeItem(at: reports) }
        let run = try PayStormRunner.run([
            "--rate", "25", "--duration", "4s", "--settle", "1.5", "--flaw", "double-grant",
        ])
        let violation = try #require(run.summary.violations.first, "\(run.output)")
        #expect(violation.replay.contains(" --rate 25 --duration 4 --settle 1.5 "), "\(violation.replay)")

        let (code, output) = try PayStormRunner.shell(violation.replay, ["--reports", reports.path, "--quiet"])
        #expect(code == 1, "\(output)")
        let replayed = try JSONDecoder().decode(
            PayStormRunner.Summary.self,
            from: try Data(contentsOf: reports.appendingPathComponent("latest/summary.json"))
        )
        #expect(replayed.violations.contains { $0.invariant == violation.invariant }, "\(output)")
    }
}
