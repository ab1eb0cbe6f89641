import Foundation
import PayStormTestKit
import Testing

/// `--set NAME=VALUE` and the environment give a profile's `${NAME}` values on every command that loads one.
struct ProfileVariablesCommandTests {
    @Test func undefinedVariableIsExit65NamingItAndSetFixesIt() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("vars-\(UUID()).json5")
        defer { try? FileManager.default.removeItem(at: file) }
        var profile = ProfileBuilder(name: "${NAME}", seed: 1, target: .embeddedLedger)
        profile.schedule = [.constant(rate: 1, seconds: 1)]
        try Data(profile.json5.utf8).write(to: file)
        let (code, output) = try PayStormRunner.exec(["run", file.path, "--check"])
        #expect(code == 65, "\(output)")
        #expect(output.contains("\(file.path): name: expected a value for ${NAME}"), "\(output)")
        let (fixed, fixedOutput) = try PayStormRunner.exec(["run", file.path, "--check", "--set", "NAME=from-set"])
        #expect(fixed == 0, "\(fixedOutput)")
        #expect(fixedOutput.contains("profile from-set"))
        let (bad, badOutput) = try PayStormRunner.exec(["run", file.path, "--check", "--set", "NAME"])
        #expect(bad == 64, "\(badOutput)")
        #expect(badOutput.contains("--set expects NAME=VALUE"))
    }
}
