import Foundation
import PayStorm
import RunControl

extension Command {
    /// `paystorm bench ceiling PROFILE`: the rate at which a run of the profile can sign its deliveries.
    /// - Throws: `CLIError` for a bad option, an unreadable profile or a PKI that cannot be generated.
    static func benchCeiling(_ arguments: inout Arguments) throws -> ExitCode {
        let seconds = try arguments.double("--seconds") ?? 5
        let scale = try arguments.double("--rate-scale")
        let seed = try arguments.seed()
        let variables = try profileVariables(&arguments)
        guard let profile = arguments.positional() else {
            throw CLIError(.usage, "missing PROFILE; run 'paystorm bench --help'")
        }
        try arguments.finish()
        guard seconds > 0, seconds <= 3600 else { throw CLIError(.usage, "--seconds must be in (0, 3600]") }
        guard FileManager.default.isReadableFile(atPath: profile) else {
            throw CLIError(.noInput, "cannot read profile \(profile)")
        }
        var options = RunOptions(profilePath: profile)
        options.variables = variables
        if let scale {
            guard rateScaleBounds.contains(scale) else {
                throw CLIError(.usage, "--rate-scale must be from 0.01 to 1000, got \(scale)")
            }
            options.rateScale = scale
        }
        if let seed { options.seed = seed }
        let ceiling: MintCeiling
        do {
            ceiling = try PayStormRun.mintCeiling(options, seconds: seconds)
        } catch {
            throw CLIError(RunCommandSupport.exitCode(for: error), error.description)
        }
        print(
            String(
                format: "ceiling: %.0f deliveries/s (%.0f signatures/s) on %d cores over %.1f s",
                ceiling.deliveriesPerSecond,
                ceiling.signaturesPerSecond,
                ceiling.cores,
                ceiling.seconds
            )
        )
        // The CPU behind the rate, which a busy machine does not change: a run's own CPU per delivery compares
        // with it (Benchmarks/ceiling/run.sh).
        print(
            String(
                format: "minting CPU: %.1f µs per delivery (user + system, every thread)",
                ceiling.cpuPerDelivery * 1e6
            )
        )
        // What --rate-scale puts the profile's schedule at the ceiling, for a sweep (Benchmarks/ceiling/run.sh).
        let scaleNow = options.rateScale
        if ceiling.intendedPerSecond > 0 {
            print(
                String(
                    format: "schedule: %.0f deliveries/s intended at --rate-scale %g; "
                        + "--rate-scale %.4g meets the ceiling",
                    ceiling.intendedPerSecond,
                    scaleNow,
                    scaleNow * ceiling.deliveriesPerSecond / ceiling.intendedPerSecond
                )
            )
        }
        return .success
    }
}
