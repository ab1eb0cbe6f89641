import AppStoreModel
import Dispatch
import Foundation
import Synchronization
import Testing

@testable import ReferenceLedger

/// Group commit: a batch waits for the deliveries that were verifying when it began, and for nothing else.
struct GroupCommitterTests {
    /// Runs `body` with a committer on a fresh database; `gather` is long, so only a missing wake-up could
    /// make a test wait for it.
    private static func withCommitter(
        gather: Duration = .seconds(60),
        _ body: (GroupCommitter, LedgerMetrics) throws -> Void
    ) throws {
        let directory = NSTemporaryDirectory() + "ledger-commit-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try LedgerStore(path: directory + "/l.sqlite", flaws: [])
        defer { store.close() }
        let metrics = LedgerMetrics()
        let committer = GroupCommitter(store: store, metrics: metrics, late: nil, gather: gather)
        defer { committer.flush() }
        try body(committer, metrics)
    }

    private static func event() -> LedgerEvent {
        LedgerEvent(source: .webhook, notificationUUID: UUID().uuidString, notificationType: "TEST", signedDate: 1)
    }

    /// Submits an event and returns a semaphore signalled once it is committed.
    private static func submit(_ committer: GroupCommitter, expected: Bool) -> DispatchSemaphore {
        let done = DispatchSemaphore(value: 0)
        committer.submit(event(), expected: expected) { result in
            if case .success = result { done.signal() }
        }
        return done
    }

    /// Two deliveries announce themselves; the first submits, and the committer, woken for it, is left
    /// waiting for the second, still "verifying".
    private static func submitFirstOfTwo(_ committer: GroupCommitter) -> DispatchSemaphore {
        committer.expect()
        committer.expect()
        let first = submit(committer, expected: true)
        usleep(50_000)
        return first
    }

    @Test func commitsADeliveryThatWasVerifyingWhenTheBatchBeganInTheSameTransaction() throws {
        try Self.withCommitter { committer, metrics in
            let first = Self.submitFirstOfTwo(committer)
            let second = Self.submit(committer, expected: true)
            #expect(first.wait(timeout: .now() + 10) == .success)
            #expect(second.wait(timeout: .now() + 10) == .success)
            #expect(metrics.commits.load(ordering: .relaxed) == 1)
            #expect(metrics.committedEvents.load(ordering: .relaxed) == 2)
        }
    }

    @Test func commitsAtOnceWhenTheAwaitedDeliveryIsRejected() throws {
        try Self.withCommitter { committer, metrics in
            let first = Self.submitFirstOfTwo(committer)
            committer.abandon()
            #expect(first.wait(timeout: .now() + 10) == .success)
            #expect(metrics.commits.load(ordering: .relaxed) == 1)
        }
    }

    @Test func commitsTheRestOfABatchTogetherWhenOneOfItIsRejected() throws {
        try Self.withCommitter { committer, metrics in
            committer.expect()
            let first = Self.submitFirstOfTwo(committer)
            committer.abandon()
            let third = Self.submit(committer, expected: true)
            #expect(first.wait(timeout: .now() + 10) == .success)
            #expect(third.wait(timeout: .now() + 10) == .success)
            #expect(metrics.commits.load(ordering: .relaxed) == 1)
            #expect(metrics.committedEvents.load(ordering: .relaxed) == 2)
        }
    }

    @Test func commitsAtOnceWhenNothingElseIsVerifying() throws {
        try Self.withCommitter { committer, metrics in
            let first = Self.submit(committer, expected: false)
            #expect(first.wait(timeout: .now() + 10) == .success)
            committer.expect()
            let second = Self.submit(committer, expected: true)
            #expect(second.wait(timeout: .now() + 10) == .success)
            #expect(metrics.commits.load(ordering: .relaxed) == 2)
        }
    }
}
