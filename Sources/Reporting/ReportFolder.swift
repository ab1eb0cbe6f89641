public import Foundation

/// The folder one run writes into: `Reports/<UTC time>-<profile>-<seed>/`, plus a
/// `latest` link beside it that always names the newest run.
public struct ReportFolder: Sendable {
    /// The run's own folder.
    public let url: URL

    /// Creates the run folder under `root` and points `root/latest` at it.
    /// - Parameters:
    ///   - root: the reports directory, for example `Reports`.
    ///   - profile: the profile name, used in the folder name.
    ///   - seed: the run's seed, used in the folder name.
    ///   - date: the run's start time.
    /// - Throws: `ReportError.cannotWrite` naming the path when the folder cannot be made.
    public init(root: URL, profile: String, seed: UInt64, date: Date = Date()) throws(ReportError) {
        let stamp = Self.stamp(date)
        let safeProfile = profile.map { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" ? $0 : "_" }
        url = root.appendingPathComponent("\(stamp)-\(String(safeProfile))-\(seed)", isDirectory: true)
        do {
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        } catch {
            throw .cannotWrite(url.path, error.localizedDescription)
        }
        let latest = root.appendingPathComponent("latest")
        try? FileManager.default.removeItem(at: latest)
        // A relative link keeps the reports folder movable.
        try? FileManager.default.createSymbolicLink(atPath: latest.path, withDestinationPath: url.lastPathComponent)
    }

    /// The path of one file in the run folder.
    public func file(_ name: String) -> URL { url.appendingPathComponent(name) }

    /// `20261130T021500Z`: sortable and safe in file names.
    static func stamp(_ date: Date) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let c = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        return String(
            format: "%04d%02d%02dT%02d%02d%02dZ",
            c.year ?? 0,
            c.month ?? 0,
            c.day ?? 0,
            c.hour ?? 0,
            c.minute ?? 0,
            c.second ?? 0
        )
    }
}

/// A report could not be written.
public enum ReportError: Error, CustomStringConvertible, Sendable {
    /// A file or folder could not be written: the path and the system's reason.
    case cannotWrite(String, String)

    public var description: String {
        switch self {
        case .cannotWrite(let path, let reason): "cannot write \(path): \(reason)"
        }
    }
}
