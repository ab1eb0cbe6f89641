import Chaos
import Foundation
import Profile
import Simulation
import Testing

@testable import PayStorm

/// `--shard INDEX/COUNT`: parsing, and the partition of the world's deliveries by account.
struct ShardTests {
    @Test(arguments: [("0/1", 0, 1), ("0/3", 0, 3), ("2/3", 2, 3), ("9/10", 9, 10)])
    func parsesAZeroBasedIndexAndACount(text: String, index: Int, count: Int) throws {
        let shard = try #require(Shard(text))
        #expect(shard.index == index && shard.count == count)
        #expect(shard.label == "shard\(index)of\(count)")
    }

    @Test(arguments: ["3/3", "-1/3", "1/0", "1", "1/3/4", "a/3", "1/b", "", "/3", "1/"])
    func rejectsAMalformedOrOutOfRangeShard(text: String) {
        #expect(Shard(text) == nil)
    }

    @Test func putsEveryAccountInExactlyOneShardWithItsFamilyPartner() {
        let shards = (0..<3).map { Shard(index: $0, count: 3)! }
        for account in 0..<100 {
            #expect(shards.filter { $0.contains(account: account) }.count == 1, "account \(account)")
            // Accounts 2k and 2k+1 are Family Sharing partners: a shared purchase is checked where it is sent.
            let partner = account ^ 1
            #expect(shards.allSatisfy { $0.contains(account: account) == $0.contains(account: partner) })
        }
    }

    @Test func shardsSplitTheWorldsDeliveriesWithoutLossOrOverlap() throws {
        let profile = try Profile.decode(Data(DeliveryBodiesTests.profile.utf8), file: "payloads.json5")
        func deliveries(_ shard: Shard?) -> [PlannedDelivery] {
            let chaos = ChaosStream(World(profile: profile, startMillis: 1_700_000_000_000), profile: profile)
            guard let shard else { return Array(chaos) }
            return Array(IteratorSequence(ShardDeliveries(base: chaos, shard: shard)))
        }
        let whole = deliveries(nil)
        let parts = (0..<3).map { deliveries(Shard(index: $0, count: 3)!) }
        #expect(whole.count > 100)
        #expect(parts.allSatisfy { !$0.isEmpty })
        // The same deliveries, in the same order within each shard: the seed plays the same whatever the split.
        #expect(parts.map(\.count).reduce(0, +) == whole.count)
        for (index, part) in parts.enumerated() {
            #expect(part.map(\.id) == whole.filter { ($0.action.account / 2) % 3 == index }.map(\.id))
        }
        let accounts = parts.map { Set($0.map(\.action.appAccountToken)) }
        #expect(accounts[0].isDisjoint(with: accounts[1]) && accounts[1].isDisjoint(with: accounts[2]))
        #expect(accounts[0].isDisjoint(with: accounts[2]))
        #expect(accounts.reduce(Set()) { $0.union($1) } == Set(whole.map(\.action.appAccountToken)))
    }

    /// A replay of one account signs only that account's deliveries, in the order the whole world has them.
    @Test func replayOfOneAccountMintsOnlyItsDeliveries() throws {
        let profile = try Profile.decode(Data(DeliveryBodiesTests.profile.utf8), file: "payloads.json5")
        let whole = Array(ChaosStream(World(profile: profile, startMillis: 1_700_000_000_000), profile: profile))
        let token = try #require(whole.first?.action.appAccountToken)
        let chaos = ChaosStream(World(profile: profile, startMillis: 1_700_000_000_000), profile: profile)
        let only = Array(IteratorSequence(ShardDeliveries(base: chaos, shard: nil, account: token)))
        #expect(!only.isEmpty)
        #expect(only.map(\.id) == whole.filter { $0.action.appAccountToken == token }.map(\.id))
    }

    @Test func aShardProvisionsOnlyItsOwnAccounts() throws {
        let profile = try Profile.decode(Data(DeliveryBodiesTests.profile.utf8), file: "payloads.json5")
        let all = TargetSetup.accountsToProvision(profile: profile, only: nil, shard: nil)
        #expect(all.count == profile.population.accounts)
        let parts = (0..<3).map {
            TargetSetup.accountsToProvision(profile: profile, only: nil, shard: Shard(index: $0, count: 3))
        }
        #expect(parts.allSatisfy { !$0.isEmpty && $0.count < all.count })
        #expect(parts.flatMap { $0 }.sorted() == all.sorted())
        #expect(TargetSetup.accountsToProvision(profile: profile, only: all[5], shard: nil) == [all[5]])
    }
}
