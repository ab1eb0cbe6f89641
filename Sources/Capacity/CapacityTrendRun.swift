import Foundation
public import Reporting
public import RunControl

extension PayStormCapacity {
    /// Compares many nights' capacity searches (`paystorm capacity trend DIR...`), sending nothing.
    /// - Parameters:
    ///   - paths: capacity folders, each with the `capacity.json` of one search.
    ///   - out: the folder `trend.csv` and `trend.html` go to (made when missing).
    ///   - drop: the share below the median beyond which the latest knee counts as dropped.
    ///   - window: how many earlier nights make the median.
    ///   - note: receives one line per folder skipped (no `capacity.json`, an interrupted search).
    /// - Returns: the nights in date order and the latest knee's verdict.
    /// - Throws: `RunError`: `.badInput` when no folder holds a usable search, `.cannotWrite` for the output.
    public static func trend(
        paths: [String],
        out: String,
        drop: Double,
        window: Int,
        note: (String) -> Void
    ) throws(RunError) -> (trend: CapacityTrend, verdict: CapacityTrend.Verdict) {
        var nights: [CapacityNight] = []
        for path in paths {
            switch CapacityNight.read(URL(fileURLWithPath: path), as: path) {
            case .success(let night): nights.append(night)
            case .failure(let skip): note("skipped \(skip)")
            }
        }
        guard !nights.isEmpty else {
            throw .badInput(
                "none of the \(paths.count) folder\(paths.count == 1 ? "" : "s") given holds a capacity search "
                    + "that ran to its end (capacity.json): no trend to write"
            )
        }
        let trend = CapacityTrend(nights)
        let verdict = trend.verdict(drop: drop, window: window)
        do {
            let folder = try ReportFolder(exactly: URL(fileURLWithPath: out)).url
            try CapacityTrendWriter.writeAll(trend, verdict: verdict, drop: drop, to: folder)
        } catch {
            throw .cannotWrite("\(error)")
        }
        return (trend, verdict)
    }
}
