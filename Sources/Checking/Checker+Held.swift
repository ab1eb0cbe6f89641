import Synchronization

// A purchase whose last device delivery was told to retry later, or never left the harness, and that nothing
// else delivered, is held on its device: the device delivers it again, after the run if need be. It is neither
// owed nor lost, so no check covers it, and a run where many are held proves less than its PASS says: the
// report counts them.

extension Checker {
    /// Genuine purchases still held for delivery when the final probe read their accounts: never acknowledged, and
    /// their last device delivery deferred or unsent.
    public var heldAtEnd: Int { state.withLock { $0.heldAtEnd.values.reduce(0, +) } }

    /// Notes how many of `book`'s purchases are held, at the account's final check (a later one replaces it).
    func noteHeld(_ book: Book, account: String, in state: inout State) {
        let held = book.txs.values.count { $0.genuine && !$0.forged && $0.held && !$0.accepted && !$0.revoked }
        state.heldAtEnd[account] = held > 0 ? held : nil
    }
}
