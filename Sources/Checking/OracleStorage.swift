// How the oracle stores each account's books: compact, because a soak keeps every account's books for the
// whole run, and hash tables sized for their peak held most of the harness's memory growth.

/// An ID as the oracle keeps it: the number of a canonical decimal ID (every ID the App Store mints), so it
/// takes no string of its own, or else its text.
struct RecordKey: Hashable, Sendable {
    /// The ID's number, or 0 when the ID is not a canonical decimal.
    let number: UInt64
    /// The ID's text when it is not a canonical decimal, else nil.
    let text: String?

    /// The key of `id`.
    init(_ id: String) {
        if let number = Self.decimal(id) {
            self.number = number
            text = nil
        } else {
            number = 0
            text = id
        }
    }

    /// The key of a number (not 0) or of a text that is not a canonical decimal.
    init(number: UInt64, text: String?) {
        self.number = number
        self.text = text
    }

    /// The ID as text.
    var id: String { text ?? String(number) }

    /// The ID's value as `UInt64(id)` reads it (also for a text such as "012"), or nil.
    var value: UInt64? {
        guard let text else { return number }
        return UInt64(text)
    }

    /// The number `text` spells when it is a canonical decimal other than 0 ("12", not "012", "+12" or "0"),
    /// found without making a string: the same as `UInt64(text)` for a text that starts with 1 to 9, without
    /// its generic parsing (each delivery's IDs are read several times as it is booked).
    static func decimal(_ text: String) -> UInt64? {
        if let number = text.utf8.withContiguousStorageIfAvailable({ decimal(digits: $0) }) { return number }
        return decimal(digits: Array(text.utf8))
    }

    private static func decimal<Digits: Collection<UInt8>>(digits: Digits) -> UInt64? {
        // At most 20 digits fit; the first is not 0.
        guard let first = digits.first, first >= UInt8(ascii: "1"), first <= UInt8(ascii: "9"), digits.count <= 20
        else { return nil }
        var value: UInt64 = 0
        for byte in digits {
            let digit = byte &- UInt8(ascii: "0")
            guard digit < 10 else { return nil }
            let (tens, overflow) = value.multipliedReportingOverflow(by: 10)
            let (sum, carry) = tens.addingReportingOverflow(UInt64(digit))
            guard !overflow, !carry else { return nil }
            value = sum
        }
        return value
    }
}

/// A record that a ``SmallTable`` finds by its ID.
protocol KeyedByID {
    /// The record's key.
    var key: RecordKey { get }
    /// Whether the record's key is `key` (cheaper than making the record's key when it can be).
    func has(_ key: RecordKey) -> Bool
}

extension KeyedByID {
    /// The record's ID as text.
    var id: String { key.id }

    func has(_ key: RecordKey) -> Bool { self.key == key }
}

/// An account's records, keyed by ID, in the order they were first stored.
///
/// An account holds a few to a few dozen (the checker folds settled ones away), so a linear search costs
/// less than hashing, and an array holds them without a hash table's empty buckets: a dictionary that once
/// grew to 17 transactions kept 32 buckets of about 230 bytes for the rest of the run.
struct SmallTable<Element: KeyedByID & Sendable>: Sequence, Sendable {
    private var list: [Element] = []

    /// How many records it holds.
    var count: Int { list.count }

    /// The records, oldest first.
    var values: [Element] { list }

    /// How many records fit before the storage grows.
    var capacity: Int { list.capacity }

    /// The record with this ID; assigning nil removes it, assigning a new ID appends it.
    subscript(id: String) -> Element? {
        get { self[RecordKey(id)] }
        set { self[RecordKey(id)] = newValue }
    }

    /// The position of the record with this key, if it is there: for `subscript(at:)` and `store(_:at:)`,
    /// which find it no more while nothing is added or removed.
    func position(of key: RecordKey) -> Int? { list.firstIndex { $0.has(key) } }

    /// The record at a position found by `position(of:)`.
    subscript(at position: Int) -> Element {
        get { list[position] }
        set { list[position] = newValue }
    }

    /// Stores a record at its position found by `position(of:)`, or appends it when that found none.
    mutating func store(_ element: Element, at position: Int?) {
        if let position { list[position] = element } else { append(element) }
    }

    /// The record with this key; assigning nil removes it, assigning a new key appends it.
    subscript(key: RecordKey) -> Element? {
        get { list.first { $0.has(key) } }
        set {
            let index = list.firstIndex { $0.has(key) }
            switch (index, newValue) {
            case (let index?, let element?): list[index] = element
            case (let index?, nil): list.remove(at: index)
            case (nil, let element?): append(element)
            case (nil, nil): break
            }
        }
    }

    /// Appends, growing the storage by a quarter (at least one record) rather than doubling it: an account's
    /// table stays near its count for the whole run, so the slack of a doubled array would be held by every
    /// account (most hold one subscription series, and a table of a few records is cheap to copy).
    private mutating func append(_ element: Element) {
        if list.count == list.capacity { list.reserveCapacity(list.count + Swift.max(1, list.count / 4)) }
        list.append(element)
    }

    /// Drops the spare capacity left after removals (an array keeps its peak size otherwise).
    mutating func shrink() {
        guard list.capacity > list.count + list.count / 2 + 1 else { return }
        var fresh: [Element] = []
        fresh.reserveCapacity(list.count)
        fresh.append(contentsOf: list)
        list = fresh
    }

    func makeIterator() -> LazyMapSequence<[Element], (key: String, value: Element)>.Iterator {
        list.lazy.map { (key: $0.id, value: $0) }.makeIterator()
    }
}

/// A map of a few entries in one array, in the order they were first stored.
///
/// An account's books hold a handful of entries per map (one per product, group or subscription series): a
/// dictionary's hash table of that size costs several times the bytes of an array of its entries.
struct SmallMap<Key: Equatable & Sendable, Value: Sendable>: Sequence, Sendable {
    private var entries: [(key: Key, value: Value)] = []

    /// How many entries it holds.
    var count: Int { entries.count }

    /// The values, oldest first.
    var values: [Value] { entries.map(\.value) }

    /// The value stored under `key`; assigning nil removes it.
    subscript(key: Key) -> Value? {
        get { entries.first { $0.key == key }?.value }
        set {
            let index = entries.firstIndex { $0.key == key }
            switch (index, newValue) {
            case (let index?, let value?): entries[index].value = value
            case (let index?, nil): entries.remove(at: index)
            case (nil, let value?):
                // Grown by a quarter, not doubled: most maps never hold more than two or three entries.
                if entries.count == entries.capacity {
                    entries.reserveCapacity(entries.count + Swift.max(1, entries.count / 4))
                }
                entries.append((key, value))
            case (nil, nil): break
            }
        }
    }

    func makeIterator() -> IndexingIterator<[(key: Key, value: Value)]> { entries.makeIterator() }
}

/// A set of transaction IDs in about 4 bytes each (a `Set<UInt64>` takes about 16).
///
/// The App Store numbers transactions from one counter, so an account's IDs lie within a few billion of
/// each other: each is kept as a 32-bit offset from the first one inserted, in a sorted array searched by
/// bisection. IDs out of that range (none in a simulated run) go to a plain set.
struct CompactIDSet: Sendable {
    private var origin: UInt64?
    private var offsets: [UInt32] = []
    private var others: Set<UInt64> = []

    /// How many IDs it holds.
    var count: Int { offsets.count + others.count }

    /// The bytes its storage reserves.
    var bytes: Int { offsets.capacity * MemoryLayout<UInt32>.stride + others.capacity * MemoryLayout<UInt64>.stride }

    /// Whether it holds `id`.
    func contains(_ id: UInt64) -> Bool {
        guard let offset = offset(of: id) else { return !others.isEmpty && others.contains(id) }
        let index = lowerBound(offset)
        return index < offsets.count && offsets[index] == offset
    }

    /// Adds `id` (nothing if it is there already).
    mutating func insert(_ id: UInt64) {
        if origin == nil { origin = id }
        guard let offset = offset(of: id) else {
            others.insert(id)
            return
        }
        // Transactions fold roughly in the order they were issued: appending is the common case.
        if let last = offsets.last, last < offset {
            offsets.append(offset)
            return
        }
        let index = lowerBound(offset)
        if index == offsets.count || offsets[index] != offset { offsets.insert(offset, at: index) }
    }

    /// Removes `id` (nothing if it is not there).
    mutating func remove(_ id: UInt64) {
        guard let offset = offset(of: id) else {
            others.remove(id)
            return
        }
        let index = lowerBound(offset)
        if index < offsets.count && offsets[index] == offset { offsets.remove(at: index) }
    }

    private func offset(of id: UInt64) -> UInt32? {
        guard let origin, id >= origin, id - origin <= UInt64(UInt32.max) else { return nil }
        return UInt32(id - origin)
    }

    /// The index of the first offset not below `offset`.
    private func lowerBound(_ offset: UInt32) -> Int {
        var low = 0
        var high = offsets.count
        while low < high {
            let middle = (low + high) / 2
            if offsets[middle] < offset { low = middle + 1 } else { high = middle }
        }
        return low
    }
}

/// A transaction's trail entries: the first four inline, the rest in an array.
///
/// Most transactions keep exactly four entries (the dispatch and the answer of their webhook and of their
/// device delivery), which then take no allocation of their own: a separate array for them cost its
/// 32-byte header, the allocator's overhead and its spare capacity on top of the entries, for every
/// transaction of every account. An inline slot is empty when its entry has no part (a trail's entries
/// always have one), so no count is stored.
struct EntryList: RandomAccessCollection, MutableCollection, Sendable {
    private static let empty = LogEntry(at: 0, delivery: 0, phrase: 0)
    private var first = (empty, empty, empty, empty)
    private var rest: [LogEntry] = []

    var startIndex: Int { 0 }

    var endIndex: Int {
        guard rest.isEmpty else { return 4 + rest.count }
        if first.3.part != 0 { return 4 }
        if first.2.part != 0 { return 3 }
        if first.1.part != 0 { return 2 }
        return first.0.part != 0 ? 1 : 0
    }

    /// The entries that fit before an allocation grows (for tests of its memory).
    var reserved: Int { 4 + rest.capacity }

    subscript(position: Int) -> LogEntry {
        get {
            switch position {
            case 0: first.0
            case 1: first.1
            case 2: first.2
            case 3: first.3
            default: rest[position - 4]
            }
        }
        set {
            precondition(newValue.part != 0, "a trail entry has a part")
            switch position {
            case 0: first.0 = newValue
            case 1: first.1 = newValue
            case 2: first.2 = newValue
            case 3: first.3 = newValue
            default: rest[position - 4] = newValue
            }
        }
    }

    /// Appends an entry (which has a part).
    mutating func append(_ entry: LogEntry) {
        let count = endIndex
        if count < 4 { self[count] = entry } else { rest.append(entry) }
    }

    /// Removes the entry at `position`, keeping the order of the others.
    mutating func remove(at position: Int) {
        let count = endIndex
        precondition(position >= 0 && position < count, "index out of range")
        let inline = Swift.min(count, 4)
        if position < inline - 1 {
            for index in position..<inline - 1 { self[index] = self[index + 1] }
        }
        if count > 4 {
            if position < 4 {
                first.3 = rest.removeFirst()
            } else {
                rest.remove(at: position - 4)
            }
            // An array emptied of its last entries keeps no storage.
            if rest.isEmpty { rest = [] }
        } else {
            switch count - 1 {
            case 0: first.0 = Self.empty
            case 1: first.1 = Self.empty
            case 2: first.2 = Self.empty
            default: first.3 = Self.empty
            }
        }
    }
}
