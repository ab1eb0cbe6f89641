import Foundation
import PayStormTestKit
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
        try expectSnapshot(text, named: name)
    }

    @Test func everyCommandHasUsageInItsHelp() {
        for command in PayStormCLI.commands {
            #expect(command.help.contains("Usage"), "paystorm \(command.name) --help has no usage line")
        }
    }
}
