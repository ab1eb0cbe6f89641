public import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The folder one run writes into: `Reports/<UTC time>-<profile>-<seed>/`, plus a
/// `latest` link beside it that names the newest run that started.
///
/// The folder is made exclusively: two runs of the same profile and seed started in the same second
/// get `…-42` and `…-42-2`, never one shared folder (an embedded ledger keeps its database in it).
/// Creating the folder does not move `latest`; ``linkAsLatest()`` does, once the run can start.
public struct ReportFolder: Sendable {
    /// The run's own folder.
    public let url: URL
    private let root: URL

    /// Creates a new run folder under `root`, with a `-2`, `-3`… suffix when the name is taken.
    /// - Parameters:
    ///   - root: the reports directory, for example `Reports`.
    ///   - profile: the profile name, used in the folder name.
    ///   - seed: the run's seed, used in the folder name.
    ///   - date: the run's start time.
    ///   - label: appended to the name when set, such as `shard1of3` for one shard of a split run.
    /// - Throws: `ReportError.cannotWrite` naming the path when the folder cannot be made.
    public init(root: URL, profile: String, seed: UInt64, date: Date = Date(), label: String? = nil) throws(ReportError)
    {
        let stamp = Self.stamp(date)
        let safeProfile = profile.map { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" ? $0 : "_" }
        let base = "\(stamp)-\(String(safeProfile))-\(seed)" + (label.map { "-" + $0 } ?? "")
        do {
            try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        } catch {
            throw .cannotWrite(root.path, error.localizedDescription)
        }
        self.root = root
        var attempt = 1
        while true {
            let candidate = root.appendingPathComponent(attempt == 1 ? base : "\(base)-\(attempt)", isDirectory: true)
            // mkdir(2) fails with EEXIST when another run holds the name: the one atomic claim on a folder.
            if mkdir(candidate.path, 0o755) == 0 {
                url = candidate
                return
            }
            let code = errno
            guard code == EEXIST, attempt < 1000 else {
                throw .cannotWrite(candidate.path, String(cString: strerror(code)))
            }
            attempt += 1
        }
    }

    /// Uses `url` itself as the report folder (`paystorm merge --out DIR`), creating it when missing; the
    /// files already in it are replaced as they are written.
    /// - Throws: `ReportError.cannotWrite` naming the path when the folder cannot be made.
    public init(exactly url: URL) throws(ReportError) {
        do {
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        } catch {
            throw .cannotWrite(url.path, error.localizedDescription)
        }
        self.url = url
        root = url.deletingLastPathComponent()
    }

    /// Points `root/latest` at this folder (a relative link, so the reports folder stays movable).
    /// Call it once the run can start, so a run that never sends leaves `latest` where it was.
    ///
    /// A `latest` that is not a link (someone's file or folder of that name) is left as it is: a run never
    /// deletes what it did not make, and it does not fail over a convenience link either.
    /// - Returns: nil once `latest` names this folder, else one line saying why it does not (for the console
    ///   and the report's notes), so that a script reading `latest` is not silently handed an older run.
    @discardableResult
    public func linkAsLatest() -> String? {
        let latest = root.appendingPathComponent("latest")
        var existing = stat()
        if lstat(latest.path, &existing) == 0 && existing.st_mode & S_IFMT != S_IFLNK {
            let what = existing.st_mode & S_IFMT == S_IFDIR ? "a directory" : "a file"
            return "\(latest.path) is \(what), not PayStorm's link: left as it is and not updated to this run "
                + "(\(url.lastPathComponent)); remove it to have latest follow the newest run"
        }
        // Replace the link atomically: a link under a temporary name, renamed over the old one.
        let temporary = root.appendingPathComponent(".latest-\(getpid())-\(url.lastPathComponent)")
        try? FileManager.default.removeItem(at: temporary)
        var failure: String?
        do {
            try FileManager.default.createSymbolicLink(
                atPath: temporary.path,
                withDestinationPath: url.lastPathComponent
            )
            if rename(temporary.path, latest.path) != 0 {
                failure = String(cString: strerror(errno))
                try? FileManager.default.removeItem(at: temporary)
            }
        } catch {
            failure = error.localizedDescription
        }
        return failure.map { "\(latest.path) was not updated to this run (\(url.lastPathComponent)): \($0)" }
    }

    /// Removes the folder and everything in it: for a run that failed before it sent anything.
    public func remove() {
        try? FileManager.default.removeItem(at: url)
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
