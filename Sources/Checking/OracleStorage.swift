// How the oracle stores each account's books: compact, because a soak keeps every account's books for the
// whole run, and hash tables sized for their peak held most of the harness's memory growth.

/// A record that a ``SmallTable`` finds by its ID.
protocol KeyedByID {
    /// The record's key.
    var id: String { get }
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
        get { list.first { $0.id == id } }
        set {
            let index = list.firstIndex { $0.id == id }
            switch (index, newValue) {
            case (let index?, let element?): list[index] = element
            case (let index?, nil): list.remove(at: index)
            case (nil, let element?): list.append(element)
            case (nil, nil): break
            }
        }
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
        guard let offset = offset(of: id) else { return others.contains(id) }
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
