import Foundation
import Testing

@testable import TargetProcesses

/// A profile's commands are found before anything is sent, as `posix_spawnp` finds them.
struct CommandCheckTests {
    @Test(arguments: [
        ("sh", true), ("/bin/sh", true), ("paystorm-no-such-program", false), ("/nonexistent/probe", false),
        ("/tmp", false),
    ])
    func findsAProgramAsSpawnWould(program: String, runnable: Bool) {
        #expect(CommandCheck.isRunnable(program, searchPath: "/usr/bin:/bin") == runnable)
    }

    @Test func aFileWithoutAnExecuteBitIsNoProgram() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("not-a-program-\(UUID())")
        try Data("#!/bin/sh\n".utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: file.path)
        #expect(!CommandCheck.isRunnable(file.path))
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: file.path)
        #expect(CommandCheck.isRunnable(file.path))
    }

    @Test func aBareNameIsLookedUpInTheSearchPathOnly() {
        #expect(!CommandCheck.isRunnable("sh", searchPath: "/nonexistent"))
    }
}
