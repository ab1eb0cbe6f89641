enum Finding {
    case pass
    /// Undecided; `later`: only because the probe came too near an expiry or a change, so a probe a little
    /// later decides.
    case unknown(String, later: Bool = false)
    /// The summary, the witness entries, what the probe showed (a phrase after "the probe at t=…s"), and what
    /// the violation is about: a later probe that fails on the same subject sees the same violation again.
    case fail(String, [WitnessEntry], String, about: Subject)
}

/// Why an invariant could not decide: the last reason that waiting would not change, else the last one it
/// would.
struct Undecided {
    private var now: String?
    private var later: String?

    mutating func note(_ reason: String, later: Bool = false) {
        if later { self.later = reason } else { now = reason }
    }

    /// The finding when nothing failed.
    var finding: Finding {
        if let now { return .unknown(now) }
        return later.map { .unknown($0, later: true) } ?? .pass
    }
}
