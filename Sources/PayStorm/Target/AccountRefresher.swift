import Foundation
import Profile
import RunControl
import Synchronization
import TargetProcesses

/// Runs the profile's provisioning command again every `target.accounts.refreshSeconds` while the run lasts, and
/// hands what it prints to every part of the run that renders requests (``AccountDirectory/refresh(with:)``).
///
/// A staging backend's device path usually wants a user's bearer token, and such tokens expire (an hour is
/// common): provisioned once, a soak's device deliveries and probes would start failing with 401 partway through,
/// and the run would measure the credentials, not the backend. A refresh that fails keeps the fields the accounts
/// had; it is said on the console at once and in the report's notes.
final class AccountRefresher: Sendable {
    /// One refresh: when it began (seconds since the run's start), how long it took, and why it failed, if it did.
    struct Record: Sendable, Equatable {
        var at: Double
        var seconds: Double
        var failure: String?
    }

    /// What a refresh runs: the command, the accounts it provisions (the run's, its shard's or its replayed one)
    /// and the seconds one run of it may take.
    struct Provisioning: Sendable {
        var command: [String]
        var tokens: [String]
        var timeout: Double
        /// Kills a refresh in progress when the run is interrupted.
        var interruption: Interruption
    }

    private let provisioning: Provisioning
    private let interval: Double
    private let directory: AccountDirectory
    private let startMillis: Int64
    private let log: @Sendable (String) -> Void
    private let stopped = Atomic<Bool>(false)
    private let wake = DispatchSemaphore(value: 0)
    private let done = DispatchSemaphore(value: 0)
    private let records = Mutex<[Record]>([])

    /// - Parameters:
    ///   - provisioning: the command a refresh runs, for which accounts, within what time.
    ///   - interval: seconds from the start of one refresh to the start of the next.
    ///   - directory: the run's directory; every copy of it sees a refresh.
    ///   - startMillis: the run's t = 0 in wall-clock milliseconds (the first refresh is `interval` after it).
    ///   - log: progress lines.
    init(
        _ provisioning: Provisioning,
        every interval: Double,
        into directory: AccountDirectory,
        startMillis: Int64,
        log: @escaping @Sendable (String) -> Void
    ) {
        (self.provisioning, self.interval, self.directory) = (provisioning, interval, directory)
        (self.startMillis, self.log) = (startMillis, log)
    }

    /// Starts refreshing on a thread of its own.
    func start() {
        Thread.detachNewThread { [self] in
            defer { done.signal() }
            var due = interval
            while true {
                let wait = max(0, due - elapsed())
                if wake.wait(timeout: .now() + wait) == .success || stopped.load(ordering: .relaxed) { return }
                let began = elapsed()
                let failure = refresh()
                records.withLock { $0.append(Record(at: began, seconds: elapsed() - began, failure: failure)) }
                if let failure {
                    log(
                        String(
                            format: "t=%.1fs re-provisioning the accounts failed (they keep their fields): %@",
                            began,
                            failure
                        )
                    )
                }
                // A command slower than the interval is run again as soon as it ends, never twice at once.
                due += interval
                if due < elapsed() { due = elapsed() }
            }
        }
    }

    /// Stops refreshing, and waits a few seconds at most for a refresh in progress to end, so that ``notes`` is
    /// final (one still running then is left to finish on its own and is not reported).
    func finish() {
        stopped.store(true, ordering: .relaxed)
        wake.signal()
        _ = done.wait(timeout: .now() + 5)
        done.signal()
    }

    /// The refreshes, as they ended so far.
    var refreshes: [Record] { records.withLock { $0 } }

    /// One line: how often the accounts were re-provisioned and whether every refresh succeeded, with the first
    /// failures' reasons.
    var notes: [String] {
        let played = refreshes
        let every = "every \(PayStormRun.format(interval)) s (target.accounts.refreshSeconds)"
        guard !played.isEmpty else { return ["accounts re-provisioned \(every): none, the run ended first"] }
        let failed = played.filter { $0.failure != nil }
        let count = "\(played.count) refresh\(played.count == 1 ? "" : "es")"
        guard !failed.isEmpty else {
            let slowest = played.map(\.seconds).max() ?? 0
            return [
                "accounts re-provisioned \(every): \(count), all succeeded (slowest \(String(format: "%.1f", slowest)) s)"
            ]
        }
        let reasons = failed.prefix(3).map { String(format: "t=%.1f s: %@", $0.at, $0.failure ?? "") }
        let more = failed.count > 3 ? "; \(failed.count - 3) more" : ""
        return [
            "accounts re-provisioned \(every): \(failed.count) of \(count) failed, and the accounts kept their "
                + "previous fields (\(reasons.joined(separator: "; "))\(more))"
        ]
    }

    private func refresh() -> String? {
        do throws(RunError) {
            let (command, tokens, timeout) = (provisioning.command, provisioning.tokens, provisioning.timeout)
            let fresh = try AccountProvisioning.run(
                command,
                tokens: tokens,
                timeout: timeout,
                interruption: provisioning.interruption
            )
            if let change = directory.changedToken(in: fresh) { return change }
            directory.refresh(with: fresh)
            return nil
        } catch {
            return error.description
        }
    }

    private func elapsed() -> Double { Date().timeIntervalSince1970 - Double(startMillis) / 1000 }
}

extension AccountRefresher {
    /// The refresher a run's profile asks for (`target.accounts.refreshSeconds` beside `provision`), nil when it
    /// asks for none. It re-provisions the accounts the run provisioned.
    static func forRun(
        profile: Profile,
        options: RunOptions,
        directory: AccountDirectory,
        startMillis: Int64,
        log: @escaping @Sendable (String) -> Void
    ) -> AccountRefresher? {
        guard let accounts = profile.target.accounts, let command = accounts.provision,
            let interval = accounts.refreshSeconds
        else { return nil }
        // A replayed account whose token the backend dictated is provisioned by its minted token, as at first.
        let only = options.account.map { profile.mintedTokensByDictated[AccountDirectory.normalized($0)] ?? $0 }
        let tokens = TargetSetup.accountsToProvision(profile: profile, only: only, shard: options.shard)
        return AccountRefresher(
            Provisioning(
                command: command,
                tokens: tokens,
                timeout: accounts.timeoutSeconds,
                interruption: options.interruption
            ),
            every: interval,
            into: directory,
            startMillis: startMillis,
            log: log
        )
    }
}
