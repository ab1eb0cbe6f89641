internal import AppStoreModel
import Chaos
import Foundation
import Load
import Primitives
import Simulation

/// The run's history: one JSON object a line for every delivery, probe and fault of the run, streamed as
/// the run goes so an interrupted run still has it, in gzip chunks `history-000001.jsonl.gz`, ... under a
/// cap on their total size (the oldest chunks are deleted first, and the report says so). Lines are written
/// on the engine's thread into a reused buffer, without a `String` each, and compressed 64 KiB at a time on a
/// thread of their own (`BackgroundGzipLog`).
///
/// Every line has `t` (seconds since the start of the run), `event` and `role` (`webhook`, `device`,
/// `report`, `probe`, `api`, or `marker` for a lifecycle fact that sends nothing). Events:
///
/// - `dispatch`: the delivery was handed to the load engine at its intended time `t`, under `kind`
///   (`webhook`, `device`, `forged`, `network-fault`, `restart`); the engine may still miss it.
/// - `send`: the engine really sent it (written with the result; `t` is when it went on the wire).
/// - `result`: its outcome at `t`: `sent` (false when it never left: missed, refused, unsent), `status`,
///   `latencyMicros` from the intended time, `error` and its `detail` (libcurl's and the system's words), and
///   `resent: true` when the transport sent it a second time after a kept-alive connection closed unanswered
///   (the target may have read both copies).
/// - `happen`: a lifecycle fact that sends nothing (an Ask to Buy decline).
/// - `skip`: a delivery the run could not send (`detail` says why, such as no device endpoint).
/// - `error`: a delivery that could not be minted.
/// - `shed`: deliveries of one `role` and `kind` whose intended time fell in the second starting at `t`, shed
///   by minting (never signed, never sent: PayStorm's miss); `count` says how many, `detail` why. One line per
///   second and kind, not per delivery, so that shedding stays cheap under overload; the oracle still books
///   each one as missed by the harness.
///
/// Delivery lines also carry `delivery`, `account`, `lifecycle`, `copy`, `attempt`, the transaction's
/// `transactionId` and `originalTransactionId`, for notifications `notificationType` and `subtype`,
/// `signedAt` (the `signedDate` the signed payload carries, in seconds into the run like `t`, so a line
/// whose `t` is below it was sent early), and any `forgery`, `network` and `faults`. Probe lines carry
/// `account`; App Store Server API lines are described at `writeAPI`.
final class HistoryLog {
    private let chunks: BackgroundGzipLog?
    private var text = HistoryText()
    /// The text handed to the compressing thread at a time.
    static let flushBytes = 1 << 16
    /// The cap on disk of its chunks together.
    let capBytes: Int
    /// The wall-clock start of the run (ms since 1970), where `t` is 0.
    private let startMillis: Int64

    /// Text per chunk: 16 MiB of JSON lines compress to a few MB, so a chunk is a small share of any sensible
    /// cap; a small cap gets chunks of a quarter of it so that several stay on disk.
    static func chunkBytes(capBytes: Int) -> Int { max(1 << 16, min(16 << 20, capBytes / 4)) }

    /// Opens the log's first chunk in `directory`, or makes a no-op log when `directory` is nil;
    /// `startMillis` is the wall-clock instant where `t` is 0, `capBytes` the most its chunks take on disk.
    /// - Throws: `OutputFileError` naming the first chunk when it cannot be created.
    init(directory: String?, capBytes: Int, startMillis: Int64) throws(OutputFileError) {
        self.startMillis = startMillis
        self.capBytes = capBytes
        guard let directory else {
            chunks = nil
            return
        }
        chunks = try BackgroundGzipLog(
            directory: directory,
            baseName: "history",
            chunkBytes: Self.chunkBytes(capBytes: capBytes),
            capBytes: capBytes
        )
        text.bytes.reserveCapacity(Self.flushBytes + 4096)
    }

    deinit { close() }

    /// What the report says when the cap deleted chunks, or nil when it did not.
    var droppedNote: String? {
        guard let chunks, chunks.droppedChunks > 0 else { return nil }
        let megabytes = capBytes / (1 << 20)
        return "history: dropped \(chunks.droppedChunks) oldest chunks (\(chunks.droppedLines) events) "
            + "to stay under \(megabytes) MB"
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

    /// Appends one delivery entry. Written straight into the buffer, not through `String`s: the engine's thread
    /// writes two or three of these lines per delivery, tens of thousands a second at the ceiling. An answer's
    /// `send` and `result` after a `dispatch` go through `writeDispatch(at:delivery:kind:)` and
    /// `write(event:at:identity:result:sent:)` instead, which render the delivery's fields once.
    func write(
        event: String,
        at t: Double,
        delivery: PlannedDelivery,
        kind: String? = nil,
        result: LoadResult? = nil,
        sent: Bool? = nil,
        detail: String? = nil
    ) {
        guard chunks != nil else { return }
        text.open(event: event, at: t)
        text.putDelivery(
            delivery,
            kind: kind,
            writesFaults: event != "result" && event != "send",
            startMillis: startMillis
        )
        text.putOutcome(result: result, sent: sent, detail: detail)
        endLine()
    }

    /// Appends a delivery's `dispatch` line, as `write(event: "dispatch", ...)` does, and returns its identity
    /// for the `send` and `result` lines of its answer.
    func writeDispatch(at t: Double, delivery: PlannedDelivery, kind: String) -> HistoryIdentity {
        guard chunks != nil else { return HistoryIdentity() }
        text.open(event: "dispatch", at: t)
        let identity = text.putDispatch(delivery, kind: kind, startMillis: startMillis)
        endLine()
        return identity
    }

    /// Appends an answer's `send` or `result` line for the delivery whose `dispatch` line gave `identity`: the
    /// same bytes as `write(event:at:delivery:result:sent:)` for that delivery.
    func write(event: String, at t: Double, identity: HistoryIdentity, result: LoadResult? = nil, sent: Bool? = nil) {
        guard chunks != nil else { return }
        text.open(event: event, at: t)
        text.bytes.append(contentsOf: identity.bytes)
        text.putOutcome(result: result, sent: sent, detail: nil)
        endLine()
    }

    /// Ends a line, and hands the buffer over once it holds `flushBytes`.
    private func endLine() {
        text.put("}\n")
        if text.bytes.count >= Self.flushBytes { flush() }
    }

    /// Appends `value` in decimal: its digits are written backwards on the stack and appended at once.
    static func appendDecimal(_ value: UInt64, to buffer: inout [UInt8]) {
        // UInt64.max has 20 digits.
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var start = digits.count
            var rest = value
            repeat {
                start -= 1
                digits[start] = UInt8(ascii: "0") + UInt8(truncatingIfNeeded: rest % 10)
                rest /= 10
            } while rest > 0
            buffer.append(contentsOf: UnsafeBufferPointer(rebasing: digits[start...]))
        }
    }

    /// Appends what ``fixed(_:places:)`` returns, without making a `String`.
    static func appendFixed(_ value: Double, places: Int, to buffer: inout [UInt8]) {
        guard (0...6).contains(places), value.isFinite, abs(value) < 1e8 else {
            buffer.append(contentsOf: String(format: "%.\(places)f", value).utf8)
            return
        }
        let scale = scales[places]
        let units = UInt64((abs(value) * Double(scale)).rounded())
        if value < 0 && units > 0 { buffer.append(UInt8(ascii: "-")) }
        appendDecimal(units / scale, to: &buffer)
        guard places > 0 else { return }
        buffer.append(UInt8(ascii: "."))
        let fraction = units % scale
        var digits = 1
        var power: UInt64 = 10
        while power <= fraction && digits < places {
            digits += 1
            power *= 10
        }
        buffer.append(contentsOf: repeatElement(UInt8(ascii: "0"), count: places - digits))
        appendDecimal(fraction, to: &buffer)
    }

    private static let scales: [UInt64] = [1, 10, 100, 1_000, 10_000, 100_000, 1_000_000]

    /// Appends one line counting `count` shed deliveries of a role and kind in the second starting at `second`.
    func writeShed(second: Int, role: String, kind: String, count: Int, detail: String) {
        guard chunks != nil else { return }
        append(
            "{\"t\":\(second),\"event\":\"shed\",\"role\":\"\(role)\",\"kind\":\"\(kind)\",\"count\":\(count)"
                + ",\"detail\":\"\(JSONEscaping.escaped(detail))\"}\n"
        )
    }

    /// Appends one probe entry (a safety probe during the run).
    func writeProbe(event: String, at t: Double, account: String, result: LoadResult? = nil, sent: Bool? = nil) {
        guard chunks != nil else { return }
        text.open(event: event, at: t)
        text.put(",\"role\":\"probe\"")
        text.put(",\"account\":\"", escaping: account)
        text.putOutcome(result: result, sent: sent, detail: nil)
        endLine()
    }

    /// Appends one App Store Server API entry (role `api`): a request the backend made (event `call`, with
    /// `method`, `path`, `endpoint` and `status`), a fault the API injected (event `fault`, with `endpoint`, `id`
    /// and `fault`), or a notification it sent to the webhook (event `notification`, with `status` and `detail`).
    func writeAPI(event: String, at t: Double, fields: [(String, String)], status: Int? = nil) {
        guard chunks != nil else { return }
        var line = "{\"t\":\(String(format: "%.6f", t)),\"event\":\"\(event)\",\"role\":\"api\""
        for (name, value) in fields { line += ",\"\(name)\":\"\(JSONEscaping.escaped(value))\"" }
        if let status { line += ",\"status\":\(status)" }
        append(line + "}\n")
    }

    private func append(_ line: String) {
        text.put(utf8: line)
        if text.bytes.count >= Self.flushBytes { flush() }
    }

    /// Hands what is buffered to the compressing thread (it is on disk once `close()` returns).
    func flush() {
        guard let chunks, !text.bytes.isEmpty else { return }
        chunks.write(&text.bytes)
        // The first buffers handed over come back empty; later ones with the capacity a finished one had.
        if text.bytes.capacity < Self.flushBytes { text.bytes.reserveCapacity(Self.flushBytes + 4096) }
    }

    /// Flushes, and returns once everything written is compressed and the last chunk closed.
    func close() {
        flush()
        chunks?.close()
    }

    /// `value` with `places` decimals, as `String(format: "%.Nf")` writes it, without Foundation's formatter:
    /// every history line has one or two, and under overload the engine's thread writes tens of thousands a
    /// second.
    static func fixed(_ value: Double, places: Int) -> String {
        guard (0...6).contains(places), value.isFinite, abs(value) < 1e8 else {
            return String(format: "%.\(places)f", value)
        }
        let scale = [1, 10, 100, 1_000, 10_000, 100_000, 1_000_000][places]
        let scaled = (abs(value) * Double(scale)).rounded()
        let units = Int64(scaled)
        let whole = units / Int64(scale)
        var text = (value < 0 && units > 0 ? "-" : "") + String(whole)
        guard places > 0 else { return text }
        let fraction = String(units % Int64(scale))
        text += "." + String(repeating: "0", count: places - fraction.count) + fraction
        return text
    }
}
