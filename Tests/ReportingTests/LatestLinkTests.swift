import Foundation
import Testing

@testable import Reporting

/// `Reports/latest` follows the newest run while it is PayStorm's link, and is never deleted or replaced when
/// it is someone's file or folder: the run says so instead.
struct LatestLinkTests {
    private static func root() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("paystorm-latest-\(UUID())")
    }

    @Test func aFileNamedLatestIsLeftAndNamed() throws {
        let root = Self.root()
        defer { try? FileManager.default.removeItem(at: root) }
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        let latest = root.appendingPathComponent("latest")
        try Data("someone's notes\n".utf8).write(to: latest)
        let folder = try ReportFolder(root: root, profile: "smoke", seed: 1)
        let note = try #require(folder.linkAsLatest())
        #expect(note.contains("\(latest.path) is a file, not PayStorm's link: left as it is and not updated"))
        #expect(note.contains(folder.url.lastPathComponent))
        #expect(try String(contentsOf: latest, encoding: .utf8) == "someone's notes\n")
    }

    @Test func aDirectoryNamedLatestIsLeftAndNamed() throws {
        let root = Self.root()
        defer { try? FileManager.default.removeItem(at: root) }
        let latest = root.appendingPathComponent("latest")
        try FileManager.default.createDirectory(at: latest, withIntermediateDirectories: true)
        try Data("{}".utf8).write(to: latest.appendingPathComponent("summary.json"))
        let folder = try ReportFolder(root: root, profile: "smoke", seed: 1)
        let note = try #require(folder.linkAsLatest())
        #expect(note.contains("is a directory, not PayStorm's link"))
        #expect(FileManager.default.fileExists(atPath: latest.appendingPathComponent("summary.json").path))
    }

    @Test func theLinkFollowsEachRun() throws {
        let root = Self.root()
        defer { try? FileManager.default.removeItem(at: root) }
        let first = try ReportFolder(root: root, profile: "smoke", seed: 1)
        #expect(first.linkAsLatest() == nil)
        let second = try ReportFolder(root: root, profile: "smoke", seed: 2)
        #expect(second.linkAsLatest() == nil)
        let latest = root.appendingPathComponent("latest").path
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: latest) == second.url.lastPathComponent)
    }
}
