public import Foundation

/// One night's capacity search as a trend reads it from its `capacity.json`: when it ran, what it is called,
/// its knee, its fit and the p99 at the knee.
public struct CapacityNight: Sendable, Hashable {
    /// When the search ran: the UTC time its folder name starts with, else `capacity.json`'s modification time.
    public var date: Date
    /// The `label` or `commit` in `capacity.json` when it has one, else the folder's name.
    public var label: String
    /// How the search ended.
    public var outcome: CapacityReport.Outcome
    /// The sustainable rate, actions/s; 0 when no step met every objective.
    public var knee: Double
    /// The Universal Scalability Law fitted to the night's steps (nil with fewer than three).
    public var usl: USLFit?
    /// The most the fitted law lets the target achieve, deliveries/s.
    public var uslCeiling: Double?
    /// The p99 latency of the knee's step, µs (nil without a knee step).
    public var p99AtKnee: Int64?
    /// The capacity folder, as given.
    public var folder: String

    /// Creates a night from its figures.
    public init(
        date: Date,
        label: String,
        outcome: CapacityReport.Outcome,
        knee: Double,
        usl: USLFit? = nil,
        uslCeiling: Double? = nil,
        p99AtKnee: Int64? = nil,
        folder: String
    ) {
        self.date = date
        self.label = label
        self.outcome = outcome
        self.knee = knee
        self.usl = usl
        self.uslCeiling = uslCeiling
        self.p99AtKnee = p99AtKnee
        self.folder = folder
    }
}

/// Many nights' capacity searches in date order, and whether the latest knee dropped below the usual one.
public struct CapacityTrend: Sendable, Hashable {
    /// What the latest night's knee says against the nights before it.
    public struct Verdict: Sendable, Hashable {
        /// Whether the latest knee is more than the allowed share below the median of the nights before it.
        public var dropped: Bool
        /// The median knee of the compared nights (nil with no earlier night).
        public var median: Double?
        /// How many earlier nights the median is taken over.
        public var compared: Int
        /// The verdict in one line, as printed on the console and in `trend.html`.
        public var sentence: String
    }

    /// The nights, oldest first (same time: by label).
    public let nights: [CapacityNight]

    /// Orders `nights` by date, then label.
    public init(_ nights: [CapacityNight]) {
        self.nights = nights.sorted { ($0.date, $0.label) < ($1.date, $1.label) }
    }

    /// The median of `values`: the middle one, or the mean of the two middle ones; nil when empty.
    public static func median(_ values: [Double]) -> Double? {
        guard !values.isEmpty else { return nil }
        let sorted = values.sorted()
        let middle = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
    }

    /// Compares the latest knee with the median knee of up to `window` nights before it.
    /// - Parameters:
    ///   - drop: the share below the median, 0 to 1, beyond which the knee counts as dropped.
    ///   - window: how many of the latest earlier nights make the median.
    public func verdict(drop: Double, window: Int) -> Verdict {
        guard let latest = nights.last else {
            return Verdict(dropped: false, median: nil, compared: 0, sentence: "no night to judge")
        }
        let knee = "\(CapacityReport.rate(latest.knee)) actions/s on \(latest.label)"
        let earlier = nights.dropLast().suffix(max(0, window)).map(\.knee)
        guard let median = Self.median(earlier) else {
            return Verdict(
                dropped: false,
                median: nil,
                compared: 0,
                sentence: "knee \(knee): no earlier night to compare it with"
            )
        }
        let nightsText = "the \(earlier.count == 1 ? "night" : "\(earlier.count) nights") before it"
        let share = median > 0 ? (median - latest.knee) / median : 0
        let dropped = share > drop
        // One decimal: whole percents would often print a drop just past the allowed share as equal to it.
        let how = String(format: "%.1f%% ", abs(share) * 100) + (share >= 0 ? "below" : "above")
        let sentence =
            (dropped ? "knee dropped: " : "knee held: ")
            + "\(knee) is \(how) \(CapacityReport.rate(median)) actions/s, the median of \(nightsText) "
            + "(allowed drop \(String(format: "%g", drop * 100))%)"
        return Verdict(dropped: dropped, median: median, compared: earlier.count, sentence: sentence)
    }
}

extension CapacityNight {
    /// The parts of `capacity.json` a trend needs, so that a file with more (or a later schema's) fields
    /// still reads.
    private struct Source: Decodable {
        struct Step: Decodable {
            var rate: Double
            var latency: StepPercentiles
        }
        var outcome: CapacityReport.Outcome
        var sustainableRate: Double?
        var usl: USLFit?
        var uslCeiling: Double?
        var steps: [Step]
        var label: String?
        var commit: String?
    }

    /// Reads a capacity folder's `capacity.json`.
    /// - Returns: the night, or why the folder cannot be one (no `capacity.json`, unreadable, an interrupted
    ///   search), in a phrase that follows the folder's name.
    public static func read(_ folder: URL, as given: String) -> Result<CapacityNight, TrendSkip> {
        let file = folder.appendingPathComponent("capacity.json")
        guard let data = FileManager.default.contents(atPath: file.path) else {
            return .failure(TrendSkip(folder: given, reason: "no capacity.json"))
        }
        let source: Source
        do {
            source = try JSONDecoder().decode(Source.self, from: data)
        } catch {
            return .failure(TrendSkip(folder: given, reason: "capacity.json does not read as a capacity report"))
        }
        guard source.outcome != .interrupted else {
            return .failure(TrendSkip(folder: given, reason: "an interrupted search, which establishes no knee"))
        }
        let knee = source.sustainableRate ?? 0
        let name = folder.standardizedFileURL.lastPathComponent
        let night = CapacityNight(
            date: Self.date(folderName: name) ?? Self.modified(file) ?? Date(timeIntervalSince1970: 0),
            label: [source.label, source.commit].compactMap { $0 }.first { !$0.isEmpty } ?? name,
            outcome: source.outcome,
            knee: knee,
            usl: source.usl,
            uslCeiling: source.uslCeiling,
            p99AtKnee: source.sustainableRate == nil ? nil : source.steps.last { $0.rate == knee }?.latency.p99,
            folder: given
        )
        return .success(night)
    }

    /// The time a report folder's name starts with (`20261130T021500Z-…`), nil when it does not.
    static func date(folderName: String) -> Date? {
        let stamp = folderName.prefix(16)
        guard stamp.count == 16 else { return nil }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyyMMdd'T'HHmmss'Z'"
        return formatter.date(from: String(stamp))
    }

    private static func modified(_ file: URL) -> Date? {
        (try? FileManager.default.attributesOfItem(atPath: file.path))?[.modificationDate] as? Date
    }
}

/// A folder a trend skipped, and why.
public struct TrendSkip: Error, Sendable, Hashable, CustomStringConvertible {
    /// The folder, as given.
    public var folder: String
    /// Why it was skipped.
    public var reason: String

    public var description: String { "\(folder): \(reason)" }
}
