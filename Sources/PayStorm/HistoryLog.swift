import Chaos
import Foundation
import Load
import Simulation

/// `history.jsonl`: one line per send, result, probe and fault, streamed as the run goes so an
/// interrupted run still has it. Writes go through one buffered file owned by the engine's thread.
final class HistoryLog {
    private let handle: FileHandle?
    private var buffer: [UInt8] = []

    /// Opens the log at `path`, or makes a no-op log when `path` is nil.
    init(path: String?) throws {
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

    /// Appends one entry.
    func write(
        event: String,
        at t: Double,
        delivery: PlannedDelivery,
        result: LoadResult? = nil,
        detail: String? = nil
    ) {
        guard handle != nil else { return }
        var line = "{\"t\":\(String(format: "%.6f", t)),\"event\":\"\(event)\",\"delivery\":\(delivery.id)"
        line +=
            ",\"account\":\"\(delivery.action.appAccountToken)\",\"lifecycle\":\"\(delivery.action.lifecycle.rawValue)\""
        line += ",\"copy\":\"\(delivery.copy.rawValue)\",\"attempt\":\(delivery.attempt)"
        if let id = delivery.action.truth.transactionId { line += ",\"transactionId\":\"\(id)\"" }
        if let forgery = delivery.forgery { line += ",\"forgery\":\"\(forgery)\"" }
        if let network = delivery.network { line += ",\"network\":\"\(network.rawValue)\"" }
        if !delivery.faults.isEmpty && event != "result" {
            line +=
                ",\"faults\":[" + delivery.faults.map { "\"\(Self.escape($0.fault))\"" }.joined(separator: ",") + "]"
        }
        if let result {
            line += ",\"status\":\(result.status),\"latencyMicros\":\(result.latency.microseconds)"
            if let error = result.error { line += ",\"error\":\"\(error.rawValue)\"" }
        }
        if let detail { line += ",\"detail\":\"\(Self.escape(detail))\"" }
        line += "}\n"
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
