import Foundation
public import ReferenceLedger

/// Runs `body` against a reference ledger on a fresh temporary database, listening on 127.0.0.1:0, then stops
/// the ledger and removes the database whether `body` returned or threw.
///
/// ```swift
/// let configuration = { LedgerConfiguration(databasePath: $0, trustedRoots: [root], bundleId: "com.example") }
/// try withLedger(configuration: configuration) { port in
///     _ = try RawHTTPClient.exchange(port: port, "GET", "/health")
/// }
/// ```
/// - Parameters:
///   - configuration: The ledger's configuration for the database path it is given.
///   - body: The test, given the port the ledger listens on.
/// - Returns: What `body` returns.
/// - Throws: What starting the ledger or `body` throws.
public func withLedger<Result>(
    configuration: (_ databasePath: String) -> LedgerConfiguration,
    _ body: (_ port: UInt16) throws -> Result
) throws -> Result {
    let directory = NSTemporaryDirectory() + "ledger-test-" + UUID().uuidString
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let ledger = try ReferenceLedger(configuration: configuration(directory + "/ledger.sqlite"))
    let address = try ledger.start()
    defer { ledger.stop() }
    guard let port = address.split(separator: ":").last.flatMap({ UInt16($0) }) else {
        throw LedgerError(message: "the ledger listens on \(address), which has no port")
    }
    return try body(port)
}
