import AppStoreModel
import Chaos
import Foundation
import Load
import Profile
import Simulation
import Testing

@testable import PayStorm

/// The history's delivery lines, byte for byte, for a spread of deliveries: an answer's `send` and `result` lines
/// reuse what its `dispatch` line rendered, and say exactly what writing them from the delivery says.
struct HistoryLinesTests {
    static let start: Int64 = 1_800_000_000_000

    /// Webhook and device deliveries of a subscribing world, first attempts and follow-ups numbered from 2^43,
    /// forged and network-faulted copies, fault names that need escaping.
    static func spread() throws -> [PlannedDelivery] {
        let profile = try Profile.decode(Data(HistoryLogTests.subscriptions.utf8), file: "history.json5")
        let stream = ChaosStream(World(profile: profile, startMillis: start), profile: profile)
        let firsts = Array(stream.prefix(40))
        let webhook = try #require(firsts.first { Self.facts($0)?.payload.subtype != nil })
        let device = try #require(
            firsts.first {
                if case .device = $0.action.delivery { true } else { false }
            }
        )
        var retry = webhook
        retry.id = (1 << 43) + 7
        retry.copy = .retry
        retry.attempt = 3
        retry.network = .reset
        retry.faults = [AppliedFault(fault: "re\"order\\", detail: "x"), AppliedFault(fault: "reset", detail: "")]
        var redelivery = device
        redelivery.id = (1 << 43) + 123_456_789
        redelivery.copy = .redelivery
        redelivery.attempt = 1
        var duplicate = webhook
        duplicate.id = (1 << 43) + 9
        duplicate.copy = .afterSuccessDuplicate
        duplicate.faults = [AppliedFault(fault: "duplicate", detail: "")]
        var forged = device
        forged.copy = .forged
        forged.forgery = "wrong-key"
        forged.network = .lostResponse
        var timedOut = webhook
        timedOut.network = .timeout
        return [webhook, device, retry, redelivery, duplicate, forged, timedOut] + firsts.prefix(12)
    }

    static func facts(_ delivery: PlannedDelivery) -> NotificationFacts? {
        if case .notification(let facts) = delivery.action.delivery { facts } else { nil }
    }

    /// What names `delivery` in a line, written here field by field: before and after its `kind`.
    static func identity(_ delivery: PlannedDelivery) -> (head: String, tail: String) {
        let action = delivery.action
        var role = "marker"
        var tail = ""
        var original: String?
        var signed: Int64?
        switch action.delivery {
        case .notification(let facts):
            role = "webhook"
            tail += #","notificationType":"\#(facts.notificationType.rawValue)""#
            if let subtype = facts.payload.subtype { tail += #","subtype":"\#(subtype.rawValue)""# }
            original = facts.transaction?.originalTransactionId
            signed = facts.signedDate
        case .device(let device):
            role = "device"
            original = device.transaction.originalTransactionId
            signed = device.transaction.signedDate
        case .report:
            role = "report"
        case .marker:
            break
        }
        if let id = action.truth.transactionId { tail += #","transactionId":"\#(id)""# }
        if let original { tail += #","originalTransactionId":"\#(original)""# }
        if let signed { tail += #","signedAt":\#(String(format: "%.3f", Double(signed - start) / 1000))"# }
        if let forgery = delivery.forgery { tail += #","forgery":"\#(forgery)""# }
        if let network = delivery.network { tail += #","network":"\#(network.rawValue)""# }
        let head =
            #""role":"\#(role)","delivery":\#(delivery.id),"account":"\#(action.appAccountToken)","#
            + #""lifecycle":"\#(action.lifecycle.rawValue)","copy":"\#(delivery.copy.rawValue)","#
            + #""attempt":\#(delivery.attempt)"#
        return (head, tail)
    }

    static func faults(_ delivery: PlannedDelivery) -> String {
        guard !delivery.faults.isEmpty else { return "" }
        let names = delivery.faults.map {
            "\"" + $0.fault.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
                + "\""
        }
        return #","faults":["# + names.joined(separator: ",") + "]"
    }

    static func result(_ index: Int) -> LoadResult {
        var result = LoadResult(
            id: index,
            kind: "webhook",
            intended: .zero,
            sent: .zero,
            wireStart: .zero,
            received: .microseconds(1000 + index),
            status: index % 3 == 0 ? 0 : 200 + index,
            error: index % 3 == 0 ? .timeout : nil,
            detail: index % 3 == 0 ? "no answer\t\"x\"" : "ignored"
        )
        result.resent = index % 2 == 0
        return result
    }

    static func outcome(_ index: Int, sent: Bool) -> String {
        let result = result(index)
        var text = #","sent":\#(sent),"status":\#(result.status),"latencyMicros":\#(1000 + index)"#
        if result.error != nil { text += #","error":"timeout""# }
        if result.resent { text += #","resent":true"# }
        if result.error != nil { text += #","detail":"no answer\t\"x\"""# }
        return text
    }

    @Test func answerLinesReuseTheDispatchedIdentityAndEveryFieldIsWrittenAsBefore() throws {
        let deliveries = try Self.spread()
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("paystorm-historylines-\(UUID())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let log = try HistoryLog(directory: folder.path, capBytes: 512 << 20, startMillis: Self.start)
        var expected: [String] = []
        for (index, delivery) in deliveries.enumerated() {
            let (head, tail) = Self.identity(delivery)
            let kind = index % 2 == 0 ? "webhook" : "forged"
            let t = 1.5 + Double(index) / 7
            let sent = index % 5 != 4
            let identity = log.writeDispatch(at: t, delivery: delivery, kind: kind)
            if sent { log.write(event: "send", at: t + 0.25, identity: identity) }
            log.write(event: "result", at: t + 0.5, identity: identity, result: Self.result(index), sent: sent)
            // The same answer written from the delivery itself.
            if sent { log.write(event: "send", at: t + 0.25, delivery: delivery) }
            log.write(event: "result", at: t + 0.5, delivery: delivery, result: Self.result(index), sent: sent)
            log.write(event: "skip", at: t, delivery: delivery, detail: "no device endpoint")
            let opening = { (event: String, t: Double) in #"{"t":\#(String(format: "%.6f", t)),"event":"\#(event)","# }
            expected.append(opening("dispatch", t) + head + #","kind":"\#(kind)""# + tail + Self.faults(delivery) + "}")
            for _ in 0..<2 {
                if sent { expected.append(opening("send", t + 0.25) + head + tail + "}") }
                expected.append(opening("result", t + 0.5) + head + tail + Self.outcome(index, sent: sent) + "}")
            }
            expected.append(
                opening("skip", t) + head + tail + Self.faults(delivery) + #","detail":"no device endpoint"}"#
            )
        }
        log.write(event: "error", at: 9, delivery: deliveries[0], detail: "mint failed: \"bad\" key")
        expected.append(
            #"{"t":9.000000,"event":"error","# + Self.identity(deliveries[0]).head + Self.identity(deliveries[0]).tail
                + #","detail":"mint failed: \"bad\" key"}"#
        )
        log.writeShed(second: 4, role: "webhook", kind: "forged", count: 17, detail: "minting fell behind")
        expected.append(
            #"{"t":4,"event":"shed","role":"webhook","kind":"forged","count":17,"detail":"minting fell behind"}"#
        )
        log.close()
        let lines = try HistoryLogTests.lines(folder)
        #expect(lines.count == expected.count)
        for (line, want) in zip(lines, expected) { #expect(line == want) }
        let text = lines.joined(separator: "\n")
        let fields = [
            "t", "event", "role", "delivery", "account", "lifecycle", "copy", "attempt", "kind", "notificationType",
            "subtype", "transactionId", "originalTransactionId", "signedAt", "forgery", "network", "faults", "sent",
            "status", "latencyMicros", "error", "resent", "detail", "count",
        ]
        for field in fields { #expect(text.contains("\"\(field)\":"), "\(field)") }
        for value in [#""role":"device""#, #""copy":"retry""#, #""copy":"redelivery""#, #""delivery":8796093022215"#] {
            #expect(text.contains(value), "\(value)")
        }
    }

    @Test func noHistoryGivesAnEmptyIdentity() throws {
        let log = try HistoryLog(directory: nil, capBytes: 1 << 20, startMillis: Self.start)
        let identity = log.writeDispatch(at: 1, delivery: try Self.spread()[0], kind: "webhook")
        #expect(identity.bytes.isEmpty)
    }
}
