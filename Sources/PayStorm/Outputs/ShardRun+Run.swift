import Foundation
import Primitives
import Profile
import Reporting
import Signing

extension ShardRun {
    /// What a shard runs, for its `summary.json`: the profile file read again with the run's variables (as
    /// loading did), the rate scale and the schedule as the run plays it.
    static func of(profile: Profile, options: RunOptions) -> ShardRun {
        let data = FileManager.default.contents(atPath: options.profilePath) ?? Data()
        // The run loaded this file a moment ago; its text as written is the fallback should it have changed since.
        let text =
            Profile.effectiveText(of: data, variables: ProfileVariables(set: options.variables))
            ?? String(decoding: data, as: UTF8.self)
        return ShardRun(
            profileDigest: ContentDigest.sha256Hex(Array(text.utf8)),
            rateScale: options.rateScale,
            schedule: profile.schedule.map(text(of:)).joined(separator: ", ")
        )
    }

    /// One segment as `constant 50/s for 60 s`, `ramp 10→100/s for 30 s`...
    static func text(of segment: RateSegment) -> String {
        let shape =
            switch segment.shape {
            case .constant(let rate): "constant \(number(rate))/s"
            case .ramp(let from, let to): "ramp \(number(from))→\(number(to))/s"
            case .steps(let from, let to, let count): "\(count) steps \(number(from))→\(number(to))/s"
            case .spike(let base, let peak, let at, let length):
                "spike \(number(base))/s, \(number(peak))/s from \(number(at)) s for \(number(length)) s"
            case .sine(let mean, let amplitude, let period):
                "sine \(number(mean))±\(number(amplitude))/s every \(number(period)) s"
            }
        return "\(shape) for \(number(segment.seconds)) s"
    }

    private static func number(_ value: Double) -> String { String(format: "%g", value) }
}
