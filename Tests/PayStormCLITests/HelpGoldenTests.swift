import Foundation
import Testing

@testable import PayStormCLI

/// Golden tests of the help texts: `paystorm --help` and every `paystorm COMMAND --help`.
/// Set RECORD_SNAPSHOTS=1 to rewrite Snapshots/ (never on CI).
struct HelpGoldenTests {
    static var texts: [(String, String)] {
        [("paystorm.txt", PayStormCLI.help)] + PayStormCLI.commands.map { ("\($0.name).txt", $0.help) }
    }

    @Test(arguments: texts)
    func helpMatchesItsGoldenFile(name: String, text: String) throws {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("Snapshots").appendingPathComponent(name)
        if ProcessInfo.processInfo.environment["RECORD_SNAPSHOTS"] != nil {
            try Data(text.utf8).write(to: url)
        }
        #expect(text == (try String(contentsOf: url, encoding: .utf8)))
    }

    @Test func everyCommandHasUsageInItsHelp() {
        for command in PayStormCLI.commands {
            #expect(command.help.contains("Usage"), "paystorm \(command.name) --help has no usage line")
        }
    }
}
