import Chaos
import Foundation
import RunControl
import Synchronization
import TargetProcesses

/// Plays the profile's target restarts at their instants: kill, wait `downSeconds`, start, then wait until the
/// target accepts connections again. Every planned restart ends in the report, whether it happened or not.
///
/// An external target's kill and start commands run as `DetachedCommand`s: in their own session, with only
/// standard input, output and error open (output to `restart.log` in the report folder). The run waits for the
/// start command itself to exit (a start script that daemonizes a server returns at once) and then for
/// reachability, never for the processes the command leaves behind. Interrupted, it stops waiting at once, and a
/// command in progress gets SIGTERM (its whole session).
final class RestartPlayer: Sendable {
    /// What became of one planned restart.
    struct Record: Sendable, Equatable {
        /// The planned instant, in seconds since the start of the run.
        var at: Double
        /// Seconds from the start command (or relaunch) until the target accepted connections; nil if it did not.
        var readyAfter: Double?
        /// Seconds the kill took (its command's run; 0 for the embedded ledger's SIGKILL).
        var killSeconds: Double = 0
        /// Seconds from the kill until the target accepted connections: the planned down time, what the kill
        /// took beyond it, the start and the wait for its server. Nil if it did not come back.
        var downSeconds: Double?
        /// Why the restart did not complete, if it did not.
        var failure: String?
        /// Whether it did not complete only because the run ended first: not the target's doing.
        var cutShort = false
        /// When it ended (the target came back, or the restart gave up), in seconds since the start of the run.
        var endedAt: Double = 0
        /// The lines its commands appended to `restart.log` (the last few).
        var log: [String] = []
    }

    let events: [TargetRestartEvent]
    private let ledger: LedgerProcess?
    private let startMillis: Int64
    let logPath: String
    private let windows: RestartWindows
    let reachable: @Sendable () -> String?
    private let log: @Sendable (String) -> Void
    let interruption: Interruption
    private let cancelled = Atomic<Bool>(false)
    let records = Mutex<[Record]>([])
    private let done = DispatchSemaphore(value: 0)

    /// - Parameters:
    ///   - events: the planned restarts, in time order.
    ///   - ledger: the embedded ledger, when the run started one (restarted with SIGKILL and a relaunch).
    ///   - startMillis: the run's t = 0 in wall-clock milliseconds.
    ///   - logPath: where the commands' output goes.
    ///   - windows: the restart windows this player closes when the target answers again.
    ///   - reachable: connects to the target without sending; nil when it accepts, else the failure.
    ///   - log: progress lines.
    ///   - interruption: ends every wait of the player, and a command it runs, when the run is interrupted.
    init(
        events: [TargetRestartEvent],
        ledger: LedgerProcess?,
        startMillis: Int64,
        logPath: String,
        windows: RestartWindows,
        reachable: @escaping @Sendable () -> String?,
        log: @escaping @Sendable (String) -> Void,
        interruption: Interruption
    ) {
        self.interruption = interruption
        self.events = events
        self.ledger = ledger
        self.startMillis = startMillis
        self.logPath = logPath
        self.windows = windows
        self.reachable = reachable
        self.log = log
    }

    /// Starts playing the restarts on a thread of their own.
    func start() {
        guard !events.isEmpty else {
            done.signal()
            return
        }
        Thread.detachNewThread { [self] in
            defer { done.signal() }
            for (index, event) in events.enumerated() {
                guard sleep(until: event.at) else { return }
                let logStart = RestartLog.size(of: logPath)
                var record = play(event)
                record.endedAt = elapsed()
                record.log = RestartLog.lines(of: logPath, from: logStart)
                records.withLock { $0.append(record) }
                // Past its planned down time, a target that did not come back fails on its own account.
                windows.targetBack(
                    index,
                    at: record.readyAfter.map { _ in elapsed() } ?? event.at + event.downSeconds,
                    answered: record.readyAfter != nil
                )
                if let failure = record.failure {
                    log(String(format: "t=%.1fs the target restart failed: %@", event.at, failure))
                }
            }
        }
    }

    /// Stops waiting for restarts that have not begun.
    func cancel() { cancelled.store(true, ordering: .relaxed) }

    /// Cancels what has not begun and waits (a few seconds at most) for a restart in progress to record how it
    /// ended, so that ``notes`` is final.
    func finish() {
        cancel()
        _ = done.wait(timeout: .now() + 5)
        done.signal()
    }

    /// One line per planned restart: when, and whether the target came back (and how fast) or why not.
    /// Restarts the run ended before are listed as not played.
    var notes: [String] {
        let played = records.withLock { $0 }
        var lines: [String] = []
        for (index, event) in events.enumerated() {
            let label = String(
                format: "target restart %d of %d (planned at t=%.1f s)",
                index + 1,
                events.count,
                event.at
            )
            guard index < played.count else {
                lines.append("\(label) did not happen: the run ended first")
                continue
            }
            let record = played[index]
            if let failure = record.failure {
                lines.append("\(label) failed: \(failure)")
            } else if let ready = record.readyAfter {
                // The measured outage, not the planned one: a slow kill or start lengthens it, and fewer
                // deliveries reach the target than the plan suggests.
                let down = record.downSeconds ?? event.downSeconds + ready
                var planned: [String] = []
                if down - event.downSeconds >= 0.05 {
                    planned.append(String(format: "planned %.1f s", event.downSeconds))
                }
                if record.killSeconds >= 0.1 {
                    planned.append(String(format: "the kill took %.1f s", record.killSeconds))
                }
                lines.append(
                    String(
                        format: "%@: down %.1f s%@, accepting connections %.2f s after its start",
                        label,
                        down,
                        planned.isEmpty ? "" : " (\(planned.joined(separator: "; ")))",
                        ready
                    )
                )
            }
        }
        return lines
    }

    /// Kills, waits, starts, and waits for reachability.
    private func play(_ event: TargetRestartEvent) -> Record {
        log(String(format: "t=%.1fs restarting the target (down %.1f s)", event.at, event.downSeconds))
        var record = Record(at: event.at)
        let killed = Date()
        let began: Date
        if let ledger, event.killCommand.isEmpty {
            ledger.kill()
            guard sleep(until: event.at + event.downSeconds) else {
                record.failure = "the run ended while the target was down"
                record.cutShort = true
                return record
            }
            began = Date()
            do {
                try ledger.start(interruption: interruption)
            } catch {
                record.failure = "the embedded ledger did not restart: \(error)"
                return record
            }
        } else {
            if let failure = command(event.killCommand, role: "kill", timeout: event.startTimeoutSeconds) {
                record.failure = failure
                record.cutShort = isCancelled
                return record
            }
            record.killSeconds = Date().timeIntervalSince(killed)
            guard sleep(until: event.at + event.downSeconds) else {
                record.failure = "the run ended while the target was down"
                record.cutShort = true
                return record
            }
            began = Date()
            if let failure = command(event.startCommand, role: "start", timeout: event.startTimeoutSeconds) {
                record.failure = failure
                record.cutShort = isCancelled
                return record
            }
        }
        // Then wait for the target itself: a start script returns before its server listens.
        let deadline = began.addingTimeInterval(event.startTimeoutSeconds)
        var lastFailure = ""
        while !isCancelled {
            guard let failure = reachable() else {
                record.readyAfter = Date().timeIntervalSince(began)
                record.downSeconds = Date().timeIntervalSince(killed)
                return record
            }
            lastFailure = failure
            if Date() >= deadline { break }
            interruption.sleep(0.05)
        }
        record.cutShort = isCancelled && Date() < deadline
        record.failure = String(
            format: "the target did not accept connections within %g s of its start (%@)",
            event.startTimeoutSeconds,
            lastFailure.isEmpty ? "the run ended" : lastFailure
        )
        return record
    }

    /// Runs a kill or start command; nil when it exited 0, else why it failed.
    private func command(_ arguments: [String], role: String, timeout: Double) -> String? {
        let text = "'\(arguments.joined(separator: " "))'"
        let outcome = DetachedCommand.run(
            arguments,
            logPath: logPath,
            timeout: timeout,
            cancelled: { self.isCancelled },
            interruption: interruption
        )
        switch outcome {
        case .exited(0):
            return nil
        case .exited(let status):
            return "the \(role) command \(text) exited \(status) (output in \(logPath))"
        case .timedOut where isCancelled:
            return "the run ended before the \(role) command \(text) exited"
        case .timedOut:
            return
                "the \(role) command \(text) did not exit within \(Int(timeout)) s (left running; output in \(logPath))"
        case .cannotStart(let reason):
            return "cannot run the \(role) command \(text): \(reason)"
        }
    }

    /// Seconds since the start of the run.
    func elapsed() -> Double { Date().timeIntervalSince1970 - Double(startMillis) / 1000 }

    private var isCancelled: Bool { cancelled.load(ordering: .relaxed) || interruption.isInterrupted }

    /// Sleeps until `t` seconds into the run; false when cancelled or interrupted meanwhile.
    private func sleep(until t: Double) -> Bool {
        while !isCancelled {
            let remaining = Double(startMillis) / 1000 + t - Date().timeIntervalSince1970
            if remaining <= 0 { return true }
            interruption.sleep(min(remaining, 0.1))
        }
        return false
    }
}
