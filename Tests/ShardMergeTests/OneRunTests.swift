import Foundation
import Reporting
import RunControl
import Testing

@testable import ShardMerge

/// `paystorm merge` refuses shards that are not one run though they share the profile's name and seed: another
/// profile content, another `--rate-scale`, another schedule, or a summary that does not say what it ran.
struct OneRunTests {
    /// What every fixture shard of ``MergeTests`` ran.
    static let run = ShardRun(
        profileDigest: String(repeating: "a", count: 64),
        rateScale: 1,
        schedule: "constant 10/s for 10 s"
    )

    /// Shard 1 of 2 ran `other` (nil: its summary does not say); the merge's error.
    static func refusal(_ other: ShardRun?) throws -> RunError? {
        var second = MergeTests.shard(1, of: 2, micros: [1_000])
        second.shard?.run = other
        let (root, folders) = try MergeTests.folders([MergeTests.shard(0, of: 2, micros: [1_000]), second])
        defer { try? FileManager.default.removeItem(at: root) }
        do {
            _ = try PayStormMerge.execute(directories: folders, out: root.appendingPathComponent("m").path)
            return nil
        } catch {
            return error
        }
    }

    @Test(arguments: [
        (
            ShardRun(profileDigest: String(repeating: "b", count: 64), rateScale: 1, schedule: run.schedule),
            "ran another profile: digest bbbbbbbbbbbbbbbb vs aaaaaaaaaaaaaaaa in shard 0 ("
        ),
        (
            ShardRun(profileDigest: run.profileDigest, rateScale: 2, schedule: run.schedule),
            "ran at another --rate-scale: 2 vs 1 in shard 0 ("
        ),
        (
            ShardRun(profileDigest: run.profileDigest, rateScale: 1, schedule: "constant 10/s for 30 s"),
            "ran another schedule: constant 10/s for 30 s vs constant 10/s for 10 s in shard 0 ("
        ),
    ])
    func refusesShardsThatRanSomethingElseNamingWhat(other: ShardRun, message: String) throws {
        let error = try #require(try Self.refusal(other))
        guard case .badInput(let text) = error else {
            Issue.record("\(error)")
            return
        }
        #expect(text.hasPrefix("shard 1 (") && text.contains(message), "\(text)")
    }

    /// A shard whose summary does not record what it ran (an older PayStorm wrote it) cannot be told apart from
    /// another run's: refused, saying so.
    @Test func refusesAShardThatDoesNotSayWhatItRan() throws {
        let error = try #require(try Self.refusal(nil))
        guard case .badInput(let text) = error else {
            Issue.record("\(error)")
            return
        }
        #expect(text.contains("does not record the profile digest, rate scale and schedule"), "\(text)")
    }

    @Test func shardsOfOneRunStillMerge() throws {
        #expect(try Self.refusal(Self.run) == nil)
    }
}
