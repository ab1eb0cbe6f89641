import Chaos
import Foundation
import Load
import Simulation

/// `history.jsonl`: one JSON object a line for every delivery, probe and fault of the run, streamed as
/// the run goes so an interrupted run still has it. Writes go through one buffered file owned by the
/// engine's thread.
///
/// Every line has `t` (seconds since the start of the run), `event` and `role` (`webhook`, `device`,
/// `report`, `probe`, or `marker` for a lifecycle fact that sends nothing). Events:
///
/// - `dispatch`: the delivery was handed to the load engine at its intended time `t`, under `kind`
///   (`webhook`, `device`, `forged`, `network-fault`, `restart`); the engine may still miss it.
/// - `send`: the engine really sent it (written with the result; `t` is when it went on the wire).
/// - `result`: its outcome at `t`: `sent` (false when it never left: missed, refused), `status`,
///   `latencyMicros` from the intended time, `error`.
/// - `happen`: a lifecycle fact that sends nothing (an Ask to Buy decline).
/// - `skip`: a delivery the run could not send (`detail` says why, such as no device endpoint).
/// - `error`: a delivery that could not be minted.
///
/// Delivery lines also carry `delivery`, `account`, `lifecycle`, `copy`, `attempt`, the transaction's
/// `transactionId` and `originalTransactionId`, for notifications `notificationType` and `subtype`,
/// `signedAt` (the `signedDate` the signed payload carries, in seconds into the run like `t`, so a line
/// whose `t` is below it was sent early), and any `forgery`, `network` and `faults`. Probe lines carry
/// `account`.
final class HistoryLog {
    private let handle: FileHandle?
    private var buffer: [UInt8] = []
    /// The wall-clock start of the run (ms since 1970), where `t` is 0.
    private let startMillis: Int64

    /// Opens the log at `path`, or makes a no-op log when `path` is nil; `startMillis` is the wall-clock
    /// instant where `t` is 0.
    init(path: String?, startMillis: Int64) throws {
        self.startMillis = startMillis
        guard let path else {
            handle = nil
            return
        }
        guard FileManager.default.createFile(atPath: path, contents: nil) else {
            throw RunError.cannotWrite("cannot write \(path)")
        }
        handle = FileHandle(forWritingAtPath: path)
        buffer.reserveCapacity(1 << 16)
    }

    /// The role a delivery plays in the target contract.
    static func role(of delivery: PlannedDelivery) -> String {
        switch delivery.action.delivery {
        case .notification: "webhook"
        case .device: "device"
        case .report: "report"
        case .marker: "marker"
        }
    }

    /// Appends one delivery entry.
    func write(
        event: String,
        at t: Double,
        delivery: PlannedDelivery,
        kind: String? = nil,
        result: LoadResult? = nil,
        sent: Bool? = nil,
        detail: String? = nil
    ) {
        guard handle != nil else { return }
        var line = "{\"t\":\(String(format: "%.6f", t)),\"event\":\"\(event)\",\"role\":\"\(Self.role(of: delivery))\""
        line += ",\"delivery\":\(delivery.id)"
        line +=
            ",\"account\":\"\(delivery.action.appAccountToken)\",\"lifecycle\":\"\(delivery.action.lifecycle.rawValue)\""
        line += ",\"copy\":\"\(delivery.copy.rawValue)\",\"attempt\":\(delivery.attempt)"
        if let kind { line += ",\"kind\":\"\(kind)\"" }
        if case .notification(let facts) = delivery.action.delivery {
            line += ",\"notificationType\":\"\(Self.escape(facts.notificationType))\""
            if let subtype = facts.subtype { line += ",\"subtype\":\"\(Self.escape(subtype))\"" }
        }
        if let id = delivery.action.truth.transactionId { line += ",\"transactionId\":\"\(id)\"" }
        if let original = delivery.action.transaction?.originalTransactionId {
            line += ",\"originalTransactionId\":\"\(original)\""
        }
        if let signed = delivery.signedDate {
            line += ",\"signedAt\":" + String(format: "%.3f", Double(signed - startMillis) / 1000)
        }
        if let forgery = delivery.forgery { line += ",\"forgery\":\"\(forgery)\"" }
        if let network = delivery.network { line += ",\"network\":\"\(network.rawValue)\"" }
        if !delivery.faults.isEmpty && event != "result" && event != "send" {
            line +=
                ",\"faults\":[" + delivery.faults.map { "\"\(Self.escape($0.fault))\"" }.joined(separator: ",") + "]"
        }
        line += Self.outcomeFields(result: result, sent: sent, detail: detail)
        append(line + "}\n")
    }

    /// Appends one probe entry (a safety probe during the run).
    func writeProbe(event: String, at t: Double, account: String, result: LoadResult? = nil, sent: Bool? = nil) {
        guard handle != nil else { return }
        var line = "{\"t\":\(String(format: "%.6f", t)),\"event\":\"\(event)\",\"role\":\"probe\""
        line += ",\"account\":\"\(Self.escape(account))\""
        line += Self.outcomeFields(result: result, sent: sent, detail: nil)
        append(line + "}\n")
    }

    private static func outcomeFields(result: LoadResult?, sent: Bool?, detail: String?) -> String {
        var fields = ""
        if let sent { fields += ",\"sent\":\(sent)" }
        if let result {
            fields += ",\"status\":\(result.status),\"latencyMicros\":\(result.latency.microseconds)"
            if let error = result.error { fields += ",\"error\":\"\(error.rawValue)\"" }
        }
        if let detail { fields += ",\"detail\":\"\(escape(detail))\"" }
        return fields
    }

    private func append(_ line: String) {
        buffer.append(contentsOf: line.utf8)
        if buffer.count >= 1 << 16 { flush() }
    }

    /// Writes what is buffered.
    func flush() {
        guard let handle, !buffer.isEmpty else { return }
        handle.write(Data(buffer))
        buffer.removeAll(keepingCapacity: true)
    }

    /// Flushes and closes the file.
    func close() {
        flush()
        try? handle?.close()
    }

    private static func escape(_ text: String) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            default:
                if scalar.value < 0x20 {
                    out += String(format: "\\u%04x", scalar.value)
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out
    }
}
