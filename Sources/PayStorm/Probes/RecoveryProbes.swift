/// Reads after recovery, as Jepsen reads after a nemesis: when the target answers again after an outage (a
/// planned restart's window closing, or connections refused outside any plan and then answered), the accounts it
/// acknowledged deliveries of before it went down, and that no probe has read since, are probed at once, and
/// their retries and redeliveries wait for those probes. A grant lost in the crash then shows as lost, before a
/// redelivery or the next renewal can repair it.
///
/// A pure value, confined to the engine's thread with the scheduler that owns it.
struct RecoveryProbes {
    /// One account to read, and when its target went down (seconds since the start of the run).
    struct Due: Equatable {
        var account: String
        var down: Double
        /// When the target was seen back, the probe's intended time.
        var at: Double
    }

    /// How long an account's follow-ups wait for its probe at most, in seconds: a probe that never answers (the
    /// target went down again) must not hold them for the rest of the run.
    static let holdSeconds = 10.0

    private var due: [Due] = []
    private var next = 0
    /// Accounts whose probe is due or in flight, and until when their follow-ups wait.
    private var holding: [String: Double] = [:]
    /// When the target began refusing connections outside a planned restart, while it still does.
    private(set) var outageSince: Double?
    /// Outages the target came back from, and the accounts read after them.
    private(set) var recoveries = 0
    private(set) var accountsRead = 0

    /// The intended time of the first probe due, if any.
    var firstTime: Double? { next < due.count ? due[next].at : nil }

    /// The target answers again at `now` after going down at `down`: `accounts` are read first.
    mutating func targetBack(down: Double, at now: Double, accounts: [String]) {
        recoveries += 1
        outageSince = nil
        for account in accounts where holding[account] == nil {
            due.append(Due(account: account, down: down, at: now))
            holding[account] = now + Self.holdSeconds
        }
    }

    /// The probe due first, taken off the queue (its account stays held until ``answered(_:)``).
    mutating func pop() -> Due? {
        guard next < due.count else { return nil }
        defer {
            next += 1
            if next == due.count {
                due.removeAll(keepingCapacity: true)
                next = 0
            }
        }
        accountsRead += 1
        return due[next]
    }

    /// Whether a follow-up of `account` must wait at `now`: its read after recovery has not answered yet.
    mutating func holds(_ account: String, at now: Double) -> Bool {
        guard let until = holding[account] else { return false }
        if now < until { return true }
        holding[account] = nil
        return false
    }

    /// The account's read after recovery answered (or failed): its follow-ups go again.
    mutating func answered(_ account: String) { holding[account] = nil }

    /// A genuine delivery's connection was refused at `t` outside a planned restart: the target may be down.
    mutating func refused(at t: Double) {
        if outageSince == nil { outageSince = t }
    }

    /// The target answered a request at `t`: when it had been refusing connections, the outage ended, and this
    /// says since when it was down (the caller reads the accounts then); nil otherwise.
    mutating func answered(at t: Double) -> Double? {
        guard let since = outageSince, t > since else { return nil }
        outageSince = nil
        return since
    }
}
