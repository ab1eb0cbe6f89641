/// A high-dynamic-range histogram of non-negative integer values (PayStorm records microseconds).
///
/// The layout is HdrHistogram's (see anchors §D.1), so that counts are interchangeable with the
/// Java, C and Python libraries through ``HistogramCodec``: with the defaults (1 µs to 1 h at
/// 3 significant digits) it holds 23,552 counters, recording is an index computation with no
/// allocation, and ``add(_:)`` of two histograms with the same layout is exact.
///
/// ```swift
/// var latency = Histogram()
/// latency.record(1_250)                  // 1.25 ms, in µs
/// let p99 = latency.value(atPercentile: 99)
/// ```
public struct Histogram: Sendable, Equatable {
    /// The smallest value told apart from zero (at least 1).
    public let lowestDiscernibleValue: Int64
    /// The largest value recorded without clamping.
    public let highestTrackableValue: Int64
    /// Decimal digits of precision kept for every value (0...5).
    public let significantDigits: Int

    let unitMagnitude: Int
    let subBucketHalfCountMagnitude: Int
    let subBucketCount: Int
    let subBucketHalfCount: Int
    let subBucketMask: Int64
    let leadingZeroCountBase: Int
    let bucketCount: Int

    /// The counters, one per equivalent-value range.
    public private(set) var counts: [Int64]
    /// The number of values recorded.
    public private(set) var totalCount: Int64 = 0
    /// The largest value recorded, exactly (0 when empty).
    public private(set) var maxValue: Int64 = 0
    /// The smallest value recorded, exactly (`Int64.max` when empty).
    public private(set) var minValue: Int64 = .max
    /// Values above ``highestTrackableValue`` that were recorded as that value instead.
    public private(set) var clampedCount: Int64 = 0
    /// Sum of recorded values (for the mean); exact below 2^63.
    public private(set) var sum: Double = 0

    /// Creates an empty histogram.
    /// - Parameters:
    ///   - lowest: the smallest value told apart from zero (≥ 1).
    ///   - highest: the largest trackable value (≥ 2 × `lowest`).
    ///   - significantDigits: decimal digits of precision, 0...5.
    public init(lowest: Int64 = 1, highest: Int64 = 3_600_000_000, significantDigits: Int = 3) {
        precondition(lowest >= 1, "lowest must be at least 1")
        precondition(highest >= 2 * lowest, "highest must be at least twice lowest")
        precondition((0...5).contains(significantDigits), "significant digits must be 0...5")
        lowestDiscernibleValue = lowest
        highestTrackableValue = highest
        self.significantDigits = significantDigits
        var largestSingleUnit: Int64 = 2
        for _ in 0..<significantDigits { largestSingleUnit *= 10 }
        unitMagnitude = 63 - lowest.leadingZeroBitCount
        let subBucketCountMagnitude = Self.ceilLog2(largestSingleUnit)
        subBucketHalfCountMagnitude = max(subBucketCountMagnitude, 1) - 1
        subBucketCount = 1 << (subBucketHalfCountMagnitude + 1)
        subBucketHalfCount = subBucketCount / 2
        subBucketMask = Int64(subBucketCount - 1) << unitMagnitude
        leadingZeroCountBase = 64 - unitMagnitude - subBucketHalfCountMagnitude - 1
        var smallestUntrackable = Int64(subBucketCount) << unitMagnitude
        var buckets = 1
        while smallestUntrackable <= highest {
            if smallestUntrackable > Int64.max / 2 {
                buckets += 1
                break
            }
            smallestUntrackable <<= 1
            buckets += 1
        }
        bucketCount = buckets
        counts = [Int64](repeating: 0, count: (buckets + 1) * subBucketHalfCount)
    }

    private static func ceilLog2(_ value: Int64) -> Int {
        var magnitude = 0
        while (Int64(1) << magnitude) < value { magnitude += 1 }
        return magnitude
    }

    /// Whether nothing was recorded.
    public var isEmpty: Bool { totalCount == 0 }

    /// The number of counters (fixed by the layout).
    public var countsLength: Int { counts.count }

    // MARK: Index arithmetic

    @inline(__always)
    func bucketIndex(_ value: Int64) -> Int {
        leadingZeroCountBase - (value | subBucketMask).leadingZeroBitCount
    }

    @inline(__always)
    func countsIndex(_ value: Int64) -> Int {
        let bucket = bucketIndex(value)
        let subBucket = Int(value >> Int64(bucket + unitMagnitude))
        return ((bucket + 1) << subBucketHalfCountMagnitude) + (subBucket - subBucketHalfCount)
    }

    /// The smallest value that falls into counter `index`.
    func valueFromIndex(_ index: Int) -> Int64 {
        var bucket = (index >> subBucketHalfCountMagnitude) - 1
        var subBucket = (index & (subBucketHalfCount - 1)) + subBucketHalfCount
        if bucket < 0 {
            subBucket -= subBucketHalfCount
            bucket = 0
        }
        return Int64(subBucket) << Int64(bucket + unitMagnitude)
    }

    /// The width of the range of values that count as equal to `value`.
    public func sizeOfEquivalentRange(_ value: Int64) -> Int64 {
        let bucket = bucketIndex(value)
        let subBucket = Int(value >> Int64(bucket + unitMagnitude))
        let adjusted = subBucket >= subBucketCount ? bucket + 1 : bucket
        return Int64(1) << Int64(unitMagnitude + adjusted)
    }

    /// The smallest value that counts as equal to `value`.
    public func lowestEquivalent(_ value: Int64) -> Int64 {
        let bucket = bucketIndex(value)
        let subBucket = value >> Int64(bucket + unitMagnitude)
        return subBucket << Int64(bucket + unitMagnitude)
    }

    /// The largest value that counts as equal to `value`.
    public func highestEquivalent(_ value: Int64) -> Int64 {
        lowestEquivalent(value) + sizeOfEquivalentRange(value) - 1
    }

    // MARK: Recording

    /// Records one value (negative values count as 0, values above the range as the highest).
    /// Constant time, no allocation.
    @inline(__always)
    public mutating func record(_ value: Int64) {
        record(value, count: 1)
    }

    /// Records `count` occurrences of one value.
    public mutating func record(_ value: Int64, count: Int64) {
        guard count > 0 else { return }
        var value = max(value, 0)
        if value > highestTrackableValue {
            value = highestTrackableValue
            clampedCount &+= count
        }
        counts[countsIndex(value)] &+= count
        totalCount &+= count
        if value > maxValue { maxValue = value }
        if value < minValue { minValue = value }
        sum += Double(value) * Double(count)
    }

    /// Forgets every value, keeping the layout (used for interval histograms).
    public mutating func reset() {
        counts.withUnsafeMutableBufferPointer { $0.update(repeating: 0) }
        totalCount = 0
        maxValue = 0
        minValue = .max
        clampedCount = 0
        sum = 0
    }

    /// Whether `other` has the same counter layout, so that ``add(_:)`` is exact.
    public func hasSameLayout(as other: Histogram) -> Bool {
        unitMagnitude == other.unitMagnitude && subBucketCount == other.subBucketCount
            && counts.count == other.counts.count
    }

    /// Adds every count of `other` into this histogram.
    ///
    /// Exact (index by index) when the layouts match; otherwise each count is re-recorded at
    /// its range's lowest value, so within the precision. Associative and commutative.
    public mutating func add(_ other: Histogram) {
        guard !other.isEmpty else { return }
        if hasSameLayout(as: other) {
            for index in other.counts.indices where other.counts[index] != 0 {
                counts[index] &+= other.counts[index]
            }
            totalCount &+= other.totalCount
            maxValue = max(maxValue, other.maxValue)
            minValue = min(minValue, other.minValue)
            clampedCount &+= other.clampedCount
            sum += other.sum
        } else {
            for index in other.counts.indices where other.counts[index] != 0 {
                record(other.valueFromIndex(index), count: other.counts[index])
            }
        }
    }

    // MARK: Queries

    /// The value at or below which `percentile` percent of the recorded values fall.
    ///
    /// Reported as the highest equivalent value of its range (like HdrHistogram), but never
    /// above the recorded maximum and never below the recorded minimum. 0 when empty.
    /// - Parameter percentile: 0...100 (clamped).
    public func value(atPercentile percentile: Double) -> Int64 {
        guard totalCount > 0 else { return 0 }
        let requested = min(max(percentile, 0), 100)
        let target = max(Int64((requested / 100 * Double(totalCount)).rounded()), 1)
        var running: Int64 = 0
        for index in counts.indices where counts[index] != 0 {
            running += counts[index]
            if running >= target {
                let base = valueFromIndex(index)
                let reported = requested == 0 ? lowestEquivalent(base) : highestEquivalent(base)
                return min(max(reported, minValue), maxValue)
            }
        }
        return maxValue
    }

    /// The mean of recorded values (0 when empty).
    public var mean: Double { totalCount == 0 ? 0 : sum / Double(totalCount) }

    /// The count recorded in the range equivalent to `value`.
    public func count(at value: Int64) -> Int64 {
        counts[countsIndex(min(max(value, 0), highestTrackableValue))]
    }

    /// How many recorded values are at or below each of `bounds` (ascending), for cumulative buckets such as
    /// OpenMetrics' `le`: one pass over the counters. A value counts as below a bound when the range of values
    /// equivalent to it starts at or below the bound, the histogram's own rounding.
    public func cumulativeCounts(atOrBelow bounds: [Int64]) -> [Int64] {
        var result: [Int64] = []
        result.reserveCapacity(bounds.count)
        var index = 0
        var running: Int64 = 0
        let used = usedLength
        for bound in bounds {
            let last = bound < 0 ? -1 : countsIndex(min(bound, highestTrackableValue))
            while index <= last && index < used {
                running += counts[index]
                index += 1
            }
            result.append(running)
        }
        return result
    }

    /// The index of the last non-zero counter plus one (0 when empty).
    var usedLength: Int {
        guard totalCount > 0 else { return 0 }
        var last = counts.count - 1
        while last > 0 && counts[last] == 0 { last -= 1 }
        return last + 1
    }

    /// Builds a histogram from decoded counters (used by ``HistogramCodec``).
    /// - Returns: nil when a count is negative.
    init?(
        lowest: Int64,
        highest: Int64,
        significantDigits: Int,
        decodedCounts: [Int64]
    ) {
        self.init(lowest: lowest, highest: highest, significantDigits: significantDigits)
        guard decodedCounts.count <= counts.count else { return nil }
        var minSeen = Int64.max
        for (index, count) in decodedCounts.enumerated() where count != 0 {
            guard count > 0 else { return nil }
            counts[index] = count
            totalCount += count
            let value = valueFromIndex(index)
            minSeen = min(minSeen, value)
            maxValue = max(maxValue, highestEquivalent(value))
            sum += Double(value) * Double(count)
        }
        minValue = minSeen
        if totalCount > 0 { maxValue = min(maxValue, highestTrackableValue) }
    }
}
