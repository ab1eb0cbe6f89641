// The history kept per transaction for witnesses: a few 16-byte entries, the decisive ones (the purchase, the
// first and latest acknowledgments, rejections, the refund) kept apart from the recent ones.

/// One line of a transaction's history in 16 bytes: the sentence is interned in the checker's phrase table,
/// and the delivery, the phrase and the trail's part share one word (44, 17 and 3 bits).
struct LogEntry: Sendable {
    /// Most distinct phrases interned; later ones share a placeholder (17 bits hold the index).
    static let phraseLimit: UInt32 = 100_000
    private static let placeholder: UInt64 = 0x1_FFFF
    /// The largest delivery number an entry holds (2^44 - 1: years of deliveries at any rate PayStorm sends;
    /// retries and redeliveries are numbered below it too, so a witness cites each by its number in the history).
    private static let maxDelivery: UInt64 = 1 << 44 - 1

    var at: Double
    private var packed: UInt64

    init(at: Double, delivery: UInt64, phrase: UInt32) {
        self.at = at
        let phrase = phrase < Self.phraseLimit ? UInt64(phrase) : Self.placeholder
        packed = min(delivery, Self.maxDelivery) << 20 | phrase << 3
    }

    var delivery: UInt64 { packed >> 20 }

    /// The phrase's index, or `UInt32.max` for the placeholder.
    var phrase: UInt32 {
        let phrase = packed >> 3 & Self.placeholder
        return phrase == Self.placeholder ? .max : UInt32(phrase)
    }

    /// The trail's part it is kept under (a `Part` raw value, or 0), stored as the index of its bit.
    var part: UInt8 {
        get {
            let index = packed & 7
            return index == 0 ? 0 : 1 << (index - 1)
        }
        set {
            let index = newValue == 0 ? 0 : UInt64(newValue.trailingZeroBitCount + 1)
            packed = packed & ~7 | index & 7
        }
    }
}

/// Which parts of a transaction's trail a witness cites.
struct Part: OptionSet, Sendable {
    let rawValue: UInt8
    /// The first dispatch of the transaction (its purchase).
    static let purchase = Part(rawValue: 1)
    /// Acknowledged deliveries: the first two (a double grant's two copies) and the latest (a replay).
    static let acks = Part(rawValue: 2)
    /// Rejected deliveries: the first and the latest.
    static let rejections = Part(rawValue: 4)
    /// The refund's dispatch and answers.
    static let refund = Part(rawValue: 8)
    /// The latest other entries.
    static let recent = Part(rawValue: 16)
    static let all: Part = [.purchase, .acks, .rejections, .refund, .recent]
}

/// A transaction's evidence, bounded: a witness needs the decisive events, not the whole history. Kept in
/// one list, each entry tagged with its part, its first four entries inside the transaction itself.
struct Trail: Sendable {
    private var kept = EntryList()

    mutating func note(_ entry: LogEntry, as part: Part, limit: Int) {
        var entry = entry
        entry.part = part.rawValue
        switch part {
        case .purchase:
            if kept.contains(where: { $0.part == Part.purchase.rawValue }) {
                note(entry, as: .recent, limit: limit)
            } else {
                kept.append(entry)
            }
        case .acks: keep(entry, 3)
        case .rejections: keep(entry, 2)
        case .refund: keep(entry, 3)
        default:
            guard limit > 0 else { return }
            entry.part = Part.recent.rawValue
            let recent = kept.indices.filter { kept[$0].part == entry.part }
            if recent.count >= limit, let oldest = recent.first { kept.remove(at: oldest) }
            kept.append(entry)
        }
    }

    /// Keeps the first `count - 1` entries of the entry's part and the latest one.
    private mutating func keep(_ entry: LogEntry, _ count: Int) {
        let same = kept.indices.filter { kept[$0].part == entry.part }
        if same.count < count { kept.append(entry) } else { kept[same[count - 1]] = entry }
    }

    /// When the earliest entry kept of a part happened (each part keeps its first entries), if any.
    func earliest(_ part: Part) -> Double? {
        kept.lazy.filter { $0.part == part.rawValue }.map(\.at).min()
    }

    /// The entries that fit before the storage grows (for tests of its memory).
    var reserved: Int { kept.reserved }

    /// The entries of the chosen parts: the purchase, acknowledgments, rejections, refund, then the rest.
    func entries(_ parts: Part) -> [LogEntry] {
        var list: [LogEntry] = []
        for part in [Part.purchase, .acks, .rejections, .refund, .recent] where parts.contains(part) {
            list += kept.filter { $0.part == part.rawValue }
        }
        return list
    }
}
