import Chaos
import Simulation

/// One shard of a run split across processes or machines: `--shard INDEX/COUNT`, with a 0-based index.
///
/// The index is 0-based so that a Kubernetes Indexed Job passes `--shard $(JOB_COMPLETION_INDEX)/N`
/// unchanged. Accounts are partitioned by Family Sharing pair (accounts `2k` and `2k+1` share a
/// family, see `World.familyPartner`): pair `k` belongs to shard `k % COUNT`, so a purchase shared
/// with a partner is checked by the shard that sent it, and every account is in exactly one shard.
///
/// Every shard generates the whole world from the seed and sends only its own accounts' deliveries,
/// so an account's actions, faults and randomness are the same whatever the sharding (and `paystorm
/// replay --account` reproduces it), and the shards together send exactly what one unsharded run
/// sends: each shard carries its accounts' share of the profile's rate.
public struct Shard: Sendable, Hashable {
    /// This shard's index, from 0 to `count - 1`.
    public var index: Int
    /// How many shards the run is split into.
    public var count: Int

    /// Creates a shard; nil unless `0 <= index < count`.
    public init?(index: Int, count: Int) {
        guard count >= 1, (0..<count).contains(index) else { return nil }
        self.index = index
        self.count = count
    }

    /// Parses `INDEX/COUNT` (`0/3`, `1/3`, `2/3`); nil when malformed or out of range.
    public init?(_ text: String) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let index = Int(parts[0]), let count = Int(parts[1]) else { return nil }
        self.init(index: index, count: count)
    }

    /// Whether the account with this index (in the world's population) belongs to this shard.
    public func contains(account: Int) -> Bool { (account / 2) % count == index }

    /// The suffix of the shard's report folder, `shard1of3`.
    public var label: String { "shard\(index)of\(count)" }
}

/// The deliveries of one shard's accounts (or of the one account a replay sends), from the whole world's
/// stream: the filter sits before minting, so a run signs only what it may send.
struct ShardDeliveries<Base: IteratorProtocol<PlannedDelivery>>: IteratorProtocol {
    var base: Base
    let shard: Shard?
    /// The `appAccountToken` of the only account sent, if any.
    var account: String? = nil

    mutating func next() -> PlannedDelivery? {
        while let delivery = base.next() {
            if let shard, !shard.contains(account: delivery.action.account) { continue }
            if let account, delivery.action.appAccountToken != account { continue }
            return delivery
        }
        return nil
    }
}
