import Foundation
import PayStorm
public import RunControl

/// The `paystorm` command line: dispatches to one subcommand and turns every
/// error into one line on standard error and a documented exit code.
public enum PayStormCLI {
    /// The version printed by `paystorm --version`; the same one reports carry (`PayStormVersion` in the PayStorm module).
    public static let version = PayStormVersion.current

    /// Every subcommand, in the order `paystorm --help` lists them.
    public static var commands: [Command] {
        [
            Command.runProfile, Command.replay, Command.target, Command.detect, Command.pki, Command.mint,
            Command.verify, Command.ledger, Command.api, Command.load, Command.merge, Command.capacity,
            Command.bench,
        ]
    }

    /// The top-level help text.
    public static var help: String {
        var text = """
            paystorm \(version): load and chaos testing for in-app purchase backends

            Usage: paystorm COMMAND [OPTIONS]

            Commands:

            """
        let width = commands.map(\.name.count).max() ?? 0
        for command in commands {
            let pad = String(repeating: " ", count: width - command.name.count)
            text += "  \(command.name)\(pad)  \(command.summary)\n"
        }
        text += "\nRun 'paystorm COMMAND --help' for the options of one command.\n"
        return text
    }

    /// Runs the command line and exits the process.
    public static func main() -> Never {
        let code = run(Array(CommandLine.arguments.dropFirst()))
        exit(code.rawValue)
    }

    /// Runs one command line and returns its exit code (testable, never exits).
    public static func run(_ arguments: [String]) -> ExitCode {
        guard let name = arguments.first, name != "--help", name != "-h", name != "help" else {
            print(help, terminator: "")
            return arguments.isEmpty ? .usage : .success
        }
        if name == "--version" {
            print("paystorm \(version)")
            return .success
        }
        guard let command = commands.first(where: { $0.name == name }) else {
            printError("paystorm: unknown command '\(name)'; run 'paystorm --help'")
            return .usage
        }
        let rest = Arguments(Array(arguments.dropFirst()))
        if rest.wantsHelp {
            print(command.help, terminator: command.help.hasSuffix("\n") ? "" : "\n")
            return .success
        }
        do {
            return try command.run(rest)
        } catch let error as CLIError {
            printError("paystorm \(name): \(error.message)")
            return error.exitCode
        } catch {
            printError("paystorm \(name): \(error)")
            return .internalError
        }
    }

    /// Writes one line to standard error.
    public static func printError(_ line: String) {
        var text = line
        if !text.hasSuffix("\n") { text += "\n" }
        FileHandle.standardError.write(Data(text.utf8))
    }
}
