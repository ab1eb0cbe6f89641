import Foundation

/// Runs blocking work (a child `paystorm run`, say) on a thread of its own, at most `limit` at a time.
///
/// Swift Testing runs tests on the concurrency pool, which has a thread per core: a test that waits for a
/// child process in a plain synchronous call holds one of those threads for the child's whole run, so on a
/// two-core machine two such tests stop every other test. A test that awaits `ProcessSlots.shared.run`
/// instead leaves the pool free while it waits, and the limit keeps a busy machine from starving the
/// children of their own time.
///
/// ```swift
/// let (status, output) = try await ProcessSlots.shared.run { try PayStormBinary.run(["run", profile]) }
/// ```
public actor ProcessSlots {
    /// The slots the test process shares: `$PAYSTORM_TEST_RUNS` of them when set, else three.
    public static let shared = ProcessSlots(
        limit: ProcessInfo.processInfo.environment["PAYSTORM_TEST_RUNS"].flatMap { Int($0) }.map { max(1, $0) } ?? 3
    )

    private var free: Int
    private var waiting: [CheckedContinuation<Void, Never>] = []

    /// Slots for at most `limit` pieces of work at once.
    public init(limit: Int) { free = limit }

    /// Waits for a free slot, runs `body` on a thread of its own, and frees the slot.
    /// - Returns: What `body` returns.
    /// - Throws: What `body` throws.
    public nonisolated func run<Result: Sendable>(
        _ body: @escaping @Sendable () throws -> Result
    ) async throws -> Result {
        await acquire()
        let outcome = await withCheckedContinuation {
            (continuation: CheckedContinuation<Swift.Result<Result, any Error>, Never>) in
            Thread { continuation.resume(returning: Swift.Result { try body() }) }.start()
        }
        await handOn()
        return try outcome.get()
    }

    private func acquire() async {
        if free > 0 {
            free -= 1
            return
        }
        await withCheckedContinuation { waiting.append($0) }
    }

    /// Gives the slot to the longest waiter, or frees it.
    private func handOn() {
        if waiting.isEmpty {
            free += 1
        } else {
            waiting.removeFirst().resume()
        }
    }
}
