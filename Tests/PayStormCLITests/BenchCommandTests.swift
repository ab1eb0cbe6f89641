import RunControl
import Testing

@testable import PayStormCLI

/// `paystorm bench --only`: one phase alone for a profiler, and a phase the benchmark does not have refused before
/// anything is measured.
struct BenchCommandTests {
    @Test(arguments: [
        ("mint", "verify", "raw, floor, floor-kept, pipeline, minter, run"), ("verify", "minter", "raw, verify"),
    ])
    func aPhaseTheBenchmarkDoesNotHaveIsAUsageErrorNamingItsPhases(benchmark: String, phase: String, names: String) {
        do {
            _ = try Command.bench.run(Arguments([benchmark, "--only", phase, "--no-openssl-speed"]))
            Issue.record("bench \(benchmark) ran phase \(phase)")
        } catch let error as CLIError {
            #expect(error.exitCode == .usage, "\(error.message)")
            #expect(error.message == "--only: no phase '\(phase)' in bench \(benchmark) (\(names))")
        } catch {
            Issue.record("threw \(error), not a CLIError")
        }
    }

    @Test func onePhaseRunsAlone() throws {
        let code = try Command.bench.run(
            Arguments(["mint", "--only", "pipeline", "--seconds", "0.1", "--threads", "1", "--no-openssl-speed"])
        )
        #expect(code == .success)
    }
}
