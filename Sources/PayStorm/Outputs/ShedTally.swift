import Chaos
import Profile
import Simulation

/// What a run's shed deliveries add up to, per role and kind, without a string or a hash per delivery: the
/// recorder's missed counts by kind, and the history's one `shed` line per second, role and kind.
struct ShedTally {
    /// The kinds a shed delivery counts under, as the recorder and the history name them.
    static let kinds = ["webhook", "device", "forged", "network-fault"]
    /// The roles a shed delivery is written under in the history (markers send nothing, so are never shed).
    static let roles = ["webhook", "device", "report"]
    /// Every role and kind, in the order the history writes their lines (by role, then kind, as text).
    private static let lineOrder: [(role: Int, kind: Int)] = roles.indices.flatMap { role in
        kinds.indices.map { (role, $0) }
    }.sorted { (roles[$0.role], kinds[$0.kind]) < (roles[$1.role], kinds[$1.kind]) }

    /// Shed deliveries by kind since the last ``drainByKind()``.
    private var byKind = [Int](repeating: 0, count: kinds.count)
    /// Shed deliveries by role and kind in ``second``.
    private var inSecond = [Int](repeating: 0, count: roles.count * kinds.count)
    /// The second of the run that ``inSecond`` counts.
    private(set) var second = 0

    /// The kind a shed delivery counts under: forged and network-fault copies apart, as when they are sent.
    static func kind(of delivery: PlannedDelivery, role: RequestRole) -> Int {
        delivery.forgery != nil ? 2 : delivery.network != nil ? 3 : role == .webhook ? 0 : 1
    }

    /// Counts one shed delivery of `kind` (see ``kind(of:role:)``), written under its history role.
    mutating func count(_ delivery: PlannedDelivery, kind: Int) {
        let role =
            switch delivery.action.delivery {
            case .notification: 0
            case .device, .marker: 1
            case .report: 2
            }
        byKind[kind] += 1
        inSecond[role * Self.kinds.count + kind] += 1
    }

    /// The counts by kind since the last call (kinds with none left out), and starts again.
    mutating func drainByKind() -> [(kind: String, count: Int)] {
        defer { byKind = byKind.map { _ in 0 } }
        return byKind.indices.filter { byKind[$0] > 0 }.map { (Self.kinds[$0], byKind[$0]) }
    }

    /// The current second's counts as history lines (role, kind, count), in a fixed order, and starts
    /// `nextSecond`'s (the same second again when nil).
    mutating func flush(nextSecond: Int?) -> [(second: Int, role: String, kind: String, count: Int)] {
        var lines: [(second: Int, role: String, kind: String, count: Int)] = []
        for (role, kind) in Self.lineOrder where inSecond[role * Self.kinds.count + kind] > 0 {
            lines.append((second, Self.roles[role], Self.kinds[kind], inSecond[role * Self.kinds.count + kind]))
        }
        inSecond = inSecond.map { _ in 0 }
        if let nextSecond { second = nextSecond }
        return lines
    }
}
