// A run's working tables (deliveries in flight, follow-ups waiting) swell while the target stalls and empty
// again once it answers. Swift's collections keep their peak storage after removals, so over a soak every
// stall would leave its high-water mark resident for the rest of the run.

extension Dictionary {
    /// Gives back the storage of a past burst: once the table holds under a quarter of what it reserves (and
    /// reserves more than `floor` entries), it moves into a table sized for twice its count. The moves cost
    /// O(count) at most once per halving, so their amortized cost per removal is constant.
    mutating func releaseBurstStorage(floor: Int = 256) {
        guard capacity > floor, count * 4 < capacity else { return }
        var fresh = Self(minimumCapacity: count * 2)
        for (key, value) in self { fresh[key] = value }
        self = fresh
    }
}
