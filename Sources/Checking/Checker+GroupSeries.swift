import TargetContract

// An account may hold two subscription series in one group: its own, and one shared with it through Family
// Sharing (or the shared one that ended and its own that followed). An entitlement that names a transaction of
// one series is that series' own: judging the other series by it would be a false alarm.

extension Checker {
    /// The entitlement of `group` the target shows for the series `original`: the first of the group, unless it
    /// names a transaction of another series (an entitlement without a transaction ID may be any series').
    func entitlement(ofGroup group: String, series original: String, _ c: Context) -> AccountState.Entitlement? {
        c.observed.entitlements.first { entitlement in
            guard groupOf[entitlement.productId] == group else { return false }
            guard let id = entitlement.transactionId, let other = c.book.txs[id]?.original else { return true }
            return other == original
        }
    }
}
