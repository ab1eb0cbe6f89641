import Foundation
import PayStormTestKit
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A target that accepts connections and never answers: every delivery must time out within
/// `requestTimeoutSeconds` of its intended send time, queueing behind the connection cap included, and the run
/// must end by its schedule + timeout + longest settle (+ a little for probing and reports), not long after.
struct SilentTargetTests {
    @Test func aRunAgainstATargetThatNeverAnswersEndsOnTime() throws {
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("silent-\(UUID())").path
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: work) }
        #expect(try PayStormRunner.exec(["pki", "init", work + "/pki"]).0 == 0)
        let server = try SilentServer()
        defer { server.close() }
        // 40 deliveries a second for 4 s over at most 32 connections: most wait for a connection.
        let webhook = "http://127.0.0.1:\(server.port)/notifications"
        var profile = ProfileBuilder(
            name: "silent",
            seed: 5,
            target: .init(webhookURL: webhook, requestTimeoutSeconds: 2)
        )
        profile.accounts = 200
        profile.schedule = [.constant(rate: 40, seconds: 4)]
        profile.settleSeconds = 0
        profile.settleMaxSeconds = 0
        try profile.write(into: work)
        let began = Date()
        let (code, output) = try PayStormRunner.exec([
            "run", work + "/profile.json5", "--quiet", "--pki", work + "/pki", "--reports", work + "/reports",
        ])
        let took = Date().timeIntervalSince(began)
        #expect(code != 70 && code != 69, "\(output)")
        // Schedule 4 s + timeout 2 s + the minting lead and start-up; the bug took 5× the schedule.
        #expect(took < 16, "the run took \(took) s")
        let data = try Data(contentsOf: URL(fileURLWithPath: work + "/reports/latest/summary.json"))
        let summary = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let latency = (summary["latency"] as? [[String: Any]]) ?? []
        let intended = latency.filter { $0["measure"] as? String == "intended" }
        #expect(!intended.isEmpty)
        for entry in intended {
            let max = ((entry["micros"] as? [String: Any])?["max"] as? Double) ?? 0
            #expect(max <= 2_600_000, "latency from the intended time exceeded the 2 s timeout: \(entry)")
        }
    }
}

/// Listens on 127.0.0.1:0, accepts every connection, reads nothing back and never answers.
final class SilentServer: @unchecked Sendable {
    // @unchecked: the descriptors are touched by the accept thread and by close(), which ends it.
    let port: UInt16
    private let listener: Int32
    private var accepted: [Int32] = []
    private let lock = NSLock()

    init() throws {
        let (listener, port) = try listenOnLoopback(backlog: 512)
        self.listener = listener
        self.port = port
        let fd = listener
        Thread.detachNewThread { [self] in
            while true {
                let client = accept(fd, nil, nil)
                if client < 0 { return }
                lock.lock()
                accepted.append(client)
                lock.unlock()
            }
        }
    }

    func close() {
        shutdown(listener, Int32(SHUT_RDWR))
        Glibc.close(listener)
        lock.lock()
        for fd in accepted { Glibc.close(fd) }
        accepted.removeAll()
        lock.unlock()
    }
}
