import AppStoreModel
import Checking
import Foundation
package import Load
package import Minting
import Primitives
package import Profile
import Reporting
public import RunControl
package import Signing
import TargetProcesses

extension PayStormRun {
    /// Loads and validates a profile (and its thresholds) without running it.
    /// - Returns: one line describing the profile, and a second line when an option will be ignored.
    /// - Throws: `RunError.badProfile` naming the file, the JSON path and what was expected.
    public static func check(_ options: RunOptions) throws(RunError) -> String {
        let (profile, thresholds) = try load(options)
        // A real run reads the admissions file before it sends; so does the check.
        if let path = options.admissionsPath { _ = try AdmissionsFile.read(path: path) }
        let target = profile.target.embeddedLedger ? "the embedded ledger" : (profile.target.webhookURL ?? "")
        let notice = TargetSetup.ignoredPKINotice(profile: profile, options: options).map { "\n" + $0 } ?? ""
        return
            "\(options.profilePath): profile \(profile.name), seed \(profile.seed), \(profile.population.accounts) accounts, "
            + "\(format(profile.durationSeconds)) s of traffic + \(format(profile.settleSeconds)) s settle against \(target), "
            + "\(thresholds.count) threshold\(thresholds.count == 1 ? "" : "s")" + notice
    }

    /// The kinds a run records its traffic under (see `RunScheduler` and `FinalProbe`), which thresholds may
    /// name: genuine webhook and device deliveries, probes, deliberate forgeries and network faults, and the
    /// deliveries refused while the target is down for a planned restart.
    public static let thresholdKinds = ["webhook", "device", "probe", "forged", "network-fault", "restart"]

    /// The profile `options` name, with the options applied (seed, namespace, schedule, settle, rate scale), and
    /// its thresholds parsed: what a run, a capacity search and a target check start from.
    /// - Throws: `RunError.noInput` for an unreadable profile, `.badProfile` naming the file, the JSON path and
    ///   what was expected, `.badInput` for a schedule a replay line cannot name.
    package static func load(_ options: RunOptions) throws(RunError) -> (Profile, [Threshold]) {
        var profile: Profile
        do {
            profile = try Profile.load(path: options.profilePath, variables: ProfileVariables(set: options.variables))
        } catch let error as ProfileUnreadable {
            throw .noInput(error.description)
        } catch {
            throw .badProfile("\(error)")
        }
        try CommandCheck.checkPrograms(of: profile, file: options.profilePath)
        if let seed = options.seed { profile.seed = seed }
        profile.namespace =
            options.namespace
            ?? (profile.target.embeddedLedger ? options.accountNamespace ?? 0 : RunNamespace.fresh())
        if let schedule = options.schedule {
            // A replay line names only this shape (`--rate R --duration D`).
            guard schedule.count == 1, case .constant = schedule[0].shape else {
                throw .badInput("a schedule in place of the profile's is one constant segment (--rate R --duration D)")
            }
            profile.schedule = schedule
        }
        if let settle = options.settleSeconds { profile.settleSeconds = settle }
        if let longest = options.settleMaxSeconds { profile.settleMaxSeconds = longest }
        if options.rateScale != 1 {
            profile.schedule = profile.schedule.map { $0.scaled(by: options.rateScale) }
        }
        var thresholds: [Threshold] = []
        for (index, threshold) in profile.thresholds.enumerated() {
            do {
                thresholds.append(try Threshold.parse(threshold.text, kinds: thresholdKinds))
            } catch {
                throw .badProfile("\(options.profilePath): thresholds[\(index)]: \(error)")
            }
        }
        return (profile, thresholds)
    }

    /// Seconds as the console and the notes print them (`%g`: 30, 0.5, 1e+06).
    package static func format(_ seconds: Double) -> String { String(format: "%g", seconds) }

    /// The load engine of a run: the profile's timeout, CA file and connections per host.
    package static func loadEngine(profile: Profile) throws(RunError) -> LoadEngine {
        do {
            return try LoadEngine(
                LoadEngineConfiguration(
                    connectionsPerHost: profile.target.connections,
                    maxInFlight: 4096,
                    connectTimeout: .seconds(3),
                    totalTimeout: .milliseconds(Int64(profile.target.requestTimeoutSeconds * 1000)),
                    caFile: profile.target.tlsCAFile,
                    maxCapturedBodyBytes: 64 * 1024,
                    lateAfter: .milliseconds(10),
                    tickInterval: .seconds(1)
                )
            )
        } catch {
            throw .internalError("cannot start the load engine: \(error)")
        }
    }

    /// The minter of a run: the PKI the target trusts and the profile's app identity.
    package static func minter(profile: Profile, pki: TestPKI) -> Minter {
        Minter(
            pki: pki,
            app: AppIdentity(
                bundleId: profile.target.bundleId,
                appAppleId: profile.target.appAppleId,
                environment: profile.target.environment
            )
        )
    }

    /// The run's command-based safety probes: rounds of a `command` or `bulk` probe on the accounts of
    /// interest, or the `transform` of an `http` probe's answers; nil when the target has neither (the
    /// embedded ledger is probed over HTTP by the scheduler).
}

extension RateSegment {
    /// The same segment with every rate multiplied by `factor`.
    func scaled(by factor: Double) -> RateSegment {
        switch shape {
        case .constant(let rate):
            RateSegment(.constant(rate: rate * factor), seconds: seconds)
        case .ramp(let from, let to):
            RateSegment(.ramp(from: from * factor, to: to * factor), seconds: seconds)
        case .steps(let from, let to, let count):
            RateSegment(.steps(from: from * factor, to: to * factor, count: count), seconds: seconds)
        case .spike(let base, let peak, let at, let length):
            RateSegment(
                .spike(base: base * factor, peak: peak * factor, atSeconds: at, spikeSeconds: length),
                seconds: seconds
            )
        case .sine(let mean, let amplitude, let period):
            RateSegment(
                .sine(mean: mean * factor, amplitude: amplitude * factor, periodSeconds: period),
                seconds: seconds
            )
        }
    }
}
