public import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A signal that stops a command before it finishes, and the exit code that says so: 128 plus its number,
/// the shell's convention.
public enum StopSignal: Sendable, CaseIterable {
    /// SIGHUP: the terminal or session went away.
    case hangUp
    /// SIGINT: Ctrl-C.
    case interrupt
    /// SIGTERM: a service manager or a CI runner stopping the job.
    case terminate

    /// The signal with this number, nil for any other.
    public init?(number: Int32) {
        switch number {
        case SIGHUP: self = .hangUp
        case SIGINT: self = .interrupt
        case SIGTERM: self = .terminate
        default: return nil
        }
    }

    /// The signal's number.
    public var number: Int32 {
        switch self {
        case .hangUp: SIGHUP
        case .interrupt: SIGINT
        case .terminate: SIGTERM
        }
    }

    /// The signal's name, as `kill -l` prints it with its prefix.
    public var name: String {
        switch self {
        case .hangUp: "SIGHUP"
        case .interrupt: "SIGINT"
        case .terminate: "SIGTERM"
        }
    }

    /// The exit code of a command this signal stopped: 129, 130 or 143.
    public var exitCode: ExitCode {
        switch self {
        case .hangUp: .hangUp
        case .interrupt: .interrupted
        case .terminate: .terminated
        }
    }

    /// The signal a report's exit code names (129, 130 or 143), nil for any other code.
    public init?(exitCode: Int32) {
        guard let signal = Self.allCases.first(where: { $0.exitCode.rawValue == exitCode }) else { return nil }
        self = signal
    }
}

/// Stops one command early. The command line interrupts it when a signal arrives; every wait of the command
/// (a sleep, a back-off, a child command, a load engine's run) watches it and ends within moments, and what was
/// decided by then is still reported.
///
/// ```swift
/// let interruption = Interruption()
/// var options = RunOptions(profilePath: "Profiles/smoke.json5")
/// options.interruption = interruption
/// // from a signal handler: interruption.interrupt(.terminate)
/// let outcome = try PayStormRun(options).execute()  // outcome.report.interrupted, exit code 143
/// ```
public final class Interruption: @unchecked Sendable {
    // @unchecked: every stored property is read and written under `condition`.
    private let condition = NSCondition()
    private var stoppedBy: StopSignal?
    private var actions: [Int: @Sendable () -> Void] = [:]
    private var nextKey = 0

    /// A command not interrupted yet.
    public init() {}

    /// The signal that stopped the command, nil while it runs on.
    public var signal: StopSignal? { condition.withLock { stoppedBy } }

    /// Whether the command was interrupted.
    public var isInterrupted: Bool { signal != nil }

    /// Stops the command: wakes every ``sleep(_:)`` and runs every action registered with
    /// ``onInterrupt(_:)``. Only the first call counts.
    public func interrupt(_ signal: StopSignal) {
        let pending: [@Sendable () -> Void]? = condition.withLock {
            guard stoppedBy == nil else { return nil }
            stoppedBy = signal
            condition.broadcast()
            return Array(actions.values)
        }
        for action in pending ?? [] { action() }
    }

    /// Runs the actions of the waits in progress again (they kill child processes), for a command about to exit
    /// at once on a second signal without unwinding.
    public func abandon() {
        for action in condition.withLock({ Array(actions.values) }) { action() }
    }

    /// Sleeps `seconds`, or less when interrupted.
    /// - Returns: true when the whole time passed, false when interrupted (before or during the sleep).
    @discardableResult
    public func sleep(_ seconds: Double) -> Bool {
        sleep(until: Date(timeIntervalSinceNow: max(0, seconds)))
    }

    /// Sleeps until `deadline`, or less when interrupted.
    /// - Returns: true when the deadline passed, false when interrupted.
    @discardableResult
    public func sleep(until deadline: Date) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        while stoppedBy == nil {
            if !condition.wait(until: deadline) { return stoppedBy == nil }
        }
        return false
    }

    /// Runs `action` when the command is interrupted, at once if it already was, until the returned
    /// registration is cancelled. The action must end a wait (kill a child, stop an engine) and must not block.
    ///
    /// ```swift
    /// let stopping = interruption.onInterrupt { engine.cancel() }
    /// defer { stopping.cancel() }
    /// ```
    public func onInterrupt(_ action: @escaping @Sendable () -> Void) -> Registration {
        let key: Int? = condition.withLock {
            guard stoppedBy == nil else { return nil }
            nextKey += 1
            actions[nextKey] = action
            return nextKey
        }
        if key == nil { action() }
        return Registration(interruption: self, key: key)
    }

    /// An action registered with ``Interruption/onInterrupt(_:)``.
    public struct Registration: Sendable {
        fileprivate let interruption: Interruption
        fileprivate let key: Int?

        /// Unregisters the action: the wait it ends is over.
        public func cancel() {
            guard let key else { return }
            interruption.condition.withLock { _ = interruption.actions.removeValue(forKey: key) }
        }
    }
}
