import Foundation
import PayStormTestKit
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Spawns the built `paystorm ledger serve`, streams deliveries, SIGKILLs it mid-stream, restarts it on the
/// same database and checks that every acknowledged grant survived.
@Suite(.serialized)
struct LedgerDurabilityTests {
    static let bundleId = "com.paystorm.durability"

    @Test func keepsEveryAcknowledgedGrantAcrossSIGKILL() throws {
        let result = try Self.killMidStream(flaws: [])
        #expect(result.acknowledged >= 50)
        #expect(result.lost.isEmpty, "lost acknowledged grants: \(result.lost.prefix(5))")
    }

    @Test func findsLossesWithAckBeforeCommit() throws {
        let result = try Self.killMidStream(flaws: ["ack-before-commit"])
        #expect(result.acknowledged >= 50)
        #expect(!result.lost.isEmpty, "ack-before-commit lost nothing; the durability check would not catch it")
    }

    struct Outcome {
        var acknowledged: Int
        var lost: [String]
    }

    /// Genuine signed transactions minted by `paystorm pki init` and `paystorm mint`, shared by both tests.
    struct Pool {
        var directory: String
        var deliveries: [(id: String, token: String, body: [UInt8])]
    }

    static let pool: Result<Pool, any Error> = Result { try mintPool(count: 360) }

    static func mintPool(count: Int) throws -> Pool {
        let directory = NSTemporaryDirectory() + "ledger-durability-pki-" + UUID().uuidString
        try run(["pki", "init", directory + "/pki"])
        let tokens = (0..<10).map { _ in UUID().uuidString.lowercased() }
        let minted = Acknowledged()
        let failures = Acknowledged()
        DispatchQueue.concurrentPerform(iterations: 4) { worker in
            for index in stride(from: worker, to: count, by: 4) {
                let token = tokens[index % tokens.count]
                do {
                    let jws = try run([
                        "mint", "--pki", directory + "/pki", "--transaction", "--product-type", "consumable",
                        "--product", "coins", "--account-token", token, "--bundle-id", bundleId,
                    ]).trimmingCharacters(in: .whitespacesAndNewlines)
                    minted.add(jws, token: token)
                } catch {
                    failures.add("\(error)", token: token)
                }
            }
        }
        if let failure = failures.ids.first { throw DurabilityError("paystorm mint failed: \(failure)") }
        let deliveries = minted.entries.map { entry in
            (
                id: transactionId(entry.id), token: entry.token,
                body: Array(#"{"signedTransaction":"\#(entry.id)"}"#.utf8)
            )
        }
        return Pool(directory: directory, deliveries: deliveries)
    }

    /// The transactionId inside a JWS payload.
    static func transactionId(_ jws: String) -> String {
        let parts = jws.split(separator: ".")
        guard parts.count == 3 else { return "" }
        var base64 = parts[1].replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        guard let data = Data(base64Encoded: base64),
            let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
        else { return "" }
        return object["transactionId"] as? String ?? ""
    }

    @discardableResult
    static func run(_ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = try PayStormBinary.url()
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw DurabilityError(
                "paystorm \(arguments.prefix(2).joined(separator: " ")) exited \(process.terminationStatus)"
            )
        }
        return String(decoding: data, as: UTF8.self)
    }

    static func killMidStream(flaws: [String]) throws -> Outcome {
        let pool = try pool.get()
        let directory = NSTemporaryDirectory() + "ledger-durability-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let arguments =
            [
                "ledger", "serve", "--db", directory + "/ledger.sqlite", "--trust", pool.directory + "/pki/root.der",
                "--bundle-id", bundleId,
            ] + flaws.flatMap { ["--flaw", $0] }

        let first = try LedgerProcess(arguments: arguments)
        let acknowledged = Acknowledged()
        let killAfter = 120
        let workers = 4
        let deliveries = pool.deliveries
        DispatchQueue.concurrentPerform(iterations: workers) { worker in
            for index in stride(from: worker, to: deliveries.count, by: workers) {
                let delivery = deliveries[index]
                guard let status = try? first.post("/transactions", delivery.body) else { return }
                if status == 200 { acknowledged.add(delivery.id, token: delivery.token) }
                if acknowledged.count >= killAfter { first.kill() }
            }
        }
        first.kill()

        let second = try LedgerProcess(arguments: arguments)
        defer { second.terminate() }
        var granted: Set<String> = []
        for token in Set(deliveries.map(\.token)) {
            let body = try second.get("/accounts/\(token)")
            let object = try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any]
            for grant in object?["grants"] as? [[String: Any]] ?? [] {
                if let id = grant["transactionId"] as? String, (grant["count"] as? Int ?? 0) > 0 { granted.insert(id) }
            }
        }
        let acked = acknowledged.ids
        return Outcome(acknowledged: acked.count, lost: acked.filter { !granted.contains($0) }.sorted())
    }
}

/// A list of (ID, token) pairs shared by concurrent workers.
final class Acknowledged: @unchecked Sendable {
    // @unchecked: every access holds the lock.
    private let lock = NSLock()
    private var list: [(id: String, token: String)] = []
    func add(_ id: String, token: String) { lock.withLock { list.append((id, token)) } }
    var count: Int { lock.withLock { list.count } }
    var ids: [String] { lock.withLock { list.map(\.id) } }
    var entries: [(id: String, token: String)] { lock.withLock { list } }
}

/// A running `paystorm ledger serve` child process.
final class LedgerProcess: @unchecked Sendable {
    // @unchecked: `process` is started in init and only signalled afterwards; `killed` is guarded by `lock`.
    private let process = Process()
    private let lock = NSLock()
    private var killed = false
    let port: UInt16

    init(arguments: [String]) throws {
        process.executableURL = try PayStormBinary.url()
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        var line: [UInt8] = []
        while !line.contains(10) {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { throw DurabilityError("ledger exited before printing its address") }
            line.append(contentsOf: chunk)
        }
        let text = String(decoding: line, as: UTF8.self).split(separator: "\n").first ?? ""
        guard let port = text.split(separator: ":").last.flatMap({ UInt16($0) }) else {
            throw DurabilityError("unexpected first line '\(text)'")
        }
        self.port = port
    }

    func kill() {
        lock.withLock {
            guard !killed else { return }
            killed = true
            Glibc.kill(process.processIdentifier, SIGKILL)
        }
        process.waitUntilExit()
    }

    func terminate() {
        process.terminate()
        process.waitUntilExit()
    }

    func post(_ path: String, _ body: [UInt8]) throws -> Int {
        try exchange("POST", path, body).status
    }

    func get(_ path: String) throws -> [UInt8] {
        let response = try exchange("GET", path, [])
        guard response.status == 200 else { throw DurabilityError("GET \(path) answered \(response.status)") }
        return response.body
    }

    private func exchange(_ method: String, _ path: String, _ body: [UInt8]) throws -> (status: Int, body: [UInt8]) {
        do {
            return try RawHTTPClient.exchange(port: port, method, path, body: body)
        } catch {
            throw DurabilityError("\(method) \(path): \(error)")
        }
    }
}

struct DurabilityError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
