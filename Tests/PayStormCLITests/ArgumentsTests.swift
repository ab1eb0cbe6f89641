import RunControl
import Testing

@testable import PayStormCLI

struct ArgumentsTests {
    @Test func readsOptionsInBothSpellings() throws {
        var args = Arguments(["--seed", "7", "--out=dir", "pos"])
        #expect(try args.int("--seed") == 7)
        #expect(try args.option("--out") == "dir")
        #expect(args.positional() == "pos")
        try args.finish()
    }

    @Test func collectsRepeatedOptions() throws {
        var args = Arguments(["--flaw", "a", "--flaw=b"])
        #expect(try args.options("--flaw") == ["a", "b"])
    }

    @Test func rejectsLeftoversAndMissingValues() {
        #expect(throws: CLIError.self) { try Arguments(["--what"]).finish() }
        var missing = Arguments(["--seed"])
        #expect(throws: CLIError.self) { try missing.option("--seed") }
        var notInt = Arguments(["--seed", "x"])
        #expect(throws: CLIError.self) { try notInt.int("--seed") }
    }

    @Test func unknownCommandIsAUsageError() {
        #expect(PayStormCLI.run(["no-such-command"]) == .usage)
        #expect(PayStormCLI.run(["--version"]) == .success)
    }
}
