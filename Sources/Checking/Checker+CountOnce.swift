/// What one violation is about, beside its invariant and account. A violation is one (invariant, account,
/// subject): a probe that sees it again adds a sighting to its witness, not a violation to the count.
enum Subject: Hashable, Sendable {
    /// A transaction (a purchase, a refund, a subscription's current period).
    case transaction(String)
    /// A product, where no one transaction applies (a balance, an unlock of something never bought).
    case product(String)
    /// A subscription group's expiry moved back to `expiry` (milliseconds).
    case groupExpiry(String, Int64)
    /// A notification, by the App Store event that sent it.
    case notification(UInt64)
    /// A planned restart of the target, by its index in the run's plan.
    case restart(Int)
    /// The target at the end of the run.
    case target
}

/// The identity of one violation.
struct ViolationKey: Hashable, Sendable {
    var invariant: Invariant
    var account: String
    var subject: Subject
}

extension OracleState {
    /// Books a failed check: a new violation counts and keeps its witness (up to `limit`); one seen before adds
    /// a sighting to its witness. Returns the witness that stands for it.
    mutating func book(_ witness: Witness, key: ViolationKey, limit: Int) -> Witness {
        guard let index = violations[key] else {
            violationCount += 1
            tallies[key.invariant, default: Tally()].failed += 1
            if witnesses.count < limit {
                violations[key] = witnesses.count
                witnesses.append(witness)
            } else {
                violations[key] = .some(nil)
            }
            return witness
        }
        guard let index else { return witness }
        witnesses[index].sightings += 1
        witnesses[index].lastSeenAt = max(witnesses[index].lastSeenAt ?? witnesses[index].at, witness.at)
        return witnesses[index]
    }
}
