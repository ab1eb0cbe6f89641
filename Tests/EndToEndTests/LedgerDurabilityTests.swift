import Foundation
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

    static func killMidStream(flaws: [String]) throws -> Outcome {
        let directory = NSTemporaryDirectory() + "ledger-durability-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // The deliveries are not signed: durability does not depend on verification, so both runs trust input.
        FileManager.default.createFile(atPath: directory + "/root.der", contents: Data([0x30, 0x00]))
        let arguments =
            [
                "ledger", "serve", "--db", directory + "/ledger.sqlite", "--trust", directory + "/root.der",
                "--bundle-id", bundleId, "--flaw", "trust-unverified",
            ] + flaws.flatMap { ["--flaw", $0] }

        let tokens = (0..<10).map { _ in UUID().uuidString.lowercased() }
        let first = try LedgerProcess(arguments: arguments)
        let acknowledged = Acknowledged()
        let killAfter = 120
        let workers = 4
        DispatchQueue.concurrentPerform(iterations: workers) { worker in
            var index = 0
            while index < 2000 {
                let id = "dur-\(worker)-\(index)"
                index += 1
                let token = tokens[(worker + index) % tokens.count]
                guard let status = try? first.post("/transactions", deviceBody(id: id, token: token)) else { return }
                if status == 200 { acknowledged.add(id, token: token) }
                if acknowledged.count >= killAfter { first.kill() }
            }
        }
        first.kill()

        let second = try LedgerProcess(arguments: arguments)
        defer { second.terminate() }
        var granted: Set<String> = []
        for token in tokens {
            let body = try second.get("/accounts/\(token)")
            let object = try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any]
            for grant in object?["grants"] as? [[String: Any]] ?? [] {
                if let id = grant["transactionId"] as? String, (grant["count"] as? Int ?? 0) > 0 { granted.insert(id) }
            }
        }
        let acked = acknowledged.ids
        return Outcome(acknowledged: acked.count, lost: acked.filter { !granted.contains($0) }.sorted())
    }

    static func deviceBody(id: String, token: String) -> [UInt8] {
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        let payload: [String: Any] = [
            "transactionId": id, "originalTransactionId": id, "bundleId": bundleId, "environment": "Sandbox",
            "productId": "coins", "type": "Consumable", "appAccountToken": token, "quantity": 1,
            "purchaseDate": now, "signedDate": now,
        ]
        let encode = { (data: Data) in
            data.base64EncodedString().replacingOccurrences(of: "+", with: "-")
                .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        }
        let jws =
            encode(Data(#"{"alg":"ES256"}"#.utf8)) + "."
            + encode(try! JSONSerialization.data(withJSONObject: payload)) + ".c2ln"
        return Array(try! JSONSerialization.data(withJSONObject: ["signedTransaction": jws]))
    }
}

/// The set of acknowledged transaction IDs, shared by the streaming workers.
final class Acknowledged: @unchecked Sendable {
    // @unchecked: every access holds the lock.
    private let lock = NSLock()
    private var set: [String] = []
    func add(_ id: String, token: String) { lock.withLock { set.append(id) } }
    var count: Int { lock.withLock { set.count } }
    var ids: [String] { lock.withLock { set } }
}

/// A running `paystorm ledger serve` child process.
final class LedgerProcess: @unchecked Sendable {
    // @unchecked: `process` is started in init and only signalled afterwards; `killed` is guarded by `lock`.
    private let process = Process()
    private let lock = NSLock()
    private var killed = false
    let port: UInt16

    static func binary() throws -> URL {
        var candidates: [URL] = []
        if let override = ProcessInfo.processInfo.environment["PAYSTORM_BINARY"] {
            candidates.append(URL(fileURLWithPath: override))
        }
        let bundleDirectory = Bundle.main.bundleURL.deletingLastPathComponent()
        candidates.append(bundleDirectory.appendingPathComponent("paystorm"))
        for bundle in Bundle.allBundles {
            candidates.append(bundle.bundleURL.deletingLastPathComponent().appendingPathComponent("paystorm"))
        }
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        candidates.append(root.appendingPathComponent(".build/debug/paystorm"))
        guard let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0.path) }) else {
            throw DurabilityError("cannot find the paystorm binary; build it or set PAYSTORM_BINARY")
        }
        return found
    }

    init(arguments: [String]) throws {
        process.executableURL = try Self.binary()
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
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else { throw DurabilityError("connect failed") }
        var head = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
        if method == "POST" { head += "Content-Length: \(body.count)\r\n" }
        let bytes = Array((head + "\r\n").utf8) + body
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard sent > 0 else { throw DurabilityError("send failed") }
            offset += sent
        }
        var response: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count <= 0 { break }
            response.append(contentsOf: chunk[..<count])
        }
        let text = String(decoding: response, as: UTF8.self)
        guard let end = text.range(of: "\r\n\r\n"), text.hasPrefix("HTTP/1.1 "),
            let status = Int(text.dropFirst(9).prefix(3))
        else { throw DurabilityError("no complete response") }
        return (status, Array(response[text[..<end.upperBound].utf8.count...]))
    }
}

struct DurabilityError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
