internal import Foundation

/// The one seeded generator of a run: SplitMix64 (Steele, Lea and Flood), small, fast and stable across
/// platforms and Swift versions. Every random choice of the world, of the chaos and of Poisson arrivals goes
/// through one of these (it lives in Primitives, the leaf module they all share),
/// using only the helpers below (never the standard library's `random(in:using:)`, whose algorithm may change),
/// so the same seed gives the same run.
public struct SplitMix64: RandomNumberGenerator, Sendable, Hashable {
    /// The current state.
    public private(set) var state: UInt64

    /// Creates a generator from a seed.
    public init(seed: UInt64) { state = seed }

    /// The next 64 random bits.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        return Self.mix(state)
    }

    /// The SplitMix64 finalizer: a good 64-bit hash, used to derive independent values (tokens, sub-seeds).
    public static func mix(_ value: UInt64) -> UInt64 {
        var z = value
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A double in [0, 1) with 53 random bits.
    public mutating func unit() -> Double { Double(next() >> 11) * 0x1.0p-53 }

    /// True with probability `p`. Draws nothing when `p` is 0 or 1, so turning a fault off does not shift the
    /// other choices of the run.
    public mutating func chance(_ p: Double) -> Bool {
        if p <= 0 { return false }
        if p >= 1 { return true }
        return unit() < p
    }

    /// An integer in `0..<bound` (bound > 0), by Lemire's multiply-shift (bias below 2⁻³² for our bounds).
    public mutating func below(_ bound: Int) -> Int {
        precondition(bound > 0, "below(0)")
        return Int((UInt64(UInt32(truncatingIfNeeded: next() >> 32)) &* UInt64(bound)) >> 32)
    }

    /// A double in `[low, high)`.
    public mutating func between(_ low: Double, _ high: Double) -> Double { low + (high - low) * unit() }

    /// An index chosen with the given weights (at least one must be positive).
    public mutating func weighted(_ weights: [Double]) -> Int {
        let total = weights.reduce(0, +)
        var x = unit() * total
        for (index, weight) in weights.enumerated() where weight > 0 {
            if x < weight { return index }
            x -= weight
        }
        return weights.lastIndex { $0 > 0 } ?? 0
    }

    /// A random version-4 UUID string (lowercase is what Apple sends; we use uppercase like `UUID().uuidString`).
    public mutating func uuid() -> String { Self.uuid(next(), next()) }

    /// Formats two 64-bit values as a version-4, variant-1 UUID string.
    public static func uuid(_ high: UInt64, _ low: UInt64) -> String {
        let hi = (high & 0xFFFF_FFFF_FFFF_0FFF) | 0x0000_0000_0000_4000
        let lo = (low & 0x3FFF_FFFF_FFFF_FFFF) | 0x8000_0000_0000_0000
        func hex(_ value: UInt64, _ digits: Int) -> String {
            let text = String(value, radix: 16, uppercase: true)
            return String(repeating: "0", count: max(0, digits - text.count)) + text
        }
        return "\(hex(hi >> 32, 8))-\(hex((hi >> 16) & 0xFFFF, 4))-\(hex(hi & 0xFFFF, 4))-"
            + "\(hex(lo >> 48, 4))-\(hex(lo & 0xFFFF_FFFF_FFFF, 12))"
    }
}

extension SplitMix64 {
    /// An exponential variate with mean 1 (the gap between two points of a unit-rate Poisson process).
    public mutating func exponential() -> Double {
        // 53 random bits in (0, 1]; never 0, so the logarithm is finite.
        let unit = (Double(next() >> 11) + 1) / 9_007_199_254_740_992
        return -log(unit)
    }
}
