import Foundation
import RunControl
import Simulation

/// `admissions.csv` in a thinned run's report folder: each change of the admitted share of the schedule's
/// arrivals (``ArrivalAdmission/Change``), so that `paystorm replay --admissions FILE` generates the same world.
///
/// ```
/// arrival,share
/// 10240,768
/// 10496,576
/// ```
enum AdmissionsFile {
    /// The file's name in a report folder.
    static let name = "admissions.csv"

    /// The file's text.
    static func render(_ changes: [ArrivalAdmission.Change]) -> String {
        "arrival,share\n" + changes.map { "\($0.arrival),\($0.share)\n" }.joined()
    }

    /// Reads a file written by ``render(_:)``.
    /// - Throws: `RunError.noInput` when it cannot be read, `RunError.badInput` naming the first bad
    ///   line.
    static func read(path: String) throws(RunError) -> [ArrivalAdmission.Change] {
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw .noInput("--admissions \(path): cannot read it (\(error.localizedDescription))")
        }
        var changes: [ArrivalAdmission.Change] = []
        for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            if line.isEmpty || (number == 0 && line == "arrival,share") { continue }
            let fields = line.split(separator: ",", omittingEmptySubsequences: false)
            guard fields.count == 2, let arrival = UInt64(fields[0]), let share = Int(fields[1]),
                (1...ArrivalAdmission.whole).contains(share), changes.last.map({ $0.arrival < arrival }) ?? true
            else {
                throw .badInput(
                    "--admissions \(path): line \(number + 1): expected `ARRIVAL,SHARE` with arrivals increasing "
                        + "and a share from 1 to \(ArrivalAdmission.whole), got `\(line)`"
                )
            }
            changes.append(ArrivalAdmission.Change(arrival: arrival, share: share))
        }
        return changes
    }
}
