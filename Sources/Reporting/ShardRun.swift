/// What a shard ran beyond its profile's name, seed and shard count, so that `paystorm merge` refuses shards of
/// different runs: the profile's content as it ran, the rate scale and the schedule.
public struct ShardRun: Codable, Sendable, Hashable {
    /// SHA-256 (hex) of the profile as it ran: its `${NAME}` variables substituted, written as compact JSON with
    /// sorted keys (comments and spacing do not count).
    public var profileDigest: String
    /// The `--rate-scale` the shard ran with (1 without one).
    public var rateScale: Double
    /// The schedule the shard ran (after `--rate`, `--duration` and `--rate-scale`), such as
    /// `constant 50/s for 60 s`, segments separated by `, `.
    public var schedule: String

    /// Creates a record.
    public init(profileDigest: String, rateScale: Double, schedule: String) {
        self.profileDigest = profileDigest
        self.rateScale = rateScale
        self.schedule = schedule
    }
}
