import Synchronization

// A purchase whose last device delivery was told to retry later, or never left the harness, and that nothing
// else delivered, is held on its device: the device delivers it again, after the run if need be. It is neither
// owed nor lost, so no check covers it, and a run where many are held proves less than its PASS says: the
// report counts them.

extension Checker {
    /// Genuine purchases still held for delivery when the final probe read their accounts: never acknowledged, and
    /// their last device delivery deferred or unsent.
    public var heldAtEnd: Int { state.withLock { $0.heldAtEnd.values.reduce(0, +) } }

    /// One line for the report's notes, or nil when no purchase was held.
    public var heldNote: String? {
        let held = heldAtEnd
        guard held > 0 else { return nil }
        let one = held == 1
        return "\(held) purchase\(one ? " was" : "s were") still held for delivery at the final probe: never "
            + "acknowledged, the last attempt of \(one ? "its" : "their") deliveries told to retry later by a device "
            + "endpoint or never sent (a missed slot, a refused connection). Each is delivered again (by a device at "
            + "its next launch, after the run here), so nothing was owed for \(one ? "it" : "them") and no check "
            + "covers \(one ? "it" : "them")"
    }

    /// Notes how many of `book`'s purchases are held, at the account's final check (a later one replaces it).
    func noteHeld(_ book: AccountBook, account: String, in state: inout OracleState) {
        let held = book.txs.values.count { $0.genuine && !$0.forged && $0.held && !$0.accepted && !$0.revoked }
        state.heldAtEnd[account] = held > 0 ? held : nil
        state.bookedAtEnd[account] = book.genuineBooked
    }
}

extension Checker {
    /// Why a verdict cannot be a pass when more of `purchases` genuine purchases were `held` for delivery at the
    /// final probe than the share of unknown checks a verdict tolerates (`fraction`), else nil: each held one is
    /// a purchase whose loss no check could have seen, so a PASS over them would claim what was never checked.
    /// A run and a merge of its shards judge by this one rule.
    public static func heldReason(held: Int, purchases: Int, above fraction: Double) -> String? {
        guard held > 0, Double(held) > fraction * Double(purchases) else { return nil }
        return "\(held) of \(purchases) genuine purchases were still held for delivery at the final probe (more than "
            + "\(Int(fraction * 100))%): never acknowledged, each attempt told to retry later or never sent (a "
            + "missed slot, a refused connection), so no check covered them"
    }
}

extension OracleState {
    /// Purchases held at the final probe, and the genuine purchases of the accounts it checked.
    var heldAndBooked: (held: Int, purchases: Int) {
        (heldAtEnd.values.reduce(0, +), bookedAtEnd.values.reduce(0, +))
    }
}

extension Checker {
    /// Undecided checks of one invariant below this count never make the verdict unknown on their own: one
    /// undecided check of four is a quarter of them, and says nothing of the run.
    public static let undecidedFloorPerInvariant = 5

    /// Whether one invariant's checks are too undecided for a pass: at least ``undecidedFloorPerInvariant`` of
    /// them, and more than `fraction` of those that held or could not decide.
    public static func isTooUndecided(passed: Int, unknown: Int, above fraction: Double) -> Bool {
        unknown >= undecidedFloorPerInvariant && Double(unknown) > fraction * Double(passed + unknown)
    }

    /// Why a verdict cannot be a pass when one invariant's own checks are more than `fraction` undecided (and at
    /// least ``undecidedFloorPerInvariant`` of them), else nil. The share over all invariants hides such an
    /// invariant: no-lost-purchase undecided for 149 of 300 accounts left 149 of 8,925 checks undecided in all,
    /// and the run said PASS for a claim it had checked on half its accounts. The most undecided invariant is
    /// named. A run and a merge of its shards judge by this one rule.
    /// - Parameters:
    ///   - tallies: each invariant's name, with its checks that held and that could not decide.
    ///   - fraction: the share of unknown checks a verdict tolerates.
    public static func undecidedInvariantReason(
        _ tallies: [(name: String, passed: Int, unknown: Int)],
        above fraction: Double
    ) -> String? {
        let weak = tallies.filter { isTooUndecided(passed: $0.passed, unknown: $0.unknown, above: fraction) }
        // The largest share first; ties by name, so that the reason is the same from run to run.
        let share = { (tally: (name: String, passed: Int, unknown: Int)) in
            Double(tally.unknown) / Double(tally.passed + tally.unknown)
        }
        guard let worst = weak.min(by: { share($0) != share($1) ? share($0) > share($1) : $0.name < $1.name }) else {
            return nil
        }
        let others = weak.count - 1
        return "\(worst.name): \(worst.unknown) of \(worst.passed + worst.unknown) checks could not decide (more "
            + "than \(Int(fraction * 100))% of that invariant's)"
            + (others > 0 ? ", and \(others) other invariant\(others == 1 ? "" : "s") likewise" : "")
    }
}
