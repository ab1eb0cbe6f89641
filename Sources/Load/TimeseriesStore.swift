/// The rows a ``LoadRecorder`` keeps for the report, one per second for the whole run: a soak of hours keeps
/// tens of thousands. Each row's error counts sit in fixed slots (the CSV's classes) instead of a dictionary
/// of its own, which cost about as much memory as the rest of the row; other class names (none today) stay in
/// the row's dictionary. Rows read back exactly as appended.
struct TimeseriesStore: Sendable {
    private struct Stored: Sendable {
        /// The row, its errors emptied of the classes kept in `counts`.
        var row: TimeseriesRow
        var counts: SIMD8<Int32>
        /// Which classes the row's errors held (a class may be there with 0, as `missed` always is).
        var present: UInt8
    }

    private var stored: [Stored] = []

    /// The second of the last row, if any.
    private(set) var lastSecond: Int?

    /// Appends a row.
    mutating func append(_ row: TimeseriesRow) {
        var kept = row
        var counts = SIMD8<Int32>()
        var present: UInt8 = 0
        for (slot, name) in TimeseriesRow.errorClasses.enumerated() {
            guard let count = row.errors[name], let narrow = Int32(exactly: count) else { continue }
            counts[slot] = narrow
            present |= 1 << slot
            kept.errors[name] = nil
        }
        // An emptied dictionary keeps its storage: a fresh empty one holds none (every row has `missed`, so
        // the hash table of each second's row would stay for the whole run).
        if kept.errors.isEmpty { kept.errors = [:] }
        stored.append(Stored(row: kept, counts: counts, present: present))
        lastSecond = row.second
    }

    /// The rows, oldest first, as appended.
    var rows: [TimeseriesRow] {
        stored.map { stored in
            var row = stored.row
            for (slot, name) in TimeseriesRow.errorClasses.enumerated() where stored.present & 1 << slot != 0 {
                row.errors[name] = Int(stored.counts[slot])
            }
            return row
        }
    }
}
