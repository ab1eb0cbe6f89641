import Synchronization

/// The bodies that later copies (duplicates, retries, redeliveries) must resend byte for byte.
///
/// Entries leave when their delivery can have no more follow-ups, so the cache holds what is in
/// flight or awaiting a follow-up, not the whole run.
final class BodyCache: Sendable {
    private let bodies = Mutex([UInt64: [UInt8]]())

    /// Keeps a body for a delivery ID.
    func keep(_ body: [UInt8], for id: UInt64) {
        bodies.withLock { $0[id] = body }
    }

    /// The body minted for a delivery ID, if still kept.
    func body(of id: UInt64) -> [UInt8]? {
        bodies.withLock { $0[id] }
    }

    /// Forgets a delivery's body.
    func forget(_ id: UInt64) {
        bodies.withLock { _ = $0.removeValue(forKey: id) }
    }

    /// How many bodies are kept.
    var count: Int { bodies.withLock { $0.count } }
}
