import Foundation
import Reporting
import RunControl

extension PayStormMerge {
    /// Refuses shards that did not run the same thing as the first: another profile content (its digest),
    /// another `--rate-scale` or another schedule; and shards whose summary does not say, as it cannot be told.
    /// - Throws: `RunError.badInput` naming the shard, its folder and what differs.
    static func checkOneRun(_ shards: [ShardReport]) throws(RunError) {
        guard let first = shards.first else { return }
        let reference = try run(of: first)
        for shard in shards.dropFirst() {
            let run = try run(of: shard)
            let differs: String? =
                if run.profileDigest != reference.profileDigest {
                    "ran another profile: digest \(run.profileDigest.prefix(16)) vs \(reference.profileDigest.prefix(16))"
                } else if run.rateScale != reference.rateScale {
                    "ran at another --rate-scale: \(number(run.rateScale)) vs \(number(reference.rateScale))"
                } else if run.schedule != reference.schedule {
                    "ran another schedule: \(run.schedule) vs \(reference.schedule)"
                } else {
                    nil
                }
            if let differs {
                throw .badInput(
                    "\(name(shard)) \(differs) in \(name(first)); only shards of one run merge"
                )
            }
        }
    }

    /// What the shard ran, or the refusal of a summary that does not record it.
    private static func run(of shard: ShardReport) throws(RunError) -> ShardRun {
        guard let run = shard.info.run else {
            throw .badInput(
                "\(name(shard)): its summary.json does not record the profile digest, rate scale and schedule "
                    + "(an older PayStorm wrote it), so merge cannot tell that the shards are one run; run the "
                    + "shards again with this PayStorm"
            )
        }
        return run
    }

    private static func name(_ shard: ShardReport) -> String { "shard \(shard.info.index) (\(shard.directory))" }

    private static func number(_ value: Double) -> String { String(format: "%g", value) }
}
