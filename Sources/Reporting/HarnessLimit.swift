/// Where a run stopped measuring the target because PayStorm itself fell behind its schedule.
public struct HarnessLimit: Codable, Sendable, Hashable {
    /// Seconds into the run when PayStorm fell behind.
    public var fromSeconds: Double
    /// Deliveries PayStorm sent per second while behind: its own ceiling in this run.
    public var deliveriesPerSecond: Double
    /// What fell behind: `minting behind the schedule` or `engine thread late`, after `CPU saturated, 1.9 of 2
    /// cores; ` when the process used nearly all the cores it may run on.
    public var reason: String
    /// The schedule's arrivals over the whole run, and how many of them were dropped at the source (never became
    /// actions, so never minted, sent or owed) while PayStorm could not keep up; nil when none was dropped.
    public var actions: DroppedActions?

    /// Arrivals of the schedule, and those dropped at the source.
    public struct DroppedActions: Codable, Sendable, Hashable {
        /// Arrivals the schedule had (each would have been one action).
        public var scheduled: Int
        /// Arrivals dropped at the source.
        public var dropped: Int

        /// Creates the counts.
        public init(scheduled: Int, dropped: Int) {
            self.scheduled = scheduled
            self.dropped = dropped
        }
    }

    /// Creates a harness limit.
    public init(fromSeconds: Double, deliveriesPerSecond: Double, reason: String, actions: DroppedActions? = nil) {
        self.fromSeconds = fromSeconds
        self.deliveriesPerSecond = deliveriesPerSecond
        self.reason = reason
        self.actions = actions
    }

    /// One line for people: `harness-limited from 12 s at 9,800 deliveries/s (minting behind the schedule)`,
    /// then `; 45,000 of 90,000 scheduled actions dropped at the source` when the run thinned its schedule.
    public var sentence: String {
        let dropped = actions.map {
            "; \(Self.grouped($0.dropped)) of \(Self.grouped($0.scheduled)) scheduled actions dropped at the source"
        }
        return
            "harness-limited from \(Int(fromSeconds.rounded())) s at \(Self.grouped(Int(deliveriesPerSecond.rounded()))) "
            + "deliveries/s (\(reason))" + (dropped ?? "")
    }

    /// Thousands grouped by hand: the sentence must not change with the machine's locale.
    static func grouped(_ value: Int) -> String {
        var digits = String(value)
        var text = ""
        while digits.count > 3 {
            text = "," + digits.suffix(3) + text
            digits.removeLast(3)
        }
        return digits + text
    }
}
