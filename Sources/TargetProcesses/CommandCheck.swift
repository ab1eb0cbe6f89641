import Foundation
package import Profile
package import RunControl

/// Finds the program of each command a profile names, as `posix_spawnp` will (a path as it is, a bare name
/// through `PATH`), so that a misspelled or missing program is one line before anything is sent rather than
/// failed probes, provisioning or restarts after the traffic.
package enum CommandCheck {
    /// - Throws: ``RunError/noInput(_:)`` naming the file, the JSON path and the program.
    package static func checkPrograms(of profile: Profile, file: String) throws(RunError) {
        for (path, arguments) in profile.commands where !isRunnable(arguments[0]) {
            let program = arguments[0]
            let reason = program.contains("/") ? "no executable file there" : "not found in PATH"
            throw .noInput("\(file): \(path): cannot run '\(program)': \(reason)")
        }
    }

    /// Whether `program` names an executable file, directly (with a `/`) or in a `PATH` folder.
    static func isRunnable(
        _ program: String,
        searchPath: String = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
    ) -> Bool {
        guard !program.contains("/") else { return isExecutableFile(program) }
        return searchPath.split(separator: ":", omittingEmptySubsequences: false).contains { folder in
            isExecutableFile((folder.isEmpty ? "." : String(folder)) + "/" + program)
        }
    }

    /// A regular file (after links) with an execute bit that this process may use. The bits are read too:
    /// for root, `access(X_OK)` (and so `isExecutableFile`) is true of any file.
    private static func isExecutableFile(_ path: String) -> Bool {
        let resolved = URL(fileURLWithPath: path).resolvingSymlinksInPath().path
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: resolved),
            attributes[.type] as? FileAttributeType == .typeRegular,
            let permissions = attributes[.posixPermissions] as? Int, permissions & 0o111 != 0
        else { return false }
        return FileManager.default.isExecutableFile(atPath: resolved)
    }
}
