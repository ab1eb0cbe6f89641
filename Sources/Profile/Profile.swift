public import Foundation
public import Primitives

/// A run profile: what to drive, with which catalog and population, at what rate, with which faults.
///
/// Load one with ``Profile/load(path:variables:)`` or ``Profile/decode(_:file:variables:)``. Every section is validated strictly:
/// an unknown key, a wrong type or an impossible value throws one ``ProfileError`` that names the file, the
/// JSON path and what was expected.
///
/// ```swift
/// let profile = try Profile.load(path: "Profiles/smoke.json5")
/// print(profile.durationSeconds, profile.seed)
/// ```
public struct Profile: Sendable, Hashable {
    /// A short name used in report folder names.
    public var name: String
    /// The seed of every random choice in the run.
    public var seed: UInt64
    /// The namespace of the run's identities (account tokens, transaction and web order IDs), beside the seed:
    /// 0, the seed's own identities, unless a run against a target that keeps its state draws a fresh one, so
    /// that a second run of the same seed never meets the first run's purchases. Not read from the file.
    public var namespace: UInt64 = 0
    /// The `appAccountToken`s the backend dictated, by account index: a provisioning command may print, for an
    /// account, the token the app would set (`dictatedToken`), and the world mints that account's purchases with
    /// it. Empty unless a run's provisioning dictated some. Not read from the file.
    public var dictatedTokens: [Int: String] = [:]
    /// What the run drives and how it reads state back.
    public var target: Target
    /// Products, groups, prices.
    public var catalog: Catalog
    /// How many accounts and devices.
    public var population: Population
    /// Relative weights of the lifecycle actions started by the schedule.
    public var actionMix: ActionMix
    /// How fast simulated calendar time runs.
    public var timeCompression: TimeCompression
    /// The rate of new actions over the run, segment after segment.
    public var schedule: [RateSegment]
    /// The faults and their probabilities.
    public var faults: Faults
    /// Seconds to wait after the last action before the final probes: the least the run settles.
    public var settleSeconds: Double
    /// The settle periods a profile may name, in seconds: none to a day.
    public static let settleBounds = 0.0...86_400
    /// The most the run settles, in seconds after the schedule, as written (nil: ``settleSeconds`` +
    /// ``settleQuietAllowance``): it waits until every retry, redelivery and relaunch due has been sent and
    /// answered, so a slow target or machine lengthens the run rather than leaving purchases unchecked.
    public var settleMaxSeconds: Double?
    /// How much longer than ``settleSeconds`` a run waits for quiet when the profile does not say, in seconds.
    public static let settleQuietAllowance = 60.0
    /// The longest settle: ``settleMaxSeconds``, or ``settleSeconds`` + ``settleQuietAllowance``, never below
    /// ``settleSeconds`` (which `--settle` may raise).
    public var longestSettleSeconds: Double {
        max(settleSeconds, settleMaxSeconds ?? settleSeconds + Self.settleQuietAllowance)
    }
    /// Pass/fail thresholds such as `"p99 < 250ms"` or `"errors < 1%"`, evaluated by Reporting.
    public var thresholds: [DeclaredThreshold]

    /// Total seconds of the schedule (the settle time excluded).
    public var durationSeconds: Double { schedule.reduce(0) { $0 + $1.seconds } }

    static let keys = [
        "$schema", "name", "seed", "target", "catalog", "population", "actionMix", "timeCompression", "schedule",
        "faults",
        "settleSeconds", "settleMaxSeconds", "thresholds",
    ]

    /// Reads and validates a JSON5 profile file, with its `${NAME}` variables substituted.
    /// - Parameters:
    ///   - path: the profile file.
    ///   - variables: the values of `${NAME}` references (`--set` values, then the process environment).
    /// - Throws: ``ProfileUnreadable`` when the file is missing, is a directory or cannot be read;
    ///   ``ProfileError`` naming the file, the path and the expectation when it is not a valid profile.
    public static func load(path: String, variables: ProfileVariables = ProfileVariables()) throws -> Profile {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw ProfileUnreadable(file: path, reason: "no such file")
        }
        guard !isDirectory.boolValue else {
            throw ProfileUnreadable(file: path, reason: "it is a directory, not a profile file")
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ProfileUnreadable(file: path, reason: "permission denied or not a regular file")
        }
        return try decode(data, file: path, variables: variables)
    }

    /// Decodes and validates JSON5 text; `file` is only used in error messages.
    ///
    /// A key given twice in one object is an error (a decoder alone would keep one of the two silently),
    /// and syntax errors name their line and column. `${NAME}` references in string values are substituted
    /// from `variables` before validation (see ``ProfileVariables``).
    /// - Throws: ``ProfileError``.
    public static func decode(
        _ data: Data,
        file: String,
        variables: ProfileVariables = ProfileVariables()
    ) throws -> Profile {
        let scanned = JSON5Scan.firstProblem(in: Array(data))
        if let scanned, scanned.kind == .duplicateKey {
            throw ProfileError(
                file: file,
                path: scanned.path,
                expected: scanned.message,
                line: scanned.line,
                column: scanned.column
            )
        }
        let decoder = JSONDecoder()
        decoder.allowsJSON5 = true
        do {
            return try decoder.decode(Profile.self, from: try substituted(data, variables: variables, decoder: decoder))
        } catch let issue as ProfileIssue {
            throw ProfileError(file: file, path: issue.path, expected: issue.expected)
        } catch DecodingError.dataCorrupted(let context) {
            // The decoder refused the text: the scan says where, in the words of this project.
            if let scanned {
                throw ProfileError(
                    file: file,
                    path: scanned.path,
                    expected: "valid JSON5: \(scanned.message)",
                    line: scanned.line,
                    column: scanned.column
                )
            }
            let detail = (context.underlyingError as? NSError)?.userInfo[NSDebugDescriptionErrorKey] as? String
            throw ProfileError(
                file: file,
                path: jsonPath(context.codingPath),
                expected: "valid JSON5 (\(detail ?? context.debugDescription))"
            )
        } catch {
            throw ProfileError(file: file, path: "", expected: "valid JSON5 (\(error))")
        }
    }

    /// The document with its variables substituted in string values, as JSON; the text itself when it has no
    /// `${` (so a profile without variables decodes exactly as written) or does not parse (the decoder then
    /// reports the syntax error on the original text).
    private static func substituted(
        _ data: Data,
        variables: ProfileVariables,
        decoder: JSONDecoder
    ) throws(ProfileIssue) -> Data {
        guard data.firstRange(of: Data("${".utf8)) != nil,
            let tree = try? decoder.decode(JSONValue.self, from: data)
        else { return data }
        var references: [String: String] = [:]
        let text = try tree.substituting(variables, path: "", references: &references).jsonText
        decoder.userInfo[Fields.variableReferences] = references
        return Data(text.utf8)
    }
}

extension Profile: Decodable {
    /// Strict decoding; see ``Profile``.
    public init(from decoder: any Decoder) throws {
        let f = try Fields(decoder, allowed: Self.keys)
        name = try f.text("name", default: nil)
        let seed = try f.integer("seed", in: 0...Int64.max, default: nil)
        self.seed = UInt64(seed)
        target = try f.required("target")
        catalog = try f.required("catalog")
        population = try f.required("population")
        actionMix = try f.value("actionMix", default: ActionMix())
        timeCompression = try f.value("timeCompression", default: TimeCompression())
        schedule = try f.required("schedule")
        faults = try f.value("faults", default: Faults())
        settleSeconds = try f.number("settleSeconds", in: Self.settleBounds, default: 10)
        if f.has("settleMaxSeconds") {
            let longest = try f.number("settleMaxSeconds", in: Self.settleBounds, default: nil)
            guard longest >= settleSeconds else {
                throw ProfileIssue(
                    path: f.at("settleMaxSeconds"),
                    expected: String(format: "at least settleSeconds (%g), found %g", settleSeconds, longest)
                )
            }
            settleMaxSeconds = longest
        }
        thresholds = try f.value("thresholds", default: [])
        if schedule.isEmpty {
            throw ProfileIssue(path: f.at("schedule"), expected: "at least one rate segment")
        }
        let intended = schedule.reduce(0) { $0 + $1.count(until: $1.seconds) }
        if intended < 1 {
            throw ProfileIssue(
                path: f.at("schedule"),
                expected: "segments that start at least one action in all, found \(String(format: "%g", intended))"
            )
        }
        if actionMix.total <= 0 {
            throw ProfileIssue(path: f.at("actionMix"), expected: "at least one weight above 0")
        }
        let refundsMidStream = (faults.refundMidStream?.probability ?? 0) > 0
        try catalog.checkMix(actionMix, refundsMidStream: refundsMidStream, path: f.at("actionMix"))
        if let forgery = faults.forgery, forgery.kinds(onlineChecks: target.verifierOnlineChecks).isEmpty {
            throw ProfileIssue(
                path: f.at("faults") + ".forgery.kinds",
                expected: "a forgery a verifier with online checks rejects (target.verifierOnlineChecks is true; "
                    + "it accepts \(Faults.forgeriesAcceptedWithOnlineChecks.sorted().joined(separator: " and ")))"
            )
        }
        try checkTarget(f)
    }

    /// What the target must be for the other sections: an external one has restart commands, and the
    /// embedded ledger gets no purchase without an `appAccountToken` (it knows accounts only by it).
    private func checkTarget(_ f: Fields) throws {
        if let restart = faults.targetRestart, restart.killCommand.isEmpty, !target.embeddedLedger {
            throw ProfileIssue(
                path: f.at("faults") + ".targetRestart.killCommand",
                expected: "kill and start argument vectors for an external target"
            )
        }
        if population.withoutAccountTokenFraction > 0, target.embeddedLedger {
            throw ProfileIssue(
                path: f.at("population") + ".withoutAccountTokenFraction",
                expected: "0 with target.embeddedLedger (the embedded ledger knows a purchase's account only by "
                    + "its appAccountToken)"
            )
        }
    }
}

/// A profile file that is missing or cannot be read (a directory, no permission): not a malformed profile,
/// so a command line can tell the two apart (the README's exit 66 rather than 65).
public struct ProfileUnreadable: Error, Sendable, Hashable, CustomStringConvertible {
    /// The path as given.
    public var file: String
    /// Why it cannot be read.
    public var reason: String

    /// Creates an error.
    public init(file: String, reason: String) {
        self.file = file
        self.reason = reason
    }

    /// `cannot read profile PATH: REASON`, on one line.
    public var description: String { "cannot read profile \(file): \(reason)" }
}

// MARK: - Thresholds

/// A threshold as the profile declares it, such as `p99 < 250ms` or `webhook.errorRate < 1%`, kept as written.
///
/// The grammar (metrics, kinds, units, operators) belongs to the load engine, which evaluates thresholds;
/// a run parses each one with it before sending anything and names `thresholds[i]` on an error.
public struct DeclaredThreshold: Sendable, Hashable, Decodable, CustomStringConvertible {
    /// The text as written.
    public var text: String

    /// Keeps a threshold's text.
    public init(_ text: String) {
        self.text = text
    }

    /// Decodes from a non-empty string.
    public init(from decoder: any Decoder) throws {
        let path = jsonPath(decoder.codingPath)
        guard let text = try? decoder.singleValueContainer().decode(String.self),
            !text.trimmingCharacters(in: .whitespaces).isEmpty
        else {
            throw ProfileIssue(path: path, expected: "a threshold string such as \"p99 < 250ms\"")
        }
        self.text = text
    }

    /// The text as written.
    public var description: String { text }
}

extension Profile {
    /// Every command the profile names (probe, transform, provisioning, restart), each with its JSON path, so
    /// that a program that does not exist is found before anything is sent.
    public var commands: [(path: String, arguments: [String])] {
        var out: [(String, [String])] = []
        if let command = target.probe?.command { out.append(("target.probe.command", command)) }
        if let transform = target.probe?.transform { out.append(("target.probe.transform", transform)) }
        if let provision = target.accounts?.provision { out.append(("target.accounts.provision", provision)) }
        if let hook = target.requestHook { out.append(("target.requestHook.command", hook.command)) }
        if let restart = faults.targetRestart {
            out.append(("faults.targetRestart.killCommand", restart.killCommand))
            out.append(("faults.targetRestart.startCommand", restart.startCommand))
        }
        return out.filter { !$0.1.isEmpty }
    }
}
