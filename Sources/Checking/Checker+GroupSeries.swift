import TargetContract

// An account may hold two subscription series in one group: its own, and one shared with it through Family
// Sharing (or the shared one that ended and its own that followed). An entitlement that names a transaction of
// one series is that series' own: judging the other series by it would be a false alarm.

extension Checker {
    /// The entitlement of `group` the target shows for the series `original`: the first of the group, unless it
    /// names a transaction of another series. An entitlement without a transaction ID may be any series': it is
    /// this one's only while no other series of the group may be owed one (a wallet lists a group's entitlement
    /// without saying which series it is for).
    func entitlement(ofGroup group: String, series original: String, _ context: Context) -> AccountState.Entitlement? {
        let anotherMayBeOwed = context.book.subs.contains {
            $0.key != original && $0.value.group == group
                && $0.value.mayBeOwed(at: context.now, boundary: context.boundary)
        }
        return context.observed.entitlements.first { entitlement in
            guard groupOf[entitlement.productId] == group else { return false }
            guard let id = entitlement.transactionId, let other = context.book.txs[id]?.original else {
                return !anotherMayBeOwed
            }
            return other == original
        }
    }
}
