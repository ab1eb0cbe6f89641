package import Checking
import Dispatch
import Foundation
package import Load
package import Profile
package import RunControl
import Synchronization
import TargetProcesses

/// Reads the final state of every account after the settle time, with whichever probe the target has:
/// HTTP (the contract, a pointer mapping, or any JSON through a `transform` command) through the load engine,
/// a per-account command, or one bulk command printing JSON lines. A probe that fails makes that account's
/// checks unknown, and the notes say how many failed and why. Interrupted, it stops at once: the accounts it
/// had not read by then are unknown too, never passed.
package final class FinalProbe {
    private let endpoints: Endpoints
    private let config: ProbeConfig?
    private let engine: LoadEngine
    private let interruption: Interruption
    /// What the reader should know about the probe phase.
    package private(set) var notes: [String] = []
    /// What backing off from "not now" answers did, for the notes.
    private var backOff = BackOff()
    /// Sees each account's state as the probe read it, before it is checked (`paystorm target check` shows it).
    package var onState: (String, AccountState) -> Void = { _, _ in }

    /// Accounts whose probe answered or failed, so an interrupted probe knows which it never read.
    private var answered: Set<String> = []

    /// - Parameters:
    ///   - endpoints: the target's HTTP probe, when it has one.
    ///   - config: the profile's probe (commands, a transform), nil for the embedded ledger.
    ///   - engine: sends the HTTP probes; the caller cancels it when the run is interrupted.
    ///   - interruption: ends the back-off and the waits, and the probe commands, early.
    package init(endpoints: Endpoints, config: ProbeConfig?, engine: LoadEngine, interruption: Interruption) {
        self.endpoints = endpoints
        self.config = config
        self.engine = engine
        self.interruption = interruption
    }

    /// Probes `accounts` and feeds the checker (`final: true`). An account probed too near an expiry or a
    /// state change to decide (``Checker/checkFinal(account:state:at:)``) is probed again when that is past.
    /// - Returns: whether any answer carried `grants`.
    package func run(
        accounts: [String],
        checker: Checker,
        startMillis: Int64,
        onResults: ([CheckResult], Double) -> Void
    ) -> Bool {
        var round = Round(checker: checker, startMillis: startMillis, canWait: true, onState: onState)
        guard probe(accounts, round: &round) else { return false }
        defer { markUnread(accounts, checker: checker, startMillis: startMillis) }
        for (results, t) in round.results { onResults(results, t) }
        var sawGrants = round.sawGrants
        var failed = round.failed
        var firstFailure = round.firstFailure
        // Each account waits at most twice (another expiry may come next); the last round decides as it can.
        for pass in 1...Self.waits where !round.later.isEmpty {
            guard interruption.sleep(checker.waitSeconds) else { break }
            notes.append(
                "\(round.later.count) accounts were probed again \(checker.waitSeconds) s later: the final probe came "
                    + "too near an expiry or a state change to decide"
            )
            let accounts = round.later
            round = Round(checker: checker, startMillis: startMillis, canWait: pass < Self.waits, onState: onState)
            _ = probe(accounts, round: &round)
            for (results, t) in round.results { onResults(results, t) }
            sawGrants = sawGrants || round.sawGrants
            failed += round.failed
            firstFailure = firstFailure ?? round.firstFailure
        }
        if let limited = backOff.note { notes.append(limited) }
        if failed > 0 {
            notes.append(
                "\(failed) of \(accounts.count) final probes failed (their checks are unknown): \(firstFailure ?? "")"
            )
        }
        return sawGrants
    }

    /// How many times an account's final probe may be put off.
    static let waits = 2

    /// Makes the checks of every account the probe never read unknown (the run was interrupted first), so an
    /// interrupted run never passes what it did not see.
    private func markUnread(_ accounts: [String], checker: Checker, startMillis: Int64) {
        guard let signal = interruption.signal else { return }
        let unread = accounts.filter { !answered.contains($0) }
        guard !unread.isEmpty else { return }
        let t = Date().timeIntervalSince1970 - Double(startMillis) / 1000
        let reason = ProbeFailure("not read: the run was interrupted (\(signal.name)) first")
        for account in unread { checker.probeFailed(account: account, error: reason, at: t, final: true) }
        notes.append("\(unread.count) of \(accounts.count) accounts were not read by the final probe: \(reason)")
    }

    /// One pass of final probes: the results and when each was read, what failed, and the accounts to probe
    /// again.
    private struct Round {
        let checker: Checker
        let startMillis: Int64
        let canWait: Bool
        let onState: (String, AccountState) -> Void
        var results: [([CheckResult], Double)] = []
        var sawGrants = false
        var failed = 0
        var firstFailure: String?
        var later: [String] = []
        /// Every account an answer or a failure came for, this pass.
        var seen: [String] = []

        func now() -> Double { Date().timeIntervalSince1970 - Double(startMillis) / 1000 }

        /// `read`: when the state was read (a transformed body is checked later than it was fetched, and the
        /// checker must compare it with the truth of the moment it was read).
        mutating func check(_ account: String, _ answer: Result<AccountState, any Error>, at read: Double? = nil) {
            seen.append(account)
            switch answer {
            case .success(let state):
                if state.grants != nil { sawGrants = true }
                onState(account, state)
                let t = read ?? now()
                if canWait {
                    guard let results = checker.checkFinal(account: account, state: state, at: t) else {
                        later.append(account)
                        return
                    }
                    self.results.append((results, t))
                } else {
                    results.append((checker.check(account: account, state: state, at: t, final: true), t))
                }
            case .failure(let error):
                failed += 1
                if firstFailure == nil { firstFailure = "\(error)" }
                checker.probeFailed(account: account, error: error, at: now(), final: true)
            }
        }
    }

    /// Probes `accounts` once into `round`; false when the target has no probe at all.
    private func probe(_ accounts: [String], round: inout Round) -> Bool {
        let process = config.map { ProcessProbe(config: $0, accounts: endpoints.accounts, interruption: interruption) }
        if endpoints.probe != nil {
            // A transform runs a process per answer: the bodies are collected here and transformed after the
            // engine is done, so no command runs on the engine's thread.
            let transform = config?.transform != nil ? process : nil
            var bodies: [(account: String, body: [UInt8], at: Double)] = []
            var answers: [(account: String, answer: Result<AccountState, any Error>, at: Double)] = []
            let clock = round
            fetch(accounts) { account, result in
                guard result.isSuccess else {
                    let reason = result.error.map { "\($0) \(result.detail)" } ?? "HTTP \(result.status)"
                    answers.append((account, .failure(ProbeFailure(reason)), clock.now()))
                    return
                }
                if transform != nil {
                    bodies.append((account, result.body, clock.now()))
                } else {
                    answers.append(
                        (account, Result { try decodeProbe(result.body, mapping: endpoints.probeMapping) }, clock.now())
                    )
                }
            }
            for answer in answers { round.check(answer.account, answer.answer, at: answer.at) }
            if let transform {
                let transformed = Self.transformAll(bodies.map(\.body), with: transform)
                for (body, answer) in zip(bodies, transformed) {
                    round.check(body.account, answer.mapError { $0 }, at: body.at)
                }
            }
            answered.formUnion(round.seen.filter { !round.later.contains($0) })
            return true
        }
        guard let process, process.readsByCommand else {
            notes.append("no probe: state invariants are unchecked")
            return false
        }
        for answer in process.read(accounts) where !interruption.isInterrupted {
            round.check(answer.account, answer.state.mapError { $0 })
        }
        answered.formUnion(round.seen.filter { !round.later.contains($0) })
        return true
    }

    /// Gets every account's probe answer through the engine, 16 at a time. Accounts answered "not now" (429 or
    /// 503: a backend that limits its API's rate, or a gateway shedding load) are asked again a second later
    /// while each try gets some answered, so the probe goes at the pace the target allows; after a try that got
    /// none, it backs off longer (``BackOff/waits``) with half as many at a time, and after the last wait the
    /// answers still so are handed on as they are (failed probes). A `Retry-After` makes a wait as long as it
    /// asks, so the probe does not spend its tries inside the target's window, but never past a minute of waits
    /// with none answered (``BackOff/budget``). Every wait ends when the run is interrupted.
    private func fetch(_ accounts: [String], sink: (String, LoadResult) -> Void) {
        var pending = accounts
        var users = 16
        var stalled = 0
        for tries in 1... {
            // Interrupted, the accounts still pending stay unread.
            guard !interruption.isInterrupted else { return }
            var again: [(account: String, result: LoadResult)] = []
            _ = engine.run(.closed(users: users, thinkTime: .zero, duration: .seconds(24 * 3600))) { index, _ in
                guard index < pending.count, let url = endpoints.probeURL(for: pending[index]) else { return nil }
                let headers = endpoints.probeRequestHeaders(for: pending[index])
                return LoadRequest(id: index, kind: "probe", method: "GET", url: url, headers: headers)
            } sink: { result in
                if BackOff.statuses.contains(result.status) {
                    again.append((pending[result.id], result))
                } else {
                    sink(pending[result.id], result)
                }
            }
            if tries == 1 { backOff.limited += again.count }
            guard !again.isEmpty else { return }
            stalled = again.count < pending.count ? 0 : stalled + 1
            let wait = backOff.wait(afterStalledTries: stalled, asked: again.compactMap(\.result.retryAfter).max())
            let waitedFrom = Date()
            guard let wait, interruption.sleep(wait) else {
                backOff.stillLimited += again.count
                backOff.interrupted = wait != nil
                backOff.waited += Date().timeIntervalSince(waitedFrom)
                for (account, result) in again { sink(account, result) }
                return
            }
            backOff.waited += wait
            backOff.tries = max(backOff.tries, tries + 1)
            pending = again.map(\.account).sorted()
            if stalled > 0 { users = max(1, users / 2) }
        }
    }

    /// The final probe's retries of answers that said "not now".
    struct BackOff {
        /// Statuses that say nothing about the account, only that the target will not answer it yet.
        static let statuses: Set<Int> = [429, 503]
        /// Seconds waited before each new try after tries that got no answer, one more each: a minute in all,
        /// the window most rate limits count in. After a try that got some answered, the next comes a second later.
        static let waits: [Double] = [1, 2, 4, 8, 15, 30]
        /// The most the waits after tries in a row that got no answer add up to, whatever a `Retry-After` asks:
        /// a wait it makes longer shortens the rest, and once the minute is spent the accounts still answered
        /// "not now" fail.
        static let budget = 60.0
        /// The longest single wait a `Retry-After` makes.
        static let longestWait = budget
        /// Accounts answered "not now" at their first try.
        var limited = 0
        /// The most tries an account took.
        var tries = 1
        /// Seconds waited in all.
        var waited = 0.0
        /// Accounts still answered so at their last try: their probes failed.
        var stillLimited = 0
        /// Whether the run was interrupted while the back-off waited.
        var interrupted = false
        /// The longest `Retry-After` the target sent, in seconds; nil when it sent none.
        var asked: Int?
        /// Seconds waited since the last try that got some answered.
        private var stalledWaited = 0.0

        /// Seconds to wait before the next try, after `stalled` tries in a row that got nothing answered (0: the
        /// last try got some): the back-off's own wait, or the `Retry-After` the answers `asked` for when longer,
        /// within what remains of ``budget``.
        /// - Returns: nil when the budget is spent: the accounts still answered "not now" fail.
        mutating func wait(afterStalledTries stalled: Int, asked: Int?) -> Double? {
            if let asked { self.asked = max(self.asked ?? 0, asked) }
            let requested = min(Double(asked ?? 0), Self.longestWait)
            guard stalled > 0 else { return max(Self.waits[0], requested) }
            if stalled == 1 { stalledWaited = 0 }
            let left = Self.budget - stalledWaited
            guard stalled <= Self.waits.count, left > 0 else { return nil }
            let wait = min(max(Self.waits[stalled - 1], requested), left)
            stalledWaited += wait
            return wait
        }

        /// One line for the notes, or nil when no answer said "not now".
        var note: String? {
            guard limited > 0 else { return nil }
            let end =
                interrupted
                ? "\(stillLimited) still \(stillLimited == 1 ? "was" : "were") when the run was interrupted during the "
                    + "wait, and their checks are unknown"
                : stillLimited > 0
                    ? "\(stillLimited) still \(stillLimited == 1 ? "was" : "were") after \(tries) tries and a minute of "
                        + "waiting with none answered, and their checks are unknown"
                    : "each was answered within \(tries) tries"
            let retryAfter =
                asked.map {
                    Double($0) > Self.longestWait
                        ? " (its Retry-After asked for up to \($0) s; PayStorm waits at most a minute in all)"
                        : " (each at least what its Retry-After asked: up to \($0) s)"
                } ?? ""
            return "\(limited) final probe\(limited == 1 ? " was" : "s were") answered 429 or 503 (the target limits "
                + "its rate, or was unavailable) and asked again at the pace it allowed, after waiting "
                + String(format: "%.0f", waited) + " s in all" + retryAfter + ": " + end
        }
    }

    /// Transforms bodies on a few threads at once (a transform is a process per account), keeping their order.
    private static func transformAll(
        _ bodies: [[UInt8]],
        with probe: ProcessProbe
    ) -> [Result<AccountState, ProbeError>] {
        let width = min(4, max(1, bodies.count))
        let answers = Mutex([Result<AccountState, ProbeError>?](repeating: nil, count: bodies.count))
        DispatchQueue.concurrentPerform(iterations: width) { lane in
            for index in stride(from: lane, to: bodies.count, by: width) {
                let answer = probe.transform(bodies[index])
                answers.withLock { $0[index] = answer }
            }
        }
        return answers.withLock { $0 }.map { $0 ?? .failure(.transport("not transformed")) }
    }
}
