/// The outcome of one invariant.
public struct InvariantResult: Codable, Sendable, Hashable {
    /// The outcome of one invariant.
    public enum Status: String, Codable, Sendable, Hashable {
        /// Checked and held.
        case passed
        /// Checked and violated.
        case failed
        /// Checked, but some probes were ambiguous.
        case unknown
        /// Not checked (no probe or endpoint for it).
        case unchecked
    }

    /// The invariant's name, for example `no-double-grant`.
    public var name: String
    /// How it fared.
    public var status: Status
    /// How many violations it found.
    public var violations: Int
    /// Why it is unknown or unchecked, when it is.
    public var reason: String?

    /// Creates an invariant outcome.
    public init(name: String, status: Status, violations: Int = 0, reason: String? = nil) {
        self.name = name
        self.status = status
        self.violations = violations
        self.reason = reason
    }
}

extension InvariantResult {
    /// One invariant's outcome from its check counts and what the run could not check of it.
    ///
    /// An invariant the run could check only in part keeps the status its checks earned, with the
    /// limitation as a note: a failure stays a failure whatever else went unchecked.
    /// - Parameters:
    ///   - name: the invariant's name.
    ///   - passed: checks that held.
    ///   - failed: checks that failed (violations).
    ///   - unknown: checks that could not decide.
    ///   - unchecked: why (part of) the invariant could not be checked; `partly` when the rest was.
    ///   - tooUndecided: whether so many of its checks could not decide that it is unknown though some held
    ///     (the checker's rule: more than a fifth of them, at least five).
    public init(
        name: String,
        passed: Int,
        failed: Int,
        unknown: Int,
        unchecked: (reason: String, partly: Bool)?,
        tooUndecided: Bool = false
    ) {
        if let unchecked, !unchecked.partly {
            self.init(name: name, status: .unchecked, reason: unchecked.reason)
            return
        }
        let partly = unchecked?.reason
        func note(_ text: String?) -> String? {
            let parts = [text, partly].compactMap { $0 }
            return parts.isEmpty ? nil : parts.joined(separator: "; ")
        }
        if failed > 0 {
            self.init(name: name, status: .failed, violations: failed, reason: note(nil))
        } else if passed > 0 {
            let held = unknown > 0 ? "\(passed) checks held, \(unknown) undecided" : "\(passed) checks held"
            self.init(name: name, status: tooUndecided ? .unknown : .passed, reason: note(held))
        } else if unknown > 0 {
            self.init(name: name, status: .unknown, reason: note("\(unknown) checks undecided"))
        } else {
            self.init(name: name, status: .unchecked, reason: partly ?? "nothing in this run to check it on")
        }
    }
}
