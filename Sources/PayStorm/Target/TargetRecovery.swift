import Checking
import Foundation
import RunControl
import Synchronization

/// What the target's kill and start commands wrote to `restart.log`: the witness of a restart that failed.
enum RestartLog {
    /// Lines of a witness, at most.
    static let witnessLines = 8
    /// Bytes read from the end of the log, at most: a start script's server may write its own log there too.
    static let tailBytes: UInt64 = 16 * 1024

    /// The log's size in bytes (0 when it does not exist yet).
    static func size(of path: String) -> UInt64 {
        ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber)?.uint64Value ?? 0
    }

    /// The last non-empty lines written from `offset` on.
    static func lines(of path: String, from offset: UInt64, last: Int = witnessLines) -> [String] {
        guard let file = FileHandle(forReadingAtPath: path) else { return [] }
        defer { try? file.close() }
        let start = max(offset, size(of: path) > tailBytes ? size(of: path) - tailBytes : 0)
        guard (try? file.seek(toOffset: start)) != nil, let data = try? file.readToEnd() else { return [] }
        let text = String(decoding: data, as: UTF8.self)
        return Array(text.split(whereSeparator: \.isNewline).map(String.init).filter { !$0.isEmpty }.suffix(last))
    }
}

extension RestartPlayer {
    /// Feeds target-recovers to the checker: each planned restart the run played (one the run's end cut short is
    /// not the target's doing), and, when `atEnd`, whether the target accepts connections now, after the final
    /// probes. A target that does not is tried for `patience` seconds before it fails.
    /// - Parameters:
    ///   - checker: the run's checker.
    ///   - atEnd: whether this run judges the target's end (not when interrupted, and only one shard of a split
    ///     run, the one that plays the restarts, so a merge counts the target once).
    ///   - patience: how long an unreachable target gets to answer, in seconds.
    func judgeRecovery(checker: Checker, atEnd: Bool, patience: Double = 3) {
        let played = records.withLock { $0 }
        for (index, record) in played.enumerated() where !record.cutShort {
            checker.restartPlayed(
                index: index,
                of: events.count,
                plannedAt: record.at,
                at: record.endedAt,
                failure: record.failure,
                log: record.log
            )
        }
        guard atEnd, !played.contains(where: \.cutShort) else { return }
        let deadline = Date().addingTimeInterval(patience)
        var failure = reachable()
        while failure != nil && Date() < deadline {
            // Interrupted meanwhile: the run did not finish, so its end is not judged.
            guard interruption.sleep(0.1) else { return }
            failure = reachable()
        }
        let log = failure != nil && !events.isEmpty ? RestartLog.lines(of: logPath, from: 0) : []
        checker.targetAtEnd(at: elapsed(), failure: failure, log: log)
    }
}
