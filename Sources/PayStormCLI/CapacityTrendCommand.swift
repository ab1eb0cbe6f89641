import Capacity
import Foundation
import Reporting
import RunControl

extension Command {
    /// `paystorm capacity trend DIR...`: many nights' knees in date order, and whether the latest dropped.
    static func capacityTrend(_ arguments: inout Arguments) throws -> ExitCode {
        let drop = try arguments.double("--drop") ?? 0.2
        let window = try arguments.int("--window") ?? 7
        let out = try arguments.folder("--out") ?? "Reports/trend"
        var paths: [String] = []
        while let path = arguments.positional() { paths.append(path) }
        try arguments.finish()
        guard !paths.isEmpty else { throw CLIError(.usage, "trend needs capacity folders (DIR...)") }
        guard drop > 0, drop < 1 else { throw CLIError(.usage, "--drop must be above 0 and below 1, got \(drop)") }
        guard (1...1000).contains(window) else {
            throw CLIError(.usage, "--window must be from 1 to 1000, got \(window)")
        }
        do throws(RunError) {
            let (_, verdict) = try PayStormCapacity.trend(paths: paths, out: out, drop: drop, window: window) {
                PayStormCLI.printError($0)
            }
            print("trend: \(verdict.sentence)\nreport: \(out)/trend.html")
            return verdict.dropped ? .violation : .success
        } catch {
            throw CLIError(RunCommandSupport.exitCode(for: error), error.description)
        }
    }
}
