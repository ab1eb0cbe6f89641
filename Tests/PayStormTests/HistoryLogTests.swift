import AppStoreModel
import Chaos
import Foundation
import Load
import Profile
import Simulation
import Testing

@testable import PayStorm

/// The run's history under its size cap: what the report is told when the oldest chunks go.
struct HistoryLogTests {
    @Test func capDropsTheOldestChunksAndSaysHowManyEventsWent() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("paystorm-historylog-\(UUID())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let log = try HistoryLog(directory: folder.path, capBytes: 1 << 20, startMillis: 0)
        // Random account tokens compress to about half: 4 MB of lines are well over a 1 MiB cap.
        let lines = 40_000
        for index in 0..<lines {
            log.writeProbe(event: "result", at: Double(index) / 1000, account: UUID().uuidString + UUID().uuidString)
        }
        log.close()
        let note = try #require(log.droppedNote)
        let match = try #require(
            note.wholeMatch(of: #/history: dropped (\d+) oldest chunks \((\d+) events\) to stay under 1 MB/#),
            "\(note)"
        )
        let chunks = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".gz") }
        let onDisk = try chunks.reduce(0) {
            $0
                + ((try FileManager.default.attributesOfItem(atPath: folder.appendingPathComponent($1).path)[.size]
                    as? Int) ?? 0)
        }
        #expect(onDisk <= 1 << 20)
        #expect(Int(match.output.1)! > 0)
        #expect(!chunks.contains("history-000001.jsonl.gz"))
        #expect(!chunks.isEmpty && Int(match.output.2)! < lines)
    }

    @Test func aHistoryUnderItsCapHasNoNote() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("paystorm-historylog-\(UUID())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let log = try HistoryLog(directory: folder.path, capBytes: 512 << 20, startMillis: 0)
        log.writeProbe(event: "send", at: 0.5, account: "A")
        log.close()
        #expect(log.droppedNote == nil)
        #expect(FileManager.default.fileExists(atPath: folder.appendingPathComponent("history-000001.jsonl.gz").path))
    }

    /// The detail is escaped as every JSON writer of PayStorm escapes (`\t`, not `\u0009`).
    @Test func aFailedResultCarriesItsDetailAndAResentOneSaysSo() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("paystorm-historylog-\(UUID())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let log = try HistoryLog(directory: folder.path, capBytes: 512 << 20, startMillis: 0)
        func result(_ error: LoadErrorClass?, _ detail: String) -> LoadResult {
            LoadResult(
                id: 1,
                kind: "probe",
                intended: .zero,
                sent: .zero,
                wireStart: .zero,
                received: .milliseconds(3),
                status: error == nil ? 200 : 0,
                error: error,
                detail: detail
            )
        }
        log.writeProbe(event: "result", at: 1, account: "A", result: result(.reset, "the retry failed:\t\"refused\""))
        log.writeProbe(event: "result", at: 2, account: "A", result: result(nil, "ignored on success"))
        var resent = result(nil, "")
        resent.resent = true
        log.writeProbe(event: "result", at: 3, account: "A", result: resent)
        log.close()
        let lines = try Self.lines(folder)
        #expect(lines.count == 3)
        #expect(lines.first?.hasSuffix(#""error":"reset","detail":"the retry failed:\t\"refused\""}"#) == true)
        #expect(lines[1].contains("detail") == false && lines[1].contains("resent") == false)
        #expect(lines.last?.hasSuffix(#""status":200,"latencyMicros":3000,"resent":true}"#) == true)
    }

    static let subscriptions = """
        {
          name: "history", seed: 9,
          target: { webhookURL: "http://127.0.0.1:1/n", deviceURL: "http://127.0.0.1:1/t" },
          catalog: {
            groups: [{ id: "g" }],
            products: [{ id: "gold", type: "autoRenewable", group: "g", level: 1, priceMilli: 990, periodSeconds: 20 }],
          },
          population: { accounts: 50 },
          actionMix: { subscribe: 1 },
          schedule: [{ kind: "constant", rate: 20, seconds: 2 }],
        }
        """

    /// A delivery's lines, written into the buffer without a `String` each, are the history's JSON as its readers
    /// (replay, witnesses, merge) know it: every field in its order, strings escaped, times as `%.6f` and `%.3f`.
    @Test func deliveryLinesCarryEveryFieldInOrderEscaped() throws {
        let profile = try Profile.decode(Data(Self.subscriptions.utf8), file: "history.json5")
        let start: Int64 = 1_800_000_000_000
        var delivery = try #require(
            ChaosStream(World(profile: profile, startMillis: start), profile: profile).first {
                guard case .notification(let facts) = $0.action.delivery else { return false }
                return facts.payload.subtype != nil && $0.action.truth.transactionId != nil
            }
        )
        delivery.forgery = "wrong-key"
        delivery.network = .timeout
        delivery.faults = [AppliedFault(fault: "re\"order", detail: ""), AppliedFault(fault: "duplicate", detail: "")]
        guard case .notification(let facts) = delivery.action.delivery else { return }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("paystorm-historylog-\(UUID())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let log = try HistoryLog(directory: folder.path, capBytes: 512 << 20, startMillis: start)
        log.write(event: "dispatch", at: 1.5, delivery: delivery, kind: "forged")
        var result = LoadResult(
            id: 1,
            kind: "forged",
            intended: .zero,
            sent: .zero,
            wireStart: .zero,
            received: .microseconds(2500),
            status: 0,
            error: .timeout,
            detail: "no answer\t\"x\""
        )
        result.resent = true
        log.write(event: "result", at: 1.75, delivery: delivery, result: result, sent: false)
        log.close()
        let action = delivery.action
        let common =
            #""role":"webhook","delivery":\#(delivery.id),"account":"\#(action.appAccountToken)","#
            + #""lifecycle":"\#(action.lifecycle.rawValue)","copy":"original","attempt":0"#
        let payload =
            #","notificationType":"\#(facts.notificationType.rawValue)","subtype":"\#(facts.payload.subtype!.rawValue)""#
            + #","transactionId":"\#(action.truth.transactionId!)""#
            + #","originalTransactionId":"\#(facts.transaction!.originalTransactionId)""#
            + #","signedAt":\#(String(format: "%.3f", Double(facts.signedDate - start) / 1000))"#
            + #","forgery":"wrong-key","network":"timeout""#
        #expect(
            try Self.lines(folder) == [
                #"{"t":1.500000,"event":"dispatch","# + common + #","kind":"forged""# + payload
                    + #","faults":["re\"order","duplicate"]}"#,
                #"{"t":1.750000,"event":"result","# + common + payload
                    + #","sent":false,"status":0,"latencyMicros":2500,"error":"timeout","resent":true"#
                    + #","detail":"no answer\t\"x\""}"#,
            ]
        )
    }

    /// The lines of a history folder's first chunk.
    static func lines(_ folder: URL) throws -> [String] {
        let gzip = Process()
        gzip.executableURL = URL(fileURLWithPath: "/bin/gzip")
        gzip.arguments = ["-dc", folder.appendingPathComponent("history-000001.jsonl.gz").path]
        let pipe = Pipe()
        gzip.standardOutput = pipe
        try gzip.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        gzip.waitUntilExit()
        return String(decoding: data, as: UTF8.self).split(separator: "\n").map(String.init)
    }

    @Test(arguments: [0, 0.5, 1.25, 12.3456789, 0.000_000_4, 0.000_000_6, 3_599.999_999_7, 86_400.1, -2.5, -0.001_6])
    func timesAreWrittenAsFormatWritesThem(value: Double) {
        #expect(HistoryLog.fixed(value, places: 6) == String(format: "%.6f", value))
        #expect(HistoryLog.fixed(value, places: 3) == String(format: "%.3f", value))
        for places in 0...6 {
            var bytes: [UInt8] = []
            HistoryLog.appendFixed(value, places: places, to: &bytes)
            #expect(String(decoding: bytes, as: UTF8.self) == HistoryLog.fixed(value, places: places))
        }
    }

    @Test(arguments: [0, 7, 10, 99, 1_000_000_000_000_000_042, UInt64.max])
    func integersAreWrittenInDecimal(value: UInt64) {
        var bytes = Array("x".utf8)
        HistoryLog.appendDecimal(value, to: &bytes)
        #expect(String(decoding: bytes, as: UTF8.self) == "x\(value)")
    }
}
