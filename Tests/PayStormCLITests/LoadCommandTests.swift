import RunControl
import Testing

@testable import PayStormCLI

/// `paystorm load`'s checks of its options, each refused with its README exit code and one line naming the
/// option, before any request is sent (the last rows reach the unreachable-target probe on a closed loopback
/// port, one request each).
struct LoadCommandTests {
    struct Refusal: Sendable, CustomTestStringConvertible {
        var arguments: [String]
        var exitCode: ExitCode
        var message: String
        var testDescription: String { arguments.joined(separator: " ") }
    }

    static let closedPort = "http://127.0.0.1:9/"

    static let refusals: [Refusal] = [
        Refusal(arguments: ["--rate", "1"], exitCode: .usage, message: "--url is required"),
        Refusal(arguments: ["--url", closedPort, "--what"], exitCode: .usage, message: "unknown argument '--what'"),
        Refusal(
            arguments: ["--url", "ftp://127.0.0.1/"],
            exitCode: .usage,
            message: "--url: expected an http:// or https:// URL with a host"
        ),
        Refusal(
            arguments: ["--url", "http://127.0.0.1:99999/", "--rate", "1", "--duration", "1s"],
            exitCode: .usage,
            message: "--url: expected a port from 1 to 65535, found \"99999\""
        ),
        Refusal(
            arguments: ["--url", "http://127.0.0.1:1/a b", "--rate", "1", "--duration", "1s"],
            exitCode: .usage,
            message:
                "--url: expected a URL of URL characters only (percent-encode others), found \"http://127.0.0.1:1/a b\" (a space)"
        ),
        Refusal(
            arguments: ["--url", "http://example.invalid/", "--rate", "1", "--duration", "1s"],
            exitCode: .usage,
            message: "refusing non-loopback host 'example.invalid'; pass --allow-host example.invalid"
        ),
        Refusal(
            arguments: ["--url", "http://example.invalid/", "--allow-host", "example.invalid", "--arrivals", "x"],
            exitCode: .usage,
            message: "--arrivals must be uniform or poisson, got 'x'"
        ),
        Refusal(
            arguments: ["--url", closedPort, "--users", "0"],
            exitCode: .usage,
            message: "--users must be at least 1"
        ),
        Refusal(
            arguments: ["--url", closedPort, "--users", "2"],
            exitCode: .usage,
            message: "--users needs --duration"
        ),
        Refusal(
            arguments: ["--url", closedPort, "--users", "2", "--duration", "1s", "--rate", "1"],
            exitCode: .usage,
            message: "--users (closed loop) cannot be combined with --rate or --schedule"
        ),
        Refusal(
            arguments: ["--url", closedPort, "--users", "2", "--duration", "1x"],
            exitCode: .usage,
            message: "'1x' is not a duration"
        ),
        Refusal(
            arguments: ["--url", closedPort, "--schedule", "10@1s", "--rate", "1"],
            exitCode: .usage,
            message: "--schedule replaces --rate and --duration"
        ),
        Refusal(
            arguments: ["--url", closedPort, "--schedule", "x@1s"],
            exitCode: .usage,
            message: "schedule segment 'x@1s': 'x' is not a rate"
        ),
        Refusal(
            arguments: ["--url", closedPort, "--rate", "1"],
            exitCode: .usage,
            message: "give --rate and --duration, --schedule, or --users and --duration"
        ),
        Refusal(
            arguments: ["--url", closedPort, "--rate", "0", "--duration", "1s"],
            exitCode: .usage,
            message: "the schedule never sends (peak rate 0)"
        ),
        Refusal(
            arguments: ["--url", closedPort, "--rate", "1", "--duration", "1s", "--connections", "0"],
            exitCode: .usage,
            message: "--connections must be at least 1"
        ),
        Refusal(
            arguments: ["--url", closedPort, "--rate", "1", "--duration", "1s", "--max-in-flight", "0"],
            exitCode: .usage,
            message: "--max-in-flight must be at least 1"
        ),
        Refusal(
            arguments: ["--url", closedPort, "--rate", "1", "--duration", "1s", "--header", "NoColon"],
            exitCode: .usage,
            message: "--header 'NoColon' must look like 'Name: value'"
        ),
        Refusal(
            arguments: ["--url", closedPort, "--rate", "1", "--duration", "1s", "--body-file", "/nonexistent/body"],
            exitCode: .noInput,
            message: "cannot read the body file /nonexistent/body"
        ),
        Refusal(
            arguments: ["--url", closedPort, "--rate", "1", "--duration", "1s", "--threshold", "device.p99 < 1s"],
            exitCode: .usage,
            message: "unknown kind 'device'"
        ),
        Refusal(
            arguments: ["--url", closedPort, "--rate", "1", "--duration", "1s", "--timeout", "soon"],
            exitCode: .usage,
            message: "'soon' is not a duration"
        ),
        Refusal(
            arguments: ["--url", closedPort, "--rate", "1", "--duration", "1s", "--timeout", "99999999999h"],
            exitCode: .usage,
            message: "--timeout: '99999999999h' is too long: a duration is at most a year (8760h)"
        ),
        Refusal(
            arguments: ["--url", closedPort, "--schedule", "5@99999999999h"],
            exitCode: .usage,
            message: "--schedule: '99999999999h' is too long"
        ),
        Refusal(
            arguments: ["--url", closedPort, "--rate", "1", "--duration", "1s", "--header", "X-Inj: a\r\nX-Evil: b"],
            exitCode: .usage,
            message: "--header: expected a header value without control characters, found \"a\\r\\nX-Evil: b\""
        ),
        Refusal(
            arguments: ["--url", closedPort, "--rate", "1", "--duration", "1s", "--header", "X Inj: a"],
            exitCode: .usage,
            message: "--header: expected a header name of letters, digits"
        ),
        Refusal(
            arguments: ["--url", closedPort, "--rate", "1", "--duration", "1s", "--connect-timeout", "soon"],
            exitCode: .usage,
            message: "'soon' is not a duration"
        ),
        Refusal(
            arguments: ["--url", closedPort, "--rate", "1", "--duration", "1s", "--quiet"],
            exitCode: .unreachable,
            message: "target \(closedPort) is unreachable"
        ),
        Refusal(
            arguments: ["--url", "http://[::1]:9/", "--users", "1", "--duration", "1s", "--quiet"],
            exitCode: .unreachable,
            message: "target http://[::1]:9/ is unreachable"
        ),
    ]

    @Test(arguments: refusals)
    func badOptionsAreRefusedWithTheirExitCodeAndOneLine(refusal: Refusal) {
        var arguments = Arguments(refusal.arguments)
        do {
            _ = try LoadCLI.run(&arguments)
            Issue.record("\(refusal.arguments) ran")
        } catch let error as CLIError {
            #expect(error.exitCode == refusal.exitCode, "\(error.message)")
            #expect(error.message.contains(refusal.message), "\(error.message)")
            #expect(!error.message.contains("\n"))
        } catch {
            Issue.record("\(refusal.arguments) threw \(error), not a CLIError")
        }
    }
}
